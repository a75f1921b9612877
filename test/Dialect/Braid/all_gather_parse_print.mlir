// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @all_gather
func.func @all_gather(%x: tensor<4x8xf32>, %y: tensor<?x8xf32>) {
  // CHECK: braid.all_gather %{{.*}} dim = 0 groups {{\[\[}}0, 1]] : tensor<4x8xf32> -> tensor<8x8xf32>
  %0 = braid.all_gather %x dim = 0 groups [[0, 1]] : tensor<4x8xf32> -> tensor<8x8xf32>
  // CHECK: braid.all_gather %{{.*}} dim = 1 groups {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<4x8xf32> -> tensor<4x24xf32>
  %1 = braid.all_gather %x dim = 1 groups [[0, 1, 2], [3, 4, 5]] : tensor<4x8xf32> -> tensor<4x24xf32>
  // CHECK: braid.all_gather %{{.*}} dim = 0 : tensor<4x8xf32> -> tensor<?x8xf32>
  %2 = braid.all_gather %x dim = 0 : tensor<4x8xf32> -> tensor<?x8xf32>
  // CHECK: braid.all_gather %{{.*}} dim = 0 groups {{\[\[}}0, 1]] : tensor<?x8xf32> -> tensor<?x8xf32>
  %3 = braid.all_gather %y dim = 0 groups [[0, 1]] : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}
