// RUN: braid-run %s --reference --print-values | FileCheck %s

// Vectors v0 = dense, v1, v2 per sample; output = [v0, v1.v0, v2.v0, v2.v1].
// Sample 0: v0 = [1, 2], v1 = [3, 4], v2 = [5, 6]: dots 11, 17, 39.
// Sample 1: v0 = [1, 0], v1 = [0, 1], v2 = [2, 2]: dots 0, 2, 2.
// CHECK: rank 0 result 0: tensor<2x5xf32>
// CHECK-NEXT: {{\[\[}}1, 2, 11, 17, 39], [1, 0, 0, 2, 2]]
// One embedding: a single dot product, v1.v0.
// CHECK-NEXT: rank 0 result 1: tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}1, 2, 11], [1, 0, 0]]
func.func @forward() -> (tensor<2x5xf32>, tensor<2x3xf32>) {
  %d = arith.constant dense<[[1.0, 2.0], [1.0, 0.0]]> : tensor<2x2xf32>
  %a = arith.constant dense<[[3.0, 4.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[[5.0, 6.0], [2.0, 2.0]]> : tensor<2x2xf32>
  %0 = braid.interaction dot %d, %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  %1 = braid.interaction dot %d, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<2x3xf32>
}
