// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @all_to_all
func.func @all_to_all(%x: tensor<8x4xf32>, %ids: tensor<?xi64>, %p: tensor<8x?xf32>) {
  // CHECK: braid.all_to_all %{{.*}} split_dim = 0 concat_dim = 0 groups {{\[\[}}0, 1]] : tensor<8x4xf32> -> tensor<8x4xf32>
  %0 = braid.all_to_all %x split_dim = 0 concat_dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> tensor<8x4xf32>
  // CHECK: braid.all_to_all %{{.*}} split_dim = 0 concat_dim = 1 groups {{\[\[}}0, 1, 2, 3]] : tensor<8x4xf32> -> tensor<2x16xf32>
  %1 = braid.all_to_all %x split_dim = 0 concat_dim = 1 groups [[0, 1, 2, 3]] : tensor<8x4xf32> -> tensor<2x16xf32>
  // CHECK: braid.all_to_all %{{.*}} split_dim = 0 concat_dim = 0 split_sizes = [1, 2, 3, 0] groups {{\[\[}}0, 1]] : tensor<?xi64> -> tensor<?xi64>
  %2 = braid.all_to_all %ids split_dim = 0 concat_dim = 0 split_sizes = [1, 2, 3, 0] groups [[0, 1]] : tensor<?xi64> -> tensor<?xi64>
  // CHECK: braid.all_to_all %{{.*}} split_dim = 0 concat_dim = 1 groups {{\[\[}}0, 1]] : tensor<8x?xf32> -> tensor<4x?xf32>
  %3 = braid.all_to_all %p split_dim = 0 concat_dim = 1 groups [[0, 1]] : tensor<8x?xf32> -> tensor<4x?xf32>
  // CHECK: braid.all_to_all %{{.*}} split_dim = 0 concat_dim = 0 : tensor<8x4xf32> -> tensor<8x4xf32>
  %4 = braid.all_to_all %x split_dim = 0 concat_dim = 0 : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}
