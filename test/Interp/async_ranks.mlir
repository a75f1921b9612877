// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s
// RUN: braid-opt %s -canonicalize | braid-run - --reference --ranks 2 --print-values | FileCheck %s

// The async forms give the results of the sync forms, with compute between
// start and wait. Rank r holds [r + 1, r + 2].
// CHECK: rank 1 result 0: tensor<2xf32>
// CHECK-NEXT: [3, 5]
// CHECK-NEXT: rank 1 result 1: tensor<4xf32>
// CHECK-NEXT: [1, 2, 2, 3]
// CHECK-NEXT: rank 1 result 2: tensor<1xf32>
// CHECK-NEXT: [5]
// CHECK-NEXT: rank 1 result 3: tensor<2xf32>
// CHECK-NEXT: [2, 3]
// CHECK-NEXT: rank 1 result 4: tensor<2xf32>
// CHECK-NEXT: [4, 6]
func.func @forward() -> (tensor<2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<2xf32>, tensor<2xf32>) {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %s = tensor.splat %rf : tensor<2xf32>
  %base = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %x = arith.addf %base, %s : tensor<2xf32>
  %t0 = braid.all_reduce_start sum %x groups [[0, 1]] : tensor<2xf32> -> !braid.token<tensor<2xf32>>
  %t1 = braid.all_gather_start %x dim = 0 groups [[0, 1]] : tensor<2xf32> -> !braid.token<tensor<4xf32>>
  %t2 = braid.reduce_scatter_start sum %x dim = 0 groups [[0, 1]] : tensor<2xf32> -> !braid.token<tensor<1xf32>>
  %t3 = braid.all_to_all_start %x split_dim = 0 concat_dim = 0 groups [[0, 1]] : tensor<2xf32> -> !braid.token<tensor<2xf32>>
  // Independent compute overlapping the collectives in flight.
  %y = arith.addf %x, %x : tensor<2xf32>
  %r0 = braid.wait %t0 : !braid.token<tensor<2xf32>>
  %r1 = braid.wait %t1 : !braid.token<tensor<4xf32>>
  %r2 = braid.wait %t2 : !braid.token<tensor<1xf32>>
  %r3 = braid.wait %t3 : !braid.token<tensor<2xf32>>
  return %r0, %r1, %r2, %r3, %y : tensor<2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<2xf32>, tensor<2xf32>
}
