// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @async
func.func @async(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<16x4xf32>, tensor<4x4xf32>, tensor<8x4xf32>) {
  // CHECK: %[[AR:.*]] = braid.all_reduce_start sum %{{.*}} groups {{\[\[}}0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
  %t0 = braid.all_reduce_start sum %x groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
  // CHECK: %[[AG:.*]] = braid.all_gather_start %{{.*}} dim = 0 groups {{\[\[}}0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<16x4xf32>>
  %t1 = braid.all_gather_start %x dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<16x4xf32>>
  // CHECK: %[[RS:.*]] = braid.reduce_scatter_start sum %{{.*}} dim = 0 groups {{\[\[}}0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<4x4xf32>>
  %t2 = braid.reduce_scatter_start sum %x dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<4x4xf32>>
  // CHECK: %[[AA:.*]] = braid.all_to_all_start %{{.*}} split_dim = 0 concat_dim = 0 groups {{\[\[}}0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
  %t3 = braid.all_to_all_start %x split_dim = 0 concat_dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
  // CHECK: braid.wait %[[AR]] : !braid.token<tensor<8x4xf32>>
  %r0 = braid.wait %t0 : !braid.token<tensor<8x4xf32>>
  // CHECK: braid.wait %[[AG]] : !braid.token<tensor<16x4xf32>>
  %r1 = braid.wait %t1 : !braid.token<tensor<16x4xf32>>
  // CHECK: braid.wait %[[RS]] : !braid.token<tensor<4x4xf32>>
  %r2 = braid.wait %t2 : !braid.token<tensor<4x4xf32>>
  // CHECK: braid.wait %[[AA]] : !braid.token<tensor<8x4xf32>>
  %r3 = braid.wait %t3 : !braid.token<tensor<8x4xf32>>
  return %r0, %r1, %r2, %r3 : tensor<8x4xf32>, tensor<16x4xf32>, tensor<4x4xf32>, tensor<8x4xf32>
}
