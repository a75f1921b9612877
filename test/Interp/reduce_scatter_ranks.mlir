// RUN: braid-run %s --reference --ranks 1 --print-values | FileCheck %s --check-prefix=R1
// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=R2
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=R3
// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=R4

// Rank r contributes [0, 1, ..., 11] + 100 r. The sum over N ranks is
// N i + 100 N (N - 1) / 2; rank p keeps chunk p of 12 / N elements.
// R1: rank 0 result 0: tensor<12xf32>
// R1-NEXT: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
// R2: rank 0 result 0: tensor<6xf32>
// R2-NEXT: [100, 102, 104, 106, 108, 110]
// R2: rank 1 result 0: tensor<6xf32>
// R2-NEXT: [112, 114, 116, 118, 120, 122]
// R3: rank 0 result 0: tensor<4xf32>
// R3-NEXT: [300, 303, 306, 309]
// R3: rank 2 result 0: tensor<4xf32>
// R3-NEXT: [324, 327, 330, 333]
// R4: rank 0 result 0: tensor<3xf32>
// R4-NEXT: [600, 604, 608]
// R4: rank 3 result 0: tensor<3xf32>
// R4-NEXT: [636, 640, 644]
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
