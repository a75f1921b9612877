// RUN: braid-run %s --reference --ranks 1 --print-values | FileCheck %s --check-prefix=CHECK-ONE
// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=CHECK-TWO
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=CHECK-THREE
// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=CHECK-FOUR

// Rank r contributes [[r, 10 r]]; gathered along dim 0 and along dim 1.
// CHECK-ONE: rank 0 result 0: tensor<1x2xf32>
// CHECK-ONE-NEXT: {{\[\[}}0, 0]]
// CHECK-TWO: rank 0 result 0: tensor<2x2xf32>
// CHECK-TWO-NEXT: {{\[\[}}0, 0], [1, 10]]
// CHECK-TWO-NEXT: rank 0 result 1: tensor<1x4xf32>
// CHECK-TWO-NEXT: {{\[\[}}0, 0, 1, 10]]
// CHECK-THREE: rank 2 result 0: tensor<3x2xf32>
// CHECK-THREE-NEXT: {{\[\[}}0, 0], [1, 10], [2, 20]]
// CHECK-FOUR: rank 1 result 0: tensor<4x2xf32>
// CHECK-FOUR-NEXT: {{\[\[}}0, 0], [1, 10], [2, 20], [3, 30]]
// CHECK-FOUR-NEXT: rank 1 result 1: tensor<1x8xf32>
// CHECK-FOUR-NEXT: {{\[\[}}0, 0, 1, 10, 2, 20, 3, 30]]
func.func @forward() -> (tensor<?x2xf32>, tensor<1x?xf32>) {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %s = tensor.splat %rf : tensor<1x2xf32>
  %scale = arith.constant dense<[[1.0, 10.0]]> : tensor<1x2xf32>
  %x = arith.mulf %scale, %s : tensor<1x2xf32>
  %rows = braid.all_gather %x dim = 0 : tensor<1x2xf32> -> tensor<?x2xf32>
  %cols = braid.all_gather %x dim = 1 : tensor<1x2xf32> -> tensor<1x?xf32>
  return %rows, %cols : tensor<?x2xf32>, tensor<1x?xf32>
}
