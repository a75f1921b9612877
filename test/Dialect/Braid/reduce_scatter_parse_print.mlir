// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @reduce_scatter
func.func @reduce_scatter(%x: tensor<8x4xf32>) {
  // CHECK: braid.reduce_scatter sum %{{.*}} dim = 0 groups {{\[\[}}0, 1]] : tensor<8x4xf32> -> tensor<4x4xf32>
  %0 = braid.reduce_scatter sum %x dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> tensor<4x4xf32>
  // CHECK: braid.reduce_scatter max %{{.*}} dim = 1 groups {{\[\[}}0, 1, 2, 3]] : tensor<8x4xf32> -> tensor<8x1xf32>
  %1 = braid.reduce_scatter max %x dim = 1 groups [[0, 1, 2, 3]] : tensor<8x4xf32> -> tensor<8x1xf32>
  // CHECK: braid.reduce_scatter avg %{{.*}} dim = 0 : tensor<8x4xf32> -> tensor<?x4xf32>
  %2 = braid.reduce_scatter avg %x dim = 0 : tensor<8x4xf32> -> tensor<?x4xf32>
  return
}
