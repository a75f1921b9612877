// RUN: rm -rf %t && %python %S/Inputs/make_table.py %t t 5 3
// RUN: braid-run %s --reference --weights %t --print-values | FileCheck %s

// Table rows are [10r, 10r+1, 10r+2]. Bags: {0, 2}, {4}, {1, 1, 3}.
braid.table @t : tensor<5x3xf32> pooling_factor = 2.0

// CHECK: reference semantics of @forward on 1 rank
// CHECK-NEXT: rank 0 result 0: tensor<3x3xf32>
// CHECK-NEXT: {{\[\[}}20, 22, 24], [40, 41, 42], [50, 53, 56]]
func.func @forward() -> tensor<3x3xf32> {
  %idx = arith.constant dense<[0, 2, 4, 1, 1, 3]> : tensor<6xi64>
  %off = arith.constant dense<[0, 2, 3, 6]> : tensor<4xi64>
  %r = braid.embedding_bag @t(%idx, %off) sum : (tensor<6xi64>, tensor<4xi64>) -> tensor<3x3xf32>
  return %r : tensor<3x3xf32>
}
