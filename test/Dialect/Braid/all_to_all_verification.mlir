// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @divide(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{input size 6 along split_dim 0 does not divide into 4 equal chunks; give split_sizes for an uneven exchange}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 0 groups [[0, 1, 2, 3]] : tensor<6x4xf32> -> tensor<6x4xf32>
  return
}

// -----

func.func @even_result(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result dimension 1 should be 16 for an even all_to_all over groups of 4, got 4}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 1 groups [[0, 1, 2, 3]] : tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @split_dim(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{split_dim 2 is not a dimension of the rank-2 input}}
  %0 = braid.all_to_all %x split_dim = 2 concat_dim = 0 : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @concat_dim(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{concat_dim 3 is not a dimension of the rank-2 input}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 3 : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @other(%x: tensor<8x4x2xf32>) {
  // expected-error @+1 {{result dimension 2 is 3 but the input's is 2}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 1 : tensor<8x4x2xf32> -> tensor<8x4x3xf32>
  return
}

// -----

func.func @sizes_groups(%x: tensor<?xi64>) {
  // expected-error @+1 {{split_sizes need explicit groups}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 0 split_sizes = [1, 2, 3, 4] : tensor<?xi64> -> tensor<?xi64>
  return
}

// -----

func.func @sizes_dims(%x: tensor<4x?xi64>) {
  // expected-error @+1 {{split_sizes need split_dim and concat_dim to be equal, got 1 and 0}}
  %0 = braid.all_to_all %x split_dim = 1 concat_dim = 0 split_sizes = [1, 2, 3, 4] groups [[0, 1]] : tensor<4x?xi64> -> tensor<?x?xi64>
  return
}

// -----

func.func @sizes_count(%x: tensor<?xi64>) {
  // expected-error @+1 {{split_sizes must have 4 entries (groups of 2), got 3}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 0 split_sizes = [1, 2, 3] groups [[0, 1]] : tensor<?xi64> -> tensor<?xi64>
  return
}

// -----

func.func @sizes_negative(%x: tensor<?xi64>) {
  // expected-error @+1 {{split_sizes must not be negative, got -3}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 0 split_sizes = [1, 2, -3, 4] groups [[0, 1]] : tensor<?xi64> -> tensor<?xi64>
  return
}

// -----

func.func @sizes_rows(%x: tensor<128xi64>) {
  // expected-error @+1 {{all_to_all split sizes of group position 0 sum to 96 but the operand has 128 along dim 0}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 0 split_sizes = [64, 32, 64, 64] groups [[0, 1]] : tensor<128xi64> -> tensor<?xi64>
  return
}

// -----

func.func @sizes_cols(%x: tensor<?xi64>) {
  // expected-error @+1 {{all_to_all group position 0 receives 4 but the result has 5 along dim 0}}
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 0 split_sizes = [1, 2, 3, 4] groups [[0, 1]] : tensor<?xi64> -> tensor<5xi64>
  return
}
