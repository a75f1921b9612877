// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @no_table(%idx: tensor<?xi64>, %off: tensor<5xi64>) {
  // expected-error @+1 {{'missing' does not name a braid.table}}
  %0 = braid.embedding_bag @missing(%idx, %off) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @dim(%idx: tensor<?xi64>, %off: tensor<5xi64>) {
  // expected-error @+1 {{result has 8 columns but table 't' has dim 16}}
  %0 = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @element(%idx: tensor<?xi64>, %off: tensor<5xi64>) {
  // expected-error @+1 {{result element type 'f16' differs from table 't' element type 'f32'}}
  %0 = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x16xf16>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @bags(%idx: tensor<?xi64>, %off: tensor<5xi64>) {
  // expected-error @+1 {{offsets have 5 entries, so there are 4 bags, but the result has 3 rows}}
  %0 = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<3x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @empty_offsets(%idx: tensor<?xi64>, %off: tensor<0xi64>) {
  // expected-error @+1 {{offsets must have at least one entry (B + 1 for B bags)}}
  %0 = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<0xi64>) -> tensor<?x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @weights_type(%idx: tensor<?xi64>, %off: tensor<5xi64>, %w: tensor<?xf16>) {
  // expected-error @+1 {{per_sample_weights element type 'f16' differs from the result's 'f32'}}
  %0 = braid.embedding_bag @t(%idx, %off, weights %w) sum : (tensor<?xi64>, tensor<5xi64>, tensor<?xf16>) -> tensor<4x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @weights_count(%idx: tensor<6xi64>, %off: tensor<5xi64>, %w: tensor<5xf32>) {
  // expected-error @+1 {{per_sample_weights have 5 entries but there are 6 indices}}
  %0 = braid.embedding_bag @t(%idx, %off, weights %w) sum : (tensor<6xi64>, tensor<5xi64>, tensor<5xf32>) -> tensor<4x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @weights_mode(%idx: tensor<?xi64>, %off: tensor<5xi64>, %w: tensor<?xf32>) {
  // expected-error @+1 {{per_sample_weights need mode sum, got mean}}
  %0 = braid.embedding_bag @t(%idx, %off, weights %w) mean : (tensor<?xi64>, tensor<5xi64>, tensor<?xf32>) -> tensor<4x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @float_indices(%idx: tensor<?xf32>, %off: tensor<5xi64>) {
  // expected-error @+1 {{operand #0 must be 1D tensor of signless integer values}}
  %0 = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xf32>, tensor<5xi64>) -> tensor<4x16xf32>
  return
}
