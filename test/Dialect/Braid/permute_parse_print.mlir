// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @permute
func.func @permute(%x: tensor<8xf32>) {
  // CHECK: braid.permute %{{.*}} pairs {{\[\[}}0, 1], [1, 2], [2, 0]] : tensor<8xf32>
  %0 = braid.permute %x pairs [[0, 1], [1, 2], [2, 0]] : tensor<8xf32>
  // CHECK: braid.permute %{{.*}} pairs {{\[\[}}3, 0]] : tensor<8xf32>
  %1 = braid.permute %x pairs [[3, 0]] : tensor<8xf32>
  return
}
