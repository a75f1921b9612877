// The registered braid-shard pipeline plans for the module's cluster and
// partitions; here every table is forced row-wise through the pass options.
// RUN: braid-opt %s --braid-shard | FileCheck %s
// RUN: braid-opt %s --pass-pipeline="builtin.module(braid-plan-sharding{force-sharding=row_wise},braid-partition)" | FileCheck %s --check-prefix=CHECK-ROWS

// CHECK: module attributes {braid.batch_split = array<i64: 3, 3>
// CHECK: braid.table @t {{.*}} placement = #braid.
// CHECK: func.func @forward(%{{.*}}: tensor<?xi64> {braid.input = "t.indices"}, %{{.*}}: tensor<?xi64> {braid.input = "t.offsets"}) -> tensor<?x8xf32>
// CHECK: return {{.*}} : tensor<?x8xf32>

// CHECK-ROWS: placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 250, 500]>
// CHECK-ROWS: braid.bucketize @t
// CHECK-ROWS: braid.reduce_scatter sum
// CHECK-ROWS: braid.combine_shards @t({{.*}}) sum bags_per_rank = 3

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-a100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<500x8xf32> pooling_factor = 2.0
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<7xi64> {braid.input = "t.offsets"}) -> tensor<6x8xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<7xi64>) -> tensor<6x8xf32>
    return %e : tensor<6x8xf32>
  }
}
