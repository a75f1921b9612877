// RUN: braid-opt %s --braid-lower-compute --split-input-file -verify-diagnostics

func.func @collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the CPU backend does not lower 'braid.all_reduce' yet}}
  %r = braid.all_reduce sum %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

braid.table @t : tensor<40x4xf32> pooling_factor = 2.0
func.func @weights(%idx: tensor<?xi64>, %off: tensor<?xi64>, %w: tensor<?xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{the CPU backend does not lower per-sample weights yet}}
  %e = braid.embedding_bag @t(%idx, %off, weights %w) sum : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>) -> tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}
