// RUN: braid-opt %s -split-input-file -verify-diagnostics --braid-partition

// expected-error @+1 {{braid-partition needs a braid.cluster; run braid-plan-sharding first}}
module {
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  // expected-error @+1 {{table 't' has no placement; run braid-plan-sharding first}}
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
  func.func @f(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<5xi64> {braid.input = "t.offsets"}) -> tensor<4x4xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x4xf32>
    return %e : tensor<4x4xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 1>
  func.func @f(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<5xi64> {braid.input = "t.offsets"}, %w: tensor<?xf32> {braid.input = "t.weights"}) -> tensor<4x4xf32> {
    // expected-error @+1 {{braid-partition does not shard per-sample weights yet; place table 't' data_parallel}}
    %e = braid.embedding_bag @t(%i, %o, weights %w) sum : (tensor<?xi64>, tensor<5xi64>, tensor<?xf32>) -> tensor<4x4xf32>
    return %e : tensor<4x4xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 1>
  func.func @f(%i: tensor<?xi64>, %o: tensor<5xi64>) -> tensor<4x4xf32> {
    // expected-error @+1 {{braid-partition needs the bags' indices and offsets to be braid.input arguments}}
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x4xf32>
    return %e : tensor<4x4xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @f(%x: tensor<4x8xf32> {braid.input = "dense"}) -> tensor<4x8xf32> {
    // expected-error @+1 {{braid-partition does not know how to split 'braid.all_reduce' over the batch}}
    %r = braid.all_reduce sum %x : tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @f(%x: tensor<4x8xf32> {braid.input = "dense"}, %w: tensor<4x8xf32> {braid.input = "w"}, %b: tensor<4xf32> {braid.param = "b"}) -> tensor<4x4xf32> {
    // expected-error @+1 {{braid-partition needs the weights of braid.linear to be parameters}}
    %r = braid.linear %x, %w, %b relu : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<4x4xf32>
    return %r : tensor<4x4xf32>
  }
}

// -----

// A replicated table is looked up on every rank: placed on only some of
// them, the ranks without it would read a table they do not hold.
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  // expected-error @+1 {{table 't' is data_parallel on ranks that are not all 2 of the program: every rank looks it up}}
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0]>
  func.func @f(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<5xi64> {braid.input = "t.offsets"}) -> tensor<4x4xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x4xf32>
    return %e : tensor<4x4xf32>
  }
}
