// RUN: braid-run %s --reference --print-values | FileCheck %s

// x = [[1, 2], [-3, 1]], W = [[1, 0], [0, 1], [1, 1]] (PyTorch [out, in]),
// b = [0, -1, 0.5]: x W^T + b = [[1, 1, 3.5], [-3, 0, -1.5]].
// CHECK: rank 0 result 0: tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}1, 1, 3.5], [-3, 0, -1.5]]
// CHECK-NEXT: rank 0 result 1: tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}1, 1, 3.5], [0, 0, 0]]
// CHECK-NEXT: rank 0 result 2: tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}0.731059, 0.731059, 0.970688], [0.0474259, 0.5, 0.182426]]
func.func @forward() -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = arith.constant dense<[[1.0, 2.0], [-3.0, 1.0]]> : tensor<2x2xf32>
  %w = arith.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  %b = arith.constant dense<[0.0, -1.0, 0.5]> : tensor<3xf32>
  %0 = braid.linear %x, %w, %b none : tensor<2x2xf32>, tensor<3x2xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %1 = braid.linear %x, %w, %b relu : tensor<2x2xf32>, tensor<3x2xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %2 = braid.linear %x, %w, %b sigmoid : tensor<2x2xf32>, tensor<3x2xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
