// RUN: braid-opt %s --convert-braid-to-cpu --split-input-file -verify-diagnostics

func.func @collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{the CPU backend needs explicit groups or the module's braid.cluster}}
  // expected-error @+1 {{failed to legalize operation 'braid.all_reduce'}}
  %r = braid.all_reduce sum %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @collective_min(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{the CPU backend lowers sum and max all_reduce}}
  // expected-error @+1 {{failed to legalize operation 'braid.all_reduce'}}
  %r = braid.all_reduce min %x groups [[0, 1]] : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @gather_dim(%x: tensor<4x2xf32>) -> tensor<4x4xf32> {
  // expected-error @+2 {{the CPU backend lowers all_gather along dimension 0}}
  // expected-error @+1 {{failed to legalize operation 'braid.all_gather'}}
  %r = braid.all_gather %x dim = 1 groups [[0, 1]] : tensor<4x2xf32> -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

func.func @linear_grad_f16(%x: tensor<4x3xf16>, %w: tensor<2x3xf32>, %y: tensor<4x2xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{the CPU backend lowers linear_grad of f32 layers}}
  // expected-error @+1 {{failed to legalize operation 'braid.linear_grad'}}
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %y relu : (tensor<4x3xf16>, tensor<2x3xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>)
  return %dx : tensor<4x3xf32>
}

// -----

func.func @dense_update_f16(%w: tensor<2x3xf16>, %g: tensor<2x3xf32>, %t: tensor<i64>) -> tensor<2x3xf16> {
  // expected-error @+2 {{the dense update kernel updates static f32 parameters}}
  // expected-error @+1 {{failed to legalize operation 'braid.dense_update'}}
  %w2 = braid.dense_update %w, %g step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf16>, tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf16>
  return %w2 : tensor<2x3xf16>
}

// -----

func.func @permute(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{the CPU backend does not lower 'braid.permute' yet}}
  %p = braid.permute %x pairs [[0, 1], [1, 0]] : tensor<8xf32>
  return %p : tensor<8xf32>
}

// -----

// split_sizes is indexed by MPI rank: an all_to_all over other groups (here
// rank 1 listed first) was lowered as if it had none.
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @all_to_all_groups(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
    // expected-error @+2 {{the CPU backend lowers all_to_all over every rank in order (no groups, or one group [0, ..., 1])}}
    // expected-error @+1 {{failed to legalize operation 'braid.all_to_all'}}
    %r = braid.all_to_all %x split_dim = 0 concat_dim = 0 split_sizes = [1, 2, 2, 1] groups [[1, 0]] : tensor<?x2xf32> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

// The runtime has no started i32 all_to_all and no i32 reduce_scatter: the
// lowering called them, and the artifact failed to load on an undefined
// symbol.
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @started_i32(%n: tensor<4xi32>) -> tensor<?xi32> {
    // expected-error @+2 {{the CPU backend starts all_to_alls of f32, f64 and i64 elements, not i32}}
    // expected-error @+1 {{failed to legalize operation 'braid.all_to_all_start'}}
    %u = braid.all_to_all_start %n split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi32> -> !braid.token<tensor<?xi32>>
    %l = braid.wait %u : !braid.token<tensor<?xi32>>
    return %l : tensor<?xi32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @reduce_scatter_i32(%n: tensor<4x2xi32>) -> tensor<2x2xi32> {
    // expected-error @+2 {{the CPU backend reduce-scatters f32 and f64}}
    // expected-error @+1 {{failed to legalize operation 'braid.reduce_scatter'}}
    %l = braid.reduce_scatter sum %n dim = 0 groups [[0, 1]] : tensor<4x2xi32> -> tensor<2x2xi32>
    return %l : tensor<2x2xi32>
  }
}
