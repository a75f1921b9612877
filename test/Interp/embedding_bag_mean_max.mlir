// RUN: rm -rf %t && %python %S/Inputs/make_table.py %t t 5 2
// RUN: braid-run %s --reference --weights %t --print-values | FileCheck %s

// Table rows are [10r, 10r+1]. Bags: {0, 3}, {4, 1, 2}, {}, {2}.
braid.table @t : tensor<5x2xf32> pooling_factor = 2.0

// CHECK: rank 0 result 0: tensor<4x2xf32>
// CHECK-NEXT: {{\[\[}}15, 16], [23.3333, 24.3333], [0, 0], [20, 21]]
// CHECK-NEXT: rank 0 result 1: tensor<4x2xf32>
// CHECK-NEXT: {{\[\[}}30, 31], [40, 41], [0, 0], [20, 21]]
func.func @forward() -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %idx = arith.constant dense<[0, 3, 4, 1, 2, 2]> : tensor<6xi64>
  %off = arith.constant dense<[0, 2, 5, 5, 6]> : tensor<5xi64>
  %mean = braid.embedding_bag @t(%idx, %off) mean : (tensor<6xi64>, tensor<5xi64>) -> tensor<4x2xf32>
  %max = braid.embedding_bag @t(%idx, %off) max : (tensor<6xi64>, tensor<5xi64>) -> tensor<4x2xf32>
  return %mean, %max : tensor<4x2xf32>, tensor<4x2xf32>
}
