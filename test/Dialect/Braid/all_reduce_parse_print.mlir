// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%x: tensor<4x8xf32>, %y: tensor<?xbf16>) {
  // CHECK: braid.all_reduce sum %{{.*}} : tensor<4x8xf32>
  %0 = braid.all_reduce sum %x : tensor<4x8xf32>
  // CHECK: braid.all_reduce max %{{.*}} groups {{\[\[}}0, 1], [2, 3]] : tensor<4x8xf32>
  %1 = braid.all_reduce max %x groups [[0, 1], [2, 3]] : tensor<4x8xf32>
  // CHECK: braid.all_reduce min %{{.*}} : tensor<?xbf16>
  %2 = braid.all_reduce min %y : tensor<?xbf16>
  // CHECK: braid.all_reduce avg %{{.*}} groups {{\[\[}}0, 2], [1, 3]] : tensor<4x8xf32>
  %3 = braid.all_reduce avg %x groups [[0, 2], [1, 3]] : tensor<4x8xf32>
  return
}
