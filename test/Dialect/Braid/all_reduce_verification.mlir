// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @types(%x: tensor<4xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %0 = "braid.all_reduce"(%x) {reduction = 0 : i32} : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @start_types(%x: tensor<4xf32>) {
  // expected-error @+1 {{result type 'tensor<8xf32>' must be the input type 'tensor<4xf32>'}}
  %0 = braid.all_reduce_start sum %x : tensor<4xf32> -> !braid.token<tensor<8xf32>>
  return
}

// -----

func.func @start_element(%x: tensor<4xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %0 = braid.all_reduce_start sum %x : tensor<4xf32> -> !braid.token<tensor<4xf16>>
  return
}

// -----

func.func @token_value(%x: tensor<4xf32>) {
  // expected-error @+1 {{token value type must be a ranked tensor, got 'f32'}}
  %0 = braid.all_reduce_start sum %x : tensor<4xf32> -> !braid.token<f32>
  return
}
