// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=CHECK-TWO
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=CHECK-THREE

// Rank r holds [r + 1, 10 (r + 1)].
// Result 0: broadcast from group position 1. Result 1: a ring shift,
// rank r receives from r - 1. Result 2: only rank 0 -> 1; rank 0 receives
// zeros.
// CHECK-TWO: rank 0 result 0: tensor<2xf32>
// CHECK-TWO-NEXT: [2, 20]
// CHECK-TWO-NEXT: rank 0 result 1: tensor<2xf32>
// CHECK-TWO-NEXT: [2, 20]
// CHECK-TWO-NEXT: rank 0 result 2: tensor<2xf32>
// CHECK-TWO-NEXT: [0, 0]
// CHECK-TWO-NEXT: rank 1 result 0: tensor<2xf32>
// CHECK-TWO-NEXT: [2, 20]
// CHECK-TWO-NEXT: rank 1 result 1: tensor<2xf32>
// CHECK-TWO-NEXT: [1, 10]
// CHECK-TWO-NEXT: rank 1 result 2: tensor<2xf32>
// CHECK-TWO-NEXT: [1, 10]
func.func @forward() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %s = tensor.splat %rf : tensor<2xf32>
  %one = arith.constant dense<1.0> : tensor<2xf32>
  %scale = arith.constant dense<[1.0, 10.0]> : tensor<2xf32>
  %r1 = arith.addf %s, %one : tensor<2xf32>
  %x = arith.mulf %r1, %scale : tensor<2xf32>
  %b = braid.broadcast %x root = 1 : tensor<2xf32>
  %n = braid.world_size : index
  %ring = braid.permute %x pairs [[0, 1], [1, 0]] : tensor<2xf32>
  %partial = braid.permute %x pairs [[0, 1]] : tensor<2xf32>
  return %b, %ring, %partial : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
// CHECK-THREE: rank 2 result 0: tensor<2xf32>
// CHECK-THREE-NEXT: [2, 20]
// CHECK-THREE-NEXT: rank 2 result 1: tensor<2xf32>
// CHECK-THREE-NEXT: [0, 0]
