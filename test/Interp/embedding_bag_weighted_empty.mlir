// RUN: rm -rf %t && %python %S/Inputs/make_table.py %t t 4 2
// RUN: %python %S/Inputs/make_table.py %t n 4 2 float32 -1
// RUN: braid-run %s --reference --weights %t --print-values | FileCheck %s

// @t rows are [10r, 10r+1]; @n rows are their negations.
braid.table @t : tensor<4x2xf32> pooling_factor = 1.0
braid.table @n : tensor<4x2xf32> pooling_factor = 1.0

// Per-sample weights scale each row: 0.5 * [10, 11] - 0.25 * [20, 21].
// Empty bags (first and the two last) give zeros.
// CHECK: rank 0 result 0: tensor<4x2xf32>
// CHECK-NEXT: {{\[\[}}0, 0], [0, 0.25], [0, 0], [0, 0]]
// Max pooling over negative rows is not clamped at zero; an empty bag is 0.
// CHECK-NEXT: rank 0 result 1: tensor<2x2xf32>
// CHECK-NEXT: {{\[\[}}-10, -11], [0, 0]]
func.func @forward() -> (tensor<4x2xf32>, tensor<2x2xf32>) {
  %idx = arith.constant dense<[1, 2]> : tensor<2xi64>
  %off = arith.constant dense<[0, 0, 2, 2, 2]> : tensor<5xi64>
  %w = arith.constant dense<[0.5, -0.25]> : tensor<2xf32>
  %sum = braid.embedding_bag @t(%idx, %off, weights %w) sum : (tensor<2xi64>, tensor<5xi64>, tensor<2xf32>) -> tensor<4x2xf32>
  %off2 = arith.constant dense<[0, 2, 2]> : tensor<3xi64>
  %max = braid.embedding_bag @n(%idx, %off2) max : (tensor<2xi64>, tensor<3xi64>) -> tensor<2x2xf32>
  return %sum, %max : tensor<4x2xf32>, tensor<2x2xf32>
}
