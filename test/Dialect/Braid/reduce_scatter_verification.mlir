// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @divide(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{scattering 6 along dim 0 over groups of 4 needs the input to be 4 times the result's 1}}
  %0 = braid.reduce_scatter sum %x dim = 0 groups [[0, 1, 2, 3]] : tensor<6x4xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @size(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{scattering 8 along dim 0 over groups of 2 needs the input to be 2 times the result's 8}}
  %0 = braid.reduce_scatter sum %x dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @dim(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{dim -1 is not a dimension of the rank-2 input}}
  %0 = braid.reduce_scatter sum %x dim = -1 : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}
