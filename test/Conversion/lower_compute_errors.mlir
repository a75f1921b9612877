// RUN: braid-opt %s --convert-braid-to-cpu --split-input-file -verify-diagnostics

func.func @collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the CPU backend does not lower 'braid.all_reduce' yet}}
  %r = braid.all_reduce sum %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @permute(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{the CPU backend does not lower 'braid.permute' yet}}
  %p = braid.permute %x pairs [[0, 1], [1, 0]] : tensor<8xf32>
  return %p : tensor<8xf32>
}
