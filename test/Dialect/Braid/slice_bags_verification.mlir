// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @negative_start(%idx: tensor<?xi64>, %off: tensor<?xi64>) {
  // expected-error @+1 {{start must not be negative, got -1}}
  %i, %o = braid.slice_bags %idx, %off bags [-1, 4] : (tensor<?xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return
}

// -----

func.func @no_bags(%idx: tensor<?xi64>, %off: tensor<?xi64>) {
  // expected-error @+1 {{count must be positive, got 0}}
  %i, %o = braid.slice_bags %idx, %off bags [0, 0] : (tensor<?xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return
}

// -----

func.func @static_offsets(%idx: tensor<?xi64>, %off: tensor<9xi64>) {
  // expected-error @+1 {{result offsets must have a dynamic size: how many a range of bags holds depends on the batch}}
  %i, %o = braid.slice_bags %idx, %off bags [0, 4] : (tensor<?xi64>, tensor<9xi64>) -> (tensor<?xi64>, tensor<5xi64>)
  return
}

// -----

func.func @element_type(%idx: tensor<?xi32>, %off: tensor<?xi64>) {
  // expected-error @+1 {{result indices have element type 'i64', not the operand's 'i32'}}
  %i, %o = braid.slice_bags %idx, %off bags [0, 4] : (tensor<?xi32>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return
}

// -----

func.func @chunk_not_an_exchange(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'braid.chunk' must be a non-negative i64 on a braid.all_to_all or braid.all_to_all_start}}
  %r = arith.negf %x {braid.chunk = 0 : i64} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @negative_chunk(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'braid.chunk' must be a non-negative i64 on a braid.all_to_all or braid.all_to_all_start}}
  %r = braid.all_to_all %x split_dim = 0 concat_dim = 0 {braid.chunk = -1 : i64} : tensor<4x2xf32> -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

func.func @range_overflows(%idx: tensor<?xi64>, %off: tensor<?xi64>) {
  // expected-error @+1 {{start + count overflows a 64-bit integer}}
  %i, %o = braid.slice_bags %idx, %off bags [1, 9223372036854775807] : (tensor<?xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return
}
