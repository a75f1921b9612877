// Synchronous all_to_all_vs whose results are read only after the last
// member's indices are routed fuse too: the fused exchange starts after the
// last bucketize and each member becomes a braid.wait just before its first
// reader, so what stood between runs beside the exchange.
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=false" | FileCheck %s
// Exact under the reference semantics, fused and expanded for the backends.
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=false" -o %t/fused.mlir
// RUN: braid-opt %t/fused.mlir --braid-expand-fused-exchanges -o %t/expanded.mlir
// RUN: braid-run %s --reference --ranks 2 --seed 7 --dump %t/before > /dev/null
// RUN: braid-run %t/fused.mlir --reference --ranks 2 --seed 7 --dump %t/fused > /dev/null
// RUN: braid-run %t/expanded.mlir --reference --ranks 2 --seed 7 --dump %t/expanded > /dev/null
// RUN: diff -r %t/before %t/fused
// RUN: diff -r %t/before %t/expanded

// CHECK-LABEL: func.func @forward
// CHECK: %{{.*}}, %[[VA:.*]], %[[CA:.*]] = braid.bucketize @a
// CHECK: %{{.*}}, %[[VB:.*]], %[[CB:.*]] = braid.bucketize @b
// CHECK-NEXT: %[[T:.*]]:2 = braid.fused_all_to_all_v_start(%[[VA]], %[[VB]]) counts(%[[CA]], %[[CB]])
// CHECK-NEXT: braid.all_to_all %
// CHECK-NEXT: braid.all_to_all %
// CHECK-NEXT: %[[RA:.*]] = braid.wait %[[T]]#0 : !braid.token<tensor<?xi64>>
// CHECK-NEXT: braid.shard_embedding_bag @a(%[[RA]],
// CHECK-NEXT: %[[RB:.*]] = braid.wait %[[T]]#1 : !braid.token<tensor<?xi64>>
// CHECK-NEXT: braid.shard_embedding_bag @b(%[[RB]],
// CHECK-NOT: braid.all_to_all_v

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  braid.table @b : tensor<40x8xf32> pooling_factor = 3.0 placement = #braid.table_wise<rank = 1>
  func.func @forward(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<3xi64> {braid.input = "a.offsets"},
                     %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<3xi64> {braid.input = "b.offsets"}) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %lb, %vb, %cb = braid.bucketize @b(%bi, %bo) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<2xi64>)
    %xa = braid.all_to_all %la split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> tensor<4xi64>
    %xb = braid.all_to_all %lb split_dim = 0 concat_dim = 0 split_sizes = [0, 2, 0, 2] groups [[0, 1]] : tensor<2xi64> -> tensor<?xi64>
    %ra = braid.all_to_all_v %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %rb = braid.all_to_all_v %vb, %cb : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %pa = braid.shard_embedding_bag @a(%ra, %xa) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<?x8xf32>
    %pb = braid.shard_embedding_bag @b(%rb, %xb) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x8xf32>
    return %pa, %pb : tensor<?x8xf32>, tensor<?x8xf32>
  }
}
