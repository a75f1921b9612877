// RUN: braid-run %s --reference --print-values | FileCheck %s

// cat concatenates the dense vector and embeddings of any widths.
// CHECK: rank 0 result 0: tensor<2x6xf32>
// CHECK-NEXT: {{\[\[}}1, 2, 3, 7, 8, 9], [4, 5, 6, 10, 11, 12]]
func.func @forward() -> tensor<2x6xf32> {
  %d = arith.constant dense<[[1.0, 2.0], [4.0, 5.0]]> : tensor<2x2xf32>
  %a = arith.constant dense<[[3.0], [6.0]]> : tensor<2x1xf32>
  %b = arith.constant dense<[[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]> : tensor<2x3xf32>
  %0 = braid.interaction cat %d, %a, %b : (tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
