// A synchronous all_to_all_v that stands before the op another lookup's
// routing reads (here a cast of its offsets), but whose result is read only
// after that, joins the fused exchange too: the exchange moves down to its
// first reader, so the fused exchange starts after the cast and the
// member's wait stands just before that reader. One whose result nothing
// reads waits right after the start. (Routing that reads only the
// function's inputs moves up instead: bucket_index_exchanges.mlir.)
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=false" | FileCheck %s
// Exact under the reference semantics, fused and expanded for the backends.
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=false" -o %t/fused.mlir
// RUN: braid-opt %t/fused.mlir --braid-expand-fused-exchanges -o %t/expanded.mlir
// RUN: braid-run %s --reference --ranks 2 --seed 11 --dump %t/before > /dev/null
// RUN: braid-run %t/fused.mlir --reference --ranks 2 --seed 11 --dump %t/fused > /dev/null
// RUN: braid-run %t/expanded.mlir --reference --ranks 2 --seed 11 --dump %t/expanded > /dev/null
// RUN: diff -r %t/before %t/fused
// RUN: diff -r %t/before %t/expanded

// CHECK-LABEL: func.func @forward
// CHECK: %[[LA:.*]], %[[VA:.*]], %[[CA:.*]] = braid.bucketize @a
// CHECK-NEXT: %[[XA:.*]] = braid.all_to_all %[[LA]]
// CHECK-NEXT: %[[BO:.*]] = tensor.cast
// CHECK-NEXT: %{{.*}}, %[[VB:.*]], %[[CB:.*]] = braid.bucketize @b(%{{.*}}, %[[BO]])
// CHECK-NEXT: %[[T:.*]]:2 = braid.fused_all_to_all_v_start(%[[VA]], %[[VB]]) counts(%[[CA]], %[[CB]])
// CHECK-NEXT: braid.all_to_all %
// CHECK-NEXT: %[[RB:.*]] = braid.wait %[[T]]#1 : !braid.token<tensor<?xi64>>
// CHECK-NEXT: %[[PB:.*]] = braid.shard_embedding_bag @b(%[[RB]],
// CHECK-NEXT: %[[RA:.*]] = braid.wait %[[T]]#0 : !braid.token<tensor<?xi64>>
// CHECK-NEXT: braid.shard_embedding_bag @a(%[[RA]], %[[XA]])
// CHECK-NOT: braid.all_to_all_v

// CHECK-LABEL: func.func @unread
// CHECK: braid.bucketize @a
// CHECK: braid.bucketize @b
// CHECK-NEXT: %[[U:.*]]:2 = braid.fused_all_to_all_v_start
// CHECK-NEXT: braid.wait %[[U]]#0 : !braid.token<tensor<?xi64>>
// CHECK-NOT: braid.all_to_all_v

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  braid.table @b : tensor<40x8xf32> pooling_factor = 3.0 placement = #braid.table_wise<rank = 1>
  func.func @forward(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<3xi64> {braid.input = "a.offsets"},
                     %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<3xi64> {braid.input = "b.offsets"}) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %xa = braid.all_to_all %la split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> tensor<4xi64>
    %ra = braid.all_to_all_v %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %bo2 = tensor.cast %bo : tensor<3xi64> to tensor<?xi64>
    %lb, %vb, %cb = braid.bucketize @b(%bi, %bo2) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<2xi64>)
    %xb = braid.all_to_all %lb split_dim = 0 concat_dim = 0 split_sizes = [0, 2, 0, 2] groups [[0, 1]] : tensor<2xi64> -> tensor<?xi64>
    %rb = braid.all_to_all_v %vb, %cb : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %pb = braid.shard_embedding_bag @b(%rb, %xb) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x8xf32>
    %pa = braid.shard_embedding_bag @a(%ra, %xa) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<?x8xf32>
    return %pa, %pb : tensor<?x8xf32>, tensor<?x8xf32>
  }
  func.func @unread(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<3xi64> {braid.input = "a.offsets"},
                    %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<3xi64> {braid.input = "b.offsets"}) -> tensor<?x8xf32> {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %ra = braid.all_to_all_v %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %bo2 = tensor.cast %bo : tensor<3xi64> to tensor<?xi64>
    %lb, %vb, %cb = braid.bucketize @b(%bi, %bo2) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<2xi64>)
    %xb = braid.all_to_all %lb split_dim = 0 concat_dim = 0 split_sizes = [0, 2, 0, 2] groups [[0, 1]] : tensor<2xi64> -> tensor<?xi64>
    %rb = braid.all_to_all_v %vb, %cb : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %pb = braid.shard_embedding_bag @b(%rb, %xb) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x8xf32>
    return %pb : tensor<?x8xf32>
  }
}
