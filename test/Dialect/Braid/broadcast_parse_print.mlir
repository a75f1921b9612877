// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @broadcast
func.func @broadcast(%x: tensor<16xf32>) {
  // CHECK: braid.broadcast %{{.*}} root = 0 : tensor<16xf32>
  %0 = braid.broadcast %x root = 0 : tensor<16xf32>
  // CHECK: braid.broadcast %{{.*}} root = 3 groups {{\[\[}}0, 1, 2, 3]] : tensor<16xf32>
  %1 = braid.broadcast %x root = 3 groups [[0, 1, 2, 3]] : tensor<16xf32>
  // CHECK: braid.broadcast_start %{{.*}} root = 1 groups {{\[\[}}0, 1]] : tensor<16xf32> -> !braid.token<tensor<16xf32>>
  %2 = braid.broadcast_start %x root = 1 groups [[0, 1]] : tensor<16xf32> -> !braid.token<tensor<16xf32>>
  %3 = braid.wait %2 : !braid.token<tensor<16xf32>>
  return
}
