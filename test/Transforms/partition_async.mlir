// With async-exchanges, every pooled-row exchange is started where the
// partial is ready, and its wait and combine_shards sink to the first use,
// so the later tables' routing and lookups overlap the exchanges.
// RUN: braid-opt %s --braid-partition="async-exchanges=true" | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK: %[[A:.*]] = braid.all_to_all_start {{.*}} -> !braid.token<tensor<2x8xf32>>
// CHECK-NOT: braid.wait
// CHECK: braid.bucketize @b
// CHECK: %[[B:.*]] = braid.reduce_scatter_start max {{.*}} -> !braid.token<tensor<2x8xf32>>
// CHECK: %[[WA:.*]] = braid.wait %[[A]] : !braid.token<tensor<2x8xf32>>
// CHECK-NEXT: %[[EA:.*]] = braid.combine_shards @a(%[[WA]], %{{.*}}) sum
// CHECK-NEXT: %[[WB:.*]] = braid.wait %[[B]] : !braid.token<tensor<2x8xf32>>
// CHECK-NEXT: %[[EB:.*]] = braid.combine_shards @b(%[[WB]], %{{.*}}) max
// CHECK-NEXT: braid.interaction cat %{{.*}}, %[[EA]], %[[EB]]
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
  braid.table @b : tensor<50x8xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 20, 50]>
  func.func @forward(%x: tensor<4x4xf32> {braid.input = "dense"},
                     %ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<5xi64> {braid.input = "a.offsets"},
                     %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<5xi64> {braid.input = "b.offsets"}) -> tensor<4x20xf32> {
    %ea = braid.embedding_bag @a(%ai, %ao) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %eb = braid.embedding_bag @b(%bi, %bo) max : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %z = braid.interaction cat %x, %ea, %eb : (tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x20xf32>
    return %z : tensor<4x20xf32>
  }
}
