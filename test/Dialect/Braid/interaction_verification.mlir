// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @dot_dim(%d: tensor<4x8xf32>, %a: tensor<4x4xf32>) {
  // expected-error @+1 {{dot interaction needs every embedding to have the dense dim 8, but embedding 0 has 4}}
  %0 = braid.interaction dot %d, %a : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x9xf32>
  return
}

// -----

func.func @dot_cols(%d: tensor<4x8xf32>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{dot interaction of these operands has 11 columns, but the result has 10}}
  %0 = braid.interaction dot %d, %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @cat_cols(%d: tensor<4x8xf32>, %a: tensor<4x3xf32>) {
  // expected-error @+1 {{cat interaction of these operands has 11 columns, but the result has 12}}
  %0 = braid.interaction cat %d, %a : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x12xf32>
  return
}

// -----

func.func @rows(%d: tensor<4x8xf32>, %a: tensor<5x8xf32>) {
  // expected-error @+1 {{embedding 0 has 5 rows but dense has 4}}
  %0 = braid.interaction dot %d, %a : (tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<4x9xf32>
  return
}

// -----

func.func @element(%d: tensor<4x8xf32>, %a: tensor<4x8xf16>) {
  // expected-error @+1 {{embedding 0 has element type 'f16' but dense has 'f32'}}
  %0 = braid.interaction dot %d, %a : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x9xf32>
  return
}

// -----

func.func @result_rows(%d: tensor<4x8xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{result has 3 rows but dense has 4}}
  %0 = braid.interaction dot %d, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<3x9xf32>
  return
}

// -----

func.func @result_element(%d: tensor<4x8xf32>, %a: tensor<4x8xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from the operands' 'f32'}}
  %0 = braid.interaction dot %d, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x9xf16>
  return
}

// -----

func.func @none(%d: tensor<4x8xf32>) {
  // expected-error @+1 {{needs at least one embedding}}
  %0 = "braid.interaction"(%d) {kind = 0 : i32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// A feature of no columns: the kernels' vectors of its width would have no
// element (LLVM then refused the compiled program, naming no op).
func.func @zero_width(%d: tensor<4x8xf32>, %a: tensor<4x0xf32>) {
  // expected-error @+1 {{embedding 0 needs at least one column, got 'tensor<4x0xf32>'}}
  %0 = braid.interaction cat %d, %a : (tensor<4x8xf32>, tensor<4x0xf32>) -> tensor<4x8xf32>
  return
}
