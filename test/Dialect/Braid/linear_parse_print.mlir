// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<8x13xf32>, %w: tensor<32x13xf32>, %b: tensor<32xf32>, %xd: tensor<?x13xf32>) {
  // CHECK: braid.linear %{{.*}}, %{{.*}}, %{{.*}} none : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %0 = braid.linear %x, %w, %b none : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
  // CHECK: braid.linear %{{.*}}, %{{.*}}, %{{.*}} relu : tensor<8x13xf32>
  %1 = braid.linear %x, %w, %b relu : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
  // CHECK: braid.linear %{{.*}}, %{{.*}}, %{{.*}} sigmoid : tensor<?x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<?x32xf32>
  %2 = braid.linear %xd, %w, %b sigmoid : tensor<?x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<?x32xf32>
  // CHECK: braid.linear %{{.*}}, %{{.*}}, %{{.*}} relu {placement = #braid.dense_placement<data_parallel>} :
  %3 = braid.linear %x, %w, %b relu {placement = #braid.dense_placement<data_parallel>} : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
  // CHECK: braid.linear %{{.*}}, %{{.*}}, %{{.*}} relu {placement = #braid.dense_placement<column, ranks = [0, 1]>} :
  %4 = braid.linear %x, %w, %b relu {placement = #braid.dense_placement<column, ranks = [0, 1]>} : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
  return
}
