// RUN: braid-opt %s -canonicalize -split-input-file | FileCheck %s

// A collective over groups of one rank is the identity.
// CHECK-LABEL: func.func @trivial_sync
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: braid.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]] :
func.func @trivial_sync(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = braid.all_reduce sum %x groups [[0], [1], [2]] : tensor<4x8xf32>
  %1 = braid.all_gather %x dim = 0 groups [[0], [1]] : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = braid.reduce_scatter avg %x dim = 1 groups [[0]] : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = braid.all_to_all %x split_dim = 0 concat_dim = 1 groups [[0], [1]] : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = braid.broadcast %x root = 0 groups [[5]] : tensor<4x8xf32>
  return %0, %1, %2, %3, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Groups of two, or no groups (all ranks), are kept.
// CHECK-LABEL: func.func @kept
// CHECK: braid.all_reduce sum %{{.*}} groups {{\[\[}}0, 1]]
// CHECK: braid.all_reduce sum %{{.*}} : tensor<4xf32>
func.func @kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = braid.all_reduce sum %x groups [[0, 1]] : tensor<4xf32>
  %1 = braid.all_reduce sum %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// wait(start) over groups of one folds to the input; the start goes too.
// CHECK-LABEL: func.func @trivial_async
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: braid.
// CHECK: return %[[X]], %[[X]]
func.func @trivial_async(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = braid.all_reduce_start sum %x groups [[0], [1]] : tensor<4xf32> -> !braid.token<tensor<4xf32>>
  %r = braid.wait %t : !braid.token<tensor<4xf32>>
  %t2 = braid.all_gather_start %x dim = 0 groups [[0]] : tensor<4xf32> -> !braid.token<tensor<4xf32>>
  %r2 = braid.wait %t2 : !braid.token<tensor<4xf32>>
  return %r, %r2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// An async collective over real groups stays.
// CHECK-LABEL: func.func @async_kept
// CHECK: %[[T:.*]] = braid.all_reduce_start sum
// CHECK: braid.wait %[[T]]
func.func @async_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = braid.all_reduce_start sum %x groups [[0, 1]] : tensor<4xf32> -> !braid.token<tensor<4xf32>>
  %r = braid.wait %t : !braid.token<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// -----

// Unused synchronous collectives are pure and disappear.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: braid.all_gather
func.func @dead(%x: tensor<4xf32>) {
  %0 = braid.all_gather %x dim = 0 groups [[0, 1]] : tensor<4xf32> -> tensor<8xf32>
  return
}
