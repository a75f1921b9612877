// RUN: braid-run %s --reference --ranks 1 --print-values | FileCheck %s --check-prefix=CHECK-ONE
// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=CHECK-TWO
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=CHECK-THREE
// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=CHECK-FOUR

// Rank r contributes [0, 1, ..., 11] + 100 r. The sum over N ranks is
// N i + 100 N (N - 1) / 2; rank p keeps chunk p of 12 / N elements.
// CHECK-ONE: rank 0 result 0: tensor<12xf32>
// CHECK-ONE-NEXT: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
// CHECK-TWO: rank 0 result 0: tensor<6xf32>
// CHECK-TWO-NEXT: [100, 102, 104, 106, 108, 110]
// CHECK-TWO: rank 1 result 0: tensor<6xf32>
// CHECK-TWO-NEXT: [112, 114, 116, 118, 120, 122]
// CHECK-THREE: rank 0 result 0: tensor<4xf32>
// CHECK-THREE-NEXT: [300, 303, 306, 309]
// CHECK-THREE: rank 2 result 0: tensor<4xf32>
// CHECK-THREE-NEXT: [324, 327, 330, 333]
// CHECK-FOUR: rank 0 result 0: tensor<3xf32>
// CHECK-FOUR-NEXT: [600, 604, 608]
// CHECK-FOUR: rank 3 result 0: tensor<3xf32>
// CHECK-FOUR-NEXT: [636, 640, 644]
func.func @forward() -> tensor<?xf32> {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %s = tensor.splat %rf : tensor<12xf32>
  %hundred = arith.constant dense<100.0> : tensor<12xf32>
  %offset = arith.mulf %s, %hundred : tensor<12xf32>
  %iota = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]> : tensor<12xf32>
  %x = arith.addf %iota, %offset : tensor<12xf32>
  %y = braid.reduce_scatter sum %x dim = 0 : tensor<12xf32> -> tensor<?xf32>
  return %y : tensor<?xf32>
}
