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


// -----

// An input's or a parameter's name is a file's under --inputs, --weights
// and --dump: a separator or a leading '.' would leave the folder.
// expected-error @+1 {{argument 0: 'braid.input' is "../escaped", which cannot name a file in a folder}}
func.func @input_path(%x: tensor<2xf32> {braid.input = "../escaped"}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{argument 0: 'braid.param' is "/tmp/absolute", which cannot name a file in a folder}}
func.func @param_path(%x: tensor<2xf32> {braid.param = "/tmp/absolute"}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
