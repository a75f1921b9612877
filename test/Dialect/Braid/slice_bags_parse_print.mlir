// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @range
// CHECK: %{{.*}}, %{{.*}} = braid.slice_bags %arg0, %arg1 bags [4, 4] : (tensor<?xi64>, tensor<9xi64>) -> (tensor<?xi64>, tensor<?xi64>)
func.func @range(%idx: tensor<?xi64>, %off: tensor<9xi64>) -> (tensor<?xi64>, tensor<?xi64>) {
  %i, %o = braid.slice_bags %idx, %off bags [4, 4] : (tensor<?xi64>, tensor<9xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return %i, %o : tensor<?xi64>, tensor<?xi64>
}

// CHECK-LABEL: func.func @chunk_of_an_exchange
// CHECK: braid.all_to_all %arg0 split_dim = 0 concat_dim = 0 {braid.chunk = 1 : i64} : tensor<4x2xf32> -> tensor<4x2xf32>
func.func @chunk_of_an_exchange(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = braid.all_to_all %x split_dim = 0 concat_dim = 0 {braid.chunk = 1 : i64} : tensor<4x2xf32> -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}
