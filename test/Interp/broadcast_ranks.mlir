// RUN: braid-run %s --reference --ranks 1 --print-values | FileCheck %s --check-prefix=CHECK-ONE
// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=CHECK-TWO
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=CHECK-THREE
// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=CHECK-FOUR

// Rank r holds [r + 1, 10 (r + 1)]; every rank receives rank 0's input.
// CHECK-ONE: rank 0 result 0: tensor<2xf32>
// CHECK-ONE-NEXT: [1, 10]
// CHECK-TWO: rank 1 result 0: tensor<2xf32>
// CHECK-TWO-NEXT: [1, 10]
// CHECK-THREE: rank 2 result 0: tensor<2xf32>
// CHECK-THREE-NEXT: [1, 10]
// CHECK-FOUR: rank 3 result 0: tensor<2xf32>
// CHECK-FOUR-NEXT: [1, 10]
func.func @forward() -> tensor<2xf32> {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %s = tensor.splat %rf : tensor<2xf32>
  %one = arith.constant dense<1.0> : tensor<2xf32>
  %scale = arith.constant dense<[1.0, 10.0]> : tensor<2xf32>
  %r1 = arith.addf %s, %one : tensor<2xf32>
  %x = arith.mulf %r1, %scale : tensor<2xf32>
  %b = braid.broadcast %x root = 0 : tensor<2xf32>
  return %b : tensor<2xf32>
}
