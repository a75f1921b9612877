// RUN: braid-opt %s -split-input-file --braid-differentiate -verify-diagnostics
// braid-differentiate's errors: one case per rule.

// expected-error @+1 {{braid-differentiate needs the module's 'braid.optimizer'}}
module {
  func.func @forward(%x: tensor<2x3xf32>, %w: tensor<1x3xf32> {braid.param = "w"}, %b: tensor<1xf32> {braid.param = "b"}) -> tensor<2x1xf32> {
    %p = braid.linear %x, %w, %b sigmoid : tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xf32> -> tensor<2x1xf32>
    return %p : tensor<2x1xf32>
  }
}

// -----

// expected-error @+1 {{braid-differentiate needs a func.func @forward}}
module attributes {braid.optimizer = {dense = {lr = 1.0e-01 : f64, type = "sgd"}, embedding = {lr = 1.0e-01 : f64, type = "sgd"}}} {
}

// -----

module attributes {braid.optimizer = {dense = {lr = 1.0e-01 : f64, type = "sgd"}, embedding = {lr = 1.0e-01 : f64, type = "sgd"}}} {
  // expected-error @+1 {{training needs a @forward that returns one f32 braid.linear with a sigmoid and one column}}
  func.func @forward(%x: tensor<2x3xf32>, %w: tensor<1x3xf32> {braid.param = "w"}, %b: tensor<1xf32> {braid.param = "b"}) -> tensor<2x1xf32> {
    %p = braid.linear %x, %w, %b relu : tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xf32> -> tensor<2x1xf32>
    return %p : tensor<2x1xf32>
  }
}

// -----

module attributes {braid.optimizer = {dense = {lr = 1.0e-01 : f64, type = "sgd"}, embedding = {lr = 1.0e-01 : f64, type = "sgd"}}} {
  // expected-error @+1 {{a global program needs a static batch to scale its loss}}
  func.func @forward(%x: tensor<?x3xf32>, %w: tensor<1x3xf32> {braid.param = "w"}, %b: tensor<1xf32> {braid.param = "b"}) -> tensor<?x1xf32> {
    %p = braid.linear %x, %w, %b sigmoid : tensor<?x3xf32>, tensor<1x3xf32>, tensor<1xf32> -> tensor<?x1xf32>
    return %p : tensor<?x1xf32>
  }
}

// -----

// expected-error @+1 {{the module already has a @train_step}}
module attributes {braid.optimizer = {dense = {lr = 1.0e-01 : f64, type = "sgd"}, embedding = {lr = 1.0e-01 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<2x3xf32>, %w: tensor<1x3xf32> {braid.param = "w"}, %b: tensor<1xf32> {braid.param = "b"}) -> tensor<2x1xf32> {
    %p = braid.linear %x, %w, %b sigmoid : tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xf32> -> tensor<2x1xf32>
    return %p : tensor<2x1xf32>
  }
  func.func @train_step() { return }
}

// -----

module attributes {braid.optimizer = {dense = {lr = 1.0e-01 : f64, type = "sgd"}, embedding = {lr = 1.0e-01 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<2x3xf32>, %w: tensor<1x3xf32> {braid.param = "w"}, %b: tensor<1xf32> {braid.param = "b"}) -> tensor<2x1xf32> {
    // expected-error @+1 {{braid-differentiate: 'arith.divf' has no gradient rule}}
    %y = arith.divf %x, %x : tensor<2x3xf32>
    %p = braid.linear %y, %w, %b sigmoid : tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xf32> -> tensor<2x1xf32>
    return %p : tensor<2x1xf32>
  }
}

// -----

module attributes {braid.optimizer = {dense = {lr = 1.0e-01 : f64, type = "sgd"}, embedding = {lr = 1.0e-01 : f64, type = "sgd"}}} {
  braid.table @t : tensor<10x3xf32> pooling_factor = 1.0
  func.func @forward(%i: tensor<?xi64>, %o: tensor<3xi64>, %s: tensor<?xf32>, %w: tensor<1x3xf32> {braid.param = "w"}, %b: tensor<1xf32> {braid.param = "b"}) -> tensor<2x1xf32> {
    // expected-error @+1 {{has no gradient rule with per-sample weights yet}}
    %e = braid.embedding_bag @t(%i, %o, weights %s) sum : (tensor<?xi64>, tensor<3xi64>, tensor<?xf32>) -> tensor<2x3xf32>
    %p = braid.linear %e, %w, %b sigmoid : tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xf32> -> tensor<2x1xf32>
    return %p : tensor<2x1xf32>
  }
}

// -----

module attributes {braid.batch_split = array<i64: 1, 1>, braid.optimizer = {dense = {lr = 1.0e-01 : f64, type = "sgd"}, embedding = {lr = 1.0e-01 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<?x3xf32>, %w: tensor<1x3xf32> {braid.param = "w"}, %b: tensor<1xf32> {braid.param = "b"}) -> tensor<?x1xf32> {
    // expected-error @+1 {{braid-differentiate runs before braid-async-exchanges}}
    %t = braid.all_reduce_start sum %x groups [[0, 1]] : tensor<?x3xf32> -> !braid.token<tensor<?x3xf32>>
    %y = braid.wait %t : !braid.token<tensor<?x3xf32>>
    %p = braid.linear %y, %w, %b sigmoid : tensor<?x3xf32>, tensor<1x3xf32>, tensor<1xf32> -> tensor<?x1xf32>
    return %p : tensor<?x1xf32>
  }
}
