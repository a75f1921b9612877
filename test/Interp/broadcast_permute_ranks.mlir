// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=R2
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=R3

// Rank r holds [r + 1, 10 (r + 1)].
// Result 0: broadcast from group position 1. Result 1: a ring shift,
// rank r receives from r - 1. Result 2: only rank 0 -> 1; rank 0 receives
// zeros.
// R2: rank 0 result 0: tensor<2xf32>
// R2-NEXT: [2, 20]
// R2-NEXT: rank 0 result 1: tensor<2xf32>
// R2-NEXT: [2, 20]
// R2-NEXT: rank 0 result 2: tensor<2xf32>
// R2-NEXT: [0, 0]
// R2-NEXT: rank 1 result 0: tensor<2xf32>
// R2-NEXT: [2, 20]
// R2-NEXT: rank 1 result 1: tensor<2xf32>
// R2-NEXT: [1, 10]
// R2-NEXT: rank 1 result 2: tensor<2xf32>
// R2-NEXT: [1, 10]
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
// R3: rank 2 result 0: tensor<2xf32>
// R3-NEXT: [2, 20]
// R3-NEXT: rank 2 result 1: tensor<2xf32>
// R3-NEXT: [0, 0]
