// RUN: braid-run %s --reference --ranks 1 --print-values | FileCheck %s

// On one rank a self-pair is the identity.
// CHECK: rank 0 result 0: tensor<2xf32>
// CHECK-NEXT: [4, 5]
func.func @forward() -> tensor<2xf32> {
  %x = arith.constant dense<[4.0, 5.0]> : tensor<2xf32>
  %y = braid.permute %x pairs [[0, 0]] : tensor<2xf32>
  return %y : tensor<2xf32>
}
