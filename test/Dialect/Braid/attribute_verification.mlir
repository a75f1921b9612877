// RUN: braid-opt %s -split-input-file -verify-diagnostics
// The Braid discardable attributes' verifier diagnostics.


func.func @feature_part(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'braid.feature_part' must be "early" or "late" on a braid.linear}}
  %y = braid.linear %x, %w, %b none {braid.feature_part = "middle"} : tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// expected-error @+1 {{unknown Braid result attribute 'braid.bogus'}}
func.func @result_attr(%x: tensor<2xf32>) -> (tensor<2xf32> {braid.bogus = "x"}) {
  return %x : tensor<2xf32>
}

