// RUN: braid-run %s --reference --ranks 1 --print-values | FileCheck %s --check-prefix=CHECK-ONE
// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=CHECK-TWO
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=CHECK-THREE
// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=CHECK-FOUR

// Rank r contributes [1 + r, 10 + r]; results are sum, max, min, avg.
// CHECK-ONE: rank 0 result 0: tensor<2xf32>
// CHECK-ONE-NEXT: [1, 10]
// CHECK-ONE: rank 0 result 3: tensor<2xf32>
// CHECK-ONE-NEXT: [1, 10]

// CHECK-TWO: rank 0 result 0: tensor<2xf32>
// CHECK-TWO-NEXT: [3, 21]
// CHECK-TWO-NEXT: rank 0 result 1: tensor<2xf32>
// CHECK-TWO-NEXT: [2, 11]
// CHECK-TWO-NEXT: rank 0 result 2: tensor<2xf32>
// CHECK-TWO-NEXT: [1, 10]
// CHECK-TWO-NEXT: rank 0 result 3: tensor<2xf32>
// CHECK-TWO-NEXT: [1.5, 10.5]
// CHECK-TWO: rank 1 result 0: tensor<2xf32>
// CHECK-TWO-NEXT: [3, 21]

// CHECK-THREE: rank 0 result 0: tensor<2xf32>
// CHECK-THREE-NEXT: [6, 33]
// CHECK-THREE-NEXT: rank 0 result 1: tensor<2xf32>
// CHECK-THREE-NEXT: [3, 12]
// CHECK-THREE-NEXT: rank 0 result 2: tensor<2xf32>
// CHECK-THREE-NEXT: [1, 10]
// CHECK-THREE-NEXT: rank 0 result 3: tensor<2xf32>
// CHECK-THREE-NEXT: [2, 11]
// CHECK-THREE: rank 2 result 0: tensor<2xf32>
// CHECK-THREE-NEXT: [6, 33]

// CHECK-FOUR: rank 0 result 0: tensor<2xf32>
// CHECK-FOUR-NEXT: [10, 46]
// CHECK-FOUR-NEXT: rank 0 result 1: tensor<2xf32>
// CHECK-FOUR-NEXT: [4, 13]
// CHECK-FOUR-NEXT: rank 0 result 2: tensor<2xf32>
// CHECK-FOUR-NEXT: [1, 10]
// CHECK-FOUR-NEXT: rank 0 result 3: tensor<2xf32>
// CHECK-FOUR-NEXT: [2.5, 11.5]
// CHECK-FOUR: rank 3 result 3: tensor<2xf32>
// CHECK-FOUR-NEXT: [2.5, 11.5]
func.func @forward() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %s = tensor.splat %rf : tensor<2xf32>
  %base = arith.constant dense<[1.0, 10.0]> : tensor<2xf32>
  %x = arith.addf %base, %s : tensor<2xf32>
  %sum = braid.all_reduce sum %x : tensor<2xf32>
  %max = braid.all_reduce max %x : tensor<2xf32>
  %min = braid.all_reduce min %x : tensor<2xf32>
  %avg = braid.all_reduce avg %x : tensor<2xf32>
  return %sum, %max, %min, %avg : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
