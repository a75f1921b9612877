// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @in(%x: tensor<8x12xf32>, %w: tensor<32x13xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{input has 12 features but weight [out, in] expects 13}}
  %0 = braid.linear %x, %w, %b relu : tensor<8x12xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
  return
}

// -----

func.func @bias(%x: tensor<8x13xf32>, %w: tensor<32x13xf32>, %b: tensor<31xf32>) {
  // expected-error @+1 {{bias has 31 entries but weight [out, in] has 32 outputs}}
  %0 = braid.linear %x, %w, %b relu : tensor<8x13xf32>, tensor<32x13xf32>, tensor<31xf32> -> tensor<8x32xf32>
  return
}

// -----

func.func @out(%x: tensor<8x13xf32>, %w: tensor<32x13xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{result has 16 columns but weight [out, in] has 32 outputs}}
  %0 = braid.linear %x, %w, %b relu : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @batch(%x: tensor<8x13xf32>, %w: tensor<32x13xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{result has 4 rows but input has 8}}
  %0 = braid.linear %x, %w, %b relu : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<4x32xf32>
  return
}

// -----

func.func @types(%x: tensor<8x13xf16>, %w: tensor<32x13xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{input, weight, bias and result must share one element type, got 'f16', 'f32', 'f32' and 'f32'}}
  %0 = braid.linear %x, %w, %b relu : tensor<8x13xf16>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
  return
}

// -----

func.func @tp(%x: tensor<8x13xf32>, %w: tensor<32x13xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{tensor-parallel 'row' placement needs at least two ranks, got 1}}
  %0 = braid.linear %x, %w, %b relu {placement = #braid.dense_placement<row, ranks = [0]>} : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
  return
}
