// braid-chunk-pipeline leaves alone a region whose rows are not
// independent: a dense layer whose weight is the gathered batch itself (a
// Gram matrix, every output row reads every input row) is not chunked, even
// forced. A reader of the reduction nested in a region op gets the chunks'
// rows put back together before that op, not inside it.
// RUN: braid-opt %s -split-input-file --braid-chunk-pipeline=force | FileCheck %s

// CHECK-LABEL: func.func @gram
// CHECK-NOT: all_gather_start
// CHECK: braid.all_gather
// CHECK-NEXT: braid.linear
// CHECK-NEXT: braid.reduce_scatter
module attributes {braid.batch_split = array<i64: 4, 4, 4, 4>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @gram(%x: tensor<4x8xf32> {braid.input = "dense"}, %b: tensor<16xf32> {braid.param = "b"}) -> tensor<4x16xf32> {
    %all = braid.all_gather %x dim = 0 groups [[0, 1, 2, 3]] : tensor<4x8xf32> -> tensor<16x8xf32>
    %h = braid.linear %all, %all, %b none : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<16x16xf32>
    %s = braid.reduce_scatter sum %h dim = 0 groups [[0, 1, 2, 3]] : tensor<16x16xf32> -> tensor<4x16xf32>
    return %s : tensor<4x16xf32>
  }
}

// -----

// CHECK-LABEL: func.func @nested_reader
// CHECK: %[[W0:.*]] = braid.wait {{.*}} : !braid.token<tensor<2x8xf32>>
// CHECK-NEXT: %[[W1:.*]] = braid.wait {{.*}} : !braid.token<tensor<2x8xf32>>
// CHECK-NEXT: %[[C:.*]] = tensor.concat dim(0) %[[W0]], %[[W1]]
// CHECK-NEXT: scf.execute_region
// CHECK-NEXT: arith.mulf %[[C]], %[[C]]
// CHECK: arith.addf %[[C]]
module attributes {braid.batch_split = array<i64: 4, 4, 4, 4>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @nested_reader(%x: tensor<4x8xf32> {braid.input = "dense"}, %w: tensor<8x8xf32> {braid.param = "w"}, %b: tensor<8xf32> {braid.param = "b"}, %f: tensor<4x8xf32> {braid.param = "f"}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %all = braid.all_gather %x dim = 0 groups [[0, 1, 2, 3]] : tensor<4x8xf32> -> tensor<16x8xf32>
    %h = braid.linear %all, %w, %b relu : tensor<16x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<16x8xf32>
    %s = braid.reduce_scatter sum %h dim = 0 groups [[0, 1, 2, 3]] : tensor<16x8xf32> -> tensor<4x8xf32>
    %r = scf.execute_region -> tensor<4x8xf32> {
      %y = arith.mulf %s, %s : tensor<4x8xf32>
      scf.yield %y : tensor<4x8xf32>
    }
    %z = arith.addf %s, %f : tensor<4x8xf32>
    return %r, %z : tensor<4x8xf32>, tensor<4x8xf32>
  }
}
