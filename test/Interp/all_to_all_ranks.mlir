// RUN: braid-run %s --reference --ranks 1 --print-values | FileCheck %s --check-prefix=CHECK-ONE
// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=CHECK-TWO
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=CHECK-THREE
// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=CHECK-FOUR

// Rank r holds [0, ..., 11] + 100 r and sends chunk j (12 / N elements) to
// rank j, which concatenates the chunks in rank order.
// CHECK-ONE: rank 0 result 0: tensor<12xf32>
// CHECK-ONE-NEXT: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
// CHECK-TWO: rank 0 result 0: tensor<12xf32>
// CHECK-TWO-NEXT: [0, 1, 2, 3, 4, 5, 100, 101, 102, 103, 104, 105]
// CHECK-TWO: rank 1 result 0: tensor<12xf32>
// CHECK-TWO-NEXT: [6, 7, 8, 9, 10, 11, 106, 107, 108, 109, 110, 111]
// CHECK-THREE: rank 0 result 0: tensor<12xf32>
// CHECK-THREE-NEXT: [0, 1, 2, 3, 100, 101, 102, 103, 200, 201, 202, 203]
// CHECK-THREE: rank 2 result 0: tensor<12xf32>
// CHECK-THREE-NEXT: [8, 9, 10, 11, 108, 109, 110, 111, 208, 209, 210, 211]
// CHECK-FOUR: rank 0 result 0: tensor<12xf32>
// CHECK-FOUR-NEXT: [0, 1, 2, 100, 101, 102, 200, 201, 202, 300, 301, 302]
// CHECK-FOUR: rank 3 result 0: tensor<12xf32>
// CHECK-FOUR-NEXT: [9, 10, 11, 109, 110, 111, 209, 210, 211, 309, 310, 311]
func.func @forward() -> tensor<12xf32> {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %s = tensor.splat %rf : tensor<12xf32>
  %hundred = arith.constant dense<100.0> : tensor<12xf32>
  %offset = arith.mulf %s, %hundred : tensor<12xf32>
  %iota = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]> : tensor<12xf32>
  %x = arith.addf %iota, %offset : tensor<12xf32>
  %y = braid.all_to_all %x split_dim = 0 concat_dim = 0 : tensor<12xf32> -> tensor<12xf32>
  return %y : tensor<12xf32>
}
