// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dim 2 is not a dimension of the rank-2 input}}
  %0 = braid.all_gather %x dim = 2 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @size(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{gathering 4 along dim 0 over groups of 2 gives 8, but the result has 12}}
  %0 = braid.all_gather %x dim = 0 groups [[0, 1]] : tensor<4x8xf32> -> tensor<12x8xf32>
  return
}

// -----

func.func @other(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result dimension 1 is 4 but the input's is 8}}
  %0 = braid.all_gather %x dim = 0 groups [[0, 1]] : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result has rank 1 but the input has rank 2}}
  %0 = braid.all_gather %x dim = 0 : tensor<4x8xf32> -> tensor<32xf32>
  return
}

// -----

func.func @start(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{gathering 4 along dim 0 over groups of 4 gives 16, but the result has 8}}
  %0 = braid.all_gather_start %x dim = 0 groups [[0, 1, 2, 3]] : tensor<4x8xf32> -> !braid.token<tensor<8x8xf32>>
  return
}
