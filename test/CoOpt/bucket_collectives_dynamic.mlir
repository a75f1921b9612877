// braid-bucket-collectives buckets collectives of static shape only, in and
// out: an all_gather or reduce_scatter whose result has a dynamic size
// (which the verifier accepts) has no known share of a bucket and stays.
// RUN: braid-opt %s -split-input-file --braid-bucket-collectives=force | FileCheck %s

// CHECK-LABEL: func.func @gathers
// CHECK-NOT: tensor.concat
// CHECK: braid.all_gather %arg0
// CHECK-NEXT: braid.all_gather %arg1
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @gathers(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
    %x = braid.all_gather %a dim = 0 groups [[0, 1]] : tensor<2x3xf32> -> tensor<?x3xf32>
    %y = braid.all_gather %b dim = 0 groups [[0, 1]] : tensor<2x3xf32> -> tensor<?x3xf32>
    return %x, %y : tensor<?x3xf32>, tensor<?x3xf32>
  }
}

// -----

// CHECK-LABEL: func.func @scatters
// CHECK-NOT: tensor.concat
// CHECK: braid.reduce_scatter sum %arg0
// CHECK-NEXT: braid.reduce_scatter sum %arg1
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @scatters(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
    %x = braid.reduce_scatter sum %a dim = 0 groups [[0, 1]] : tensor<4x3xf32> -> tensor<?x3xf32>
    %y = braid.reduce_scatter sum %b dim = 0 groups [[0, 1]] : tensor<4x3xf32> -> tensor<?x3xf32>
    return %x, %y : tensor<?x3xf32>, tensor<?x3xf32>
  }
}
