// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @interaction
func.func @interaction(%d: tensor<4x8xf32>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x3xf32>) {
  // CHECK: braid.interaction dot %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x9xf32>
  %0 = braid.interaction dot %d, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x9xf32>
  // CHECK: braid.interaction dot %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x11xf32>
  %1 = braid.interaction dot %d, %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x11xf32>
  // CHECK: braid.interaction cat %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x19xf32>
  %2 = braid.interaction cat %d, %a, %c : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x19xf32>
  return
}
