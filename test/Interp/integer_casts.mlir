// arith.trunci from i64 to i32 wraps (two's complement, as the backends'
// truncation does) and arith.extsi sign-extends, under the reference
// semantics (the expansion of a narrowed exchange uses both).
// RUN: braid-run %s --reference --print-values | FileCheck %s

// CHECK: result 0: tensor<5xi32>
// CHECK-NEXT: [1, -100, -1, 7, -7]
// CHECK-NEXT: result 1: tensor<5xi64>
// CHECK-NEXT: [1, -100, -1, 7, -7]
func.func @main() -> (tensor<5xi32>, tensor<5xi64>) {
  %wide = arith.constant dense<[4294967297, 4294967196, 4294967295, 7, -7]> : tensor<5xi64>
  %narrow = arith.trunci %wide : tensor<5xi64> to tensor<5xi32>
  %back = arith.extsi %narrow : tensor<5xi32> to tensor<5xi64>
  return %narrow, %back : tensor<5xi32>, tensor<5xi64>
}
