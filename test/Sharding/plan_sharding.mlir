// Every sharding type forced, and the planners, on a 2 x 2 cluster.
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2 force-sharding=table_wise" | FileCheck %s --check-prefix=CHECK-TW
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2 force-sharding=row_wise" | FileCheck %s --check-prefix=CHECK-RW
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2 force-sharding=column_wise" | FileCheck %s --check-prefix=CHECK-CW
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2 force-sharding=table_row_wise" | FileCheck %s --check-prefix=CHECK-TRW
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2 force-sharding=data_parallel" | FileCheck %s --check-prefix=CHECK-DP
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2 planner=greedy:size" | FileCheck %s --check-prefix=CHECK-GREEDY
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2" | FileCheck %s --check-prefix=CHECK-BRAID
// Deterministic: planning twice gives the same module, byte for byte.
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2" > %t.1
// RUN: braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=2 ranks-per-node=2" > %t.2
// RUN: diff %t.1 %t.2

// CHECK-TW: braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>
// CHECK-TW: braid.table @big {{.*}} placement = #braid.table_wise<rank = 0>
// CHECK-TW: braid.table @small {{.*}} placement = #braid.table_wise<rank = 1>
// CHECK-TW: braid.linear {{.*}} {placement = #braid.dense_placement<data_parallel>}

// CHECK-RW: braid.table @big {{.*}} placement = #braid.row_wise<ranks = [0, 1, 2, 3], row_offsets = [0, 250, 500, 750, 1000]>
// CHECK-RW: braid.table @small {{.*}} placement = #braid.row_wise<ranks = [0, 1, 2, 3], row_offsets = [0, 2, 5, 7, 10]>

// CHECK-CW: braid.table @big {{.*}} placement = #braid.column_wise<ranks = [0, 1, 2, 3], col_offsets = [0, 4, 8, 12, 16]>
// CHECK-CW: braid.table @small {{.*}} placement = #braid.column_wise<ranks = [{{.*}}], col_offsets = [0, {{.*}}, 16]>

// CHECK-TRW: braid.table @big {{.*}} placement = #braid.table_row_wise<node = 0, ranks = [0, 1], row_offsets = [0, 500, 1000]>
// CHECK-TRW: braid.table @small {{.*}} placement = #braid.table_row_wise<node = 1, ranks = [2, 3], row_offsets = [0, 5, 10]>

// CHECK-DP: braid.table @big {{.*}} placement = #braid.data_parallel<ranks = [0, 1, 2, 3]>
// CHECK-DP: braid.table @small {{.*}} placement = #braid.data_parallel<ranks = [0, 1, 2, 3]>

// The greedy baseline is table-wise; the largest table goes first.
// CHECK-GREEDY: braid.table @big {{.*}} placement = #braid.table_wise<rank = 0>
// CHECK-GREEDY: braid.table @small {{.*}} placement = #braid.table_wise<rank = 1>

// CHECK-BRAID: braid.table @big {{.*}} placement = #braid.
// CHECK-BRAID: braid.table @small {{.*}} placement = #braid.

braid.table @big : tensor<1000x16xf32> pooling_factor = 4.0
braid.table @small : tensor<10x16xf32> pooling_factor = 1.0
func.func @forward(%x: tensor<8x4xf32> {braid.input = "dense"},
                   %bi: tensor<?xi64> {braid.input = "big.indices"}, %bo: tensor<9xi64> {braid.input = "big.offsets"},
                   %si: tensor<?xi64> {braid.input = "small.indices"}, %so: tensor<9xi64> {braid.input = "small.offsets"},
                   %w: tensor<16x4xf32> {braid.param = "w"}, %b: tensor<16xf32> {braid.param = "b"}) -> tensor<8x19xf32> {
  %h = braid.linear %x, %w, %b relu : tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %e0 = braid.embedding_bag @big(%bi, %bo) sum : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x16xf32>
  %e1 = braid.embedding_bag @small(%si, %so) mean : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x16xf32>
  %z = braid.interaction dot %h, %e0, %e1 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x19xf32>
  return %z : tensor<8x19xf32>
}
