// RUN: braid-opt %s | braid-opt | FileCheck %s

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
braid.table @h : tensor<100x16xf16> pooling_factor = 2.0

// CHECK-LABEL: func.func @modes
func.func @modes(%idx: tensor<?xi64>, %off: tensor<5xi64>, %w: tensor<?xf32>, %idx32: tensor<7xi32>) {
  // CHECK: braid.embedding_bag @t(%{{.*}}, %{{.*}}) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x16xf32>
  %0 = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x16xf32>
  // CHECK: braid.embedding_bag @t(%{{.*}}, %{{.*}}) mean : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x16xf32>
  %1 = braid.embedding_bag @t(%idx, %off) mean : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x16xf32>
  // CHECK: braid.embedding_bag @t(%{{.*}}, %{{.*}}) max : (tensor<?xi64>, tensor<5xi64>) -> tensor<?x16xf32>
  %2 = braid.embedding_bag @t(%idx, %off) max : (tensor<?xi64>, tensor<5xi64>) -> tensor<?x16xf32>
  // CHECK: braid.embedding_bag @t(%{{.*}}, %{{.*}}, weights %{{.*}}) sum : (tensor<?xi64>, tensor<5xi64>, tensor<?xf32>) -> tensor<4x16xf32>
  %3 = braid.embedding_bag @t(%idx, %off, weights %w) sum : (tensor<?xi64>, tensor<5xi64>, tensor<?xf32>) -> tensor<4x16xf32>
  // CHECK: braid.embedding_bag @h(%{{.*}}, %{{.*}}) sum : (tensor<7xi32>, tensor<5xi64>) -> tensor<4x16xf16>
  %4 = braid.embedding_bag @h(%idx32, %off) sum : (tensor<7xi32>, tensor<5xi64>) -> tensor<4x16xf16>
  return
}
