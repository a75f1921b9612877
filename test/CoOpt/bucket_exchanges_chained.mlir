// braid-bucket-collectives leaves an exchange of another exchange's result
// as it is: fused, it would be packed before the fused op computes its
// input, and its bucket would go after an op that fusing erases. Here x1
// and x2 fuse, y1 (x2's exchange) stays, and y2 stays alone; a chain of two
// exchanges is left whole; and an index exchange routed from what another
// exchange receives keeps its bucketize and exchange in place, while the
// two exchanges of the batch's own indices fuse.
// RUN: braid-opt %s -split-input-file --braid-bucket-collectives="force gradients=false" | FileCheck %s

// CHECK-LABEL: func.func @anchor_erased
// CHECK: braid.all_to_all_start %concat
// CHECK-NOT: braid.all_to_all_start
// CHECK: braid.all_to_all %concat
// CHECK-NEXT: braid.all_to_all %arg2
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @anchor_erased(%a1: tensor<2x3xf32>, %a2: tensor<2x3xf32>, %b2: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %x1 = braid.all_to_all %a1 split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1] groups [[0, 1]] : tensor<2x3xf32> -> tensor<2x3xf32>
    %x2 = braid.all_to_all %a2 split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1] groups [[0, 1]] : tensor<2x3xf32> -> tensor<2x3xf32>
    %y1 = braid.all_to_all %x2 split_dim = 0 concat_dim = 0 split_sizes = [2, 0, 2, 0] groups [[0, 1]] : tensor<2x3xf32> -> tensor<?x3xf32>
    %y2 = braid.all_to_all %b2 split_dim = 0 concat_dim = 0 split_sizes = [2, 0, 2, 0] groups [[0, 1]] : tensor<2x3xf32> -> tensor<?x3xf32>
    %c1 = tensor.cast %y1 : tensor<?x3xf32> to tensor<2x3xf32>
    %c2 = tensor.cast %y2 : tensor<?x3xf32> to tensor<2x3xf32>
    return %x1, %x2, %c1, %c2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
}

// -----

// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[A:.*]] = braid.all_to_all %arg0
// CHECK-NEXT: %[[B:.*]] = braid.all_to_all %[[A]]
// CHECK-NEXT: return %[[B]]
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @chain(%c: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %xc = braid.all_to_all %c split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1] groups [[0, 1]] : tensor<2x3xf32> -> tensor<2x3xf32>
    %xx = braid.all_to_all %xc split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1] groups [[0, 1]] : tensor<2x3xf32> -> tensor<2x3xf32>
    return %xx : tensor<2x3xf32>
  }
}

// -----

// CHECK-LABEL: func.func @routed_from_received
// CHECK: %[[F:.*]]:2 = braid.fused_all_to_all_v_start(%values, %values_1)
// CHECK: %[[R2:.*]] = braid.wait %[[F]]#1
// CHECK-NEXT: braid.bucketize @b(%[[R2]]
// CHECK-NEXT: braid.bucketize @a(%[[R2]]
// CHECK-NEXT: braid.all_to_all_v
// CHECK-NEXT: braid.all_to_all_v
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  braid.table @b : tensor<40x8xf32> pooling_factor = 3.0 placement = #braid.table_wise<rank = 1>
  func.func @routed_from_received(%ai: tensor<?xi64>, %ao: tensor<3xi64>, %ci: tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %lc, %vc, %cc = braid.bucketize @a(%ci, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %r1 = braid.all_to_all_v %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %u = arith.addi %r1, %r1 : tensor<?xi64>
    %r2 = braid.all_to_all_v %vc, %cc : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %lb, %vb, %cb = braid.bucketize @b(%r2, %ao) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<2xi64>)
    %ld, %vd, %cd = braid.bucketize @a(%r2, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %rb = braid.all_to_all_v %vb, %cb : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %rd = braid.all_to_all_v %vd, %cd : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    return %u, %rb, %rd : tensor<?xi64>, tensor<?xi64>, tensor<?xi64>
  }
}

// -----

// CHECK-LABEL: func.func @routed_chain
// CHECK-NEXT: braid.bucketize @a
// CHECK-NEXT: %[[RA:.*]] = braid.all_to_all_v
// CHECK-NEXT: braid.bucketize @b(%[[RA]]
// CHECK-NEXT: braid.all_to_all_v
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  braid.table @b : tensor<40x8xf32> pooling_factor = 3.0 placement = #braid.table_wise<rank = 1>
  func.func @routed_chain(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<3xi64> {braid.input = "a.offsets"},
                     %bo: tensor<3xi64> {braid.input = "b.offsets"}) -> (tensor<?xi64>, tensor<?xi64>) {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %ra = braid.all_to_all_v %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %lb, %vb, %cb = braid.bucketize @b(%ra, %bo) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<2xi64>)
    %rb = braid.all_to_all_v %vb, %cb : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    return %ra, %rb : tensor<?xi64>, tensor<?xi64>
  }
}
