// Bad pass options are errors located at the module, and exit code 1.
// RUN: not braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=1 ranks-per-node=2 planner=greedy:rows" 2>&1 | FileCheck %s --check-prefix=CHECK-PLANNER
// RUN: not braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=1 ranks-per-node=2 force-sharding=diagonal" 2>&1 | FileCheck %s --check-prefix=CHECK-TYPE
// RUN: not braid-opt %s --braid-plan-sharding="cluster=dgx-h100 nodes=-1 ranks-per-node=2" 2>&1 | FileCheck %s --check-prefix=CHECK-NODES
// (nodes=0, the default, is the hardware's topology.nodes.)

// CHECK-PLANNER: plan_sharding_options.mlir:[[# @LINE + 4]]:1: error: unknown planner 'greedy:rows' (expected braid, greedy:size, greedy:dim, greedy:dim_pooling, greedy:dim_pooling_logrows or keep)
// CHECK-TYPE: plan_sharding_options.mlir:[[# @LINE + 3]]:1: error: unknown sharding type 'diagonal' (expected table_wise, row_wise, column_wise, table_row_wise or data_parallel)
// CHECK-NODES: error: a cluster needs nodes >= 1 and ranks-per-node >= 1, got -1 and 2

module {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
  func.func @f(%i: tensor<?xi64>, %o: tensor<5xi64>) -> tensor<4x4xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x4xf32>
    return %e : tensor<4x4xf32>
  }
}
