// braid-async-exchanges starts every pooled-row exchange where the partial
// is ready, and sinks its wait and combine_shards to the first use, so the
// later tables' routing and lookups overlap the exchanges.
// RUN: braid-opt %s --braid-partition | braid-opt --pass-pipeline='builtin.module(func.func(braid-async-exchanges))' | FileCheck %s
// Without the pass the exchanges are synchronous, each right before its
// combine_shards.
// RUN: braid-opt %s --braid-partition | FileCheck %s --check-prefix=SYNC
// braid-co-optimize runs it at opt-level 2 only.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-co-optimize="opt-level=2" | FileCheck %s --check-prefix=O2
// RUN: braid-opt %s --braid-partition | braid-opt --braid-co-optimize="opt-level=1" | FileCheck %s --check-prefix=SYNC
// The rewrite is exact: the per-rank program before and after it gives the
// global program's results under the reference semantics.
// RUN: rm -rf %t.sync %t.async && mkdir -p %t.sync %t.async
// RUN: cp %s %t.sync/model.mlir && cp %s %t.async/model.mlir
// RUN: braid-opt %s --braid-partition -o %t.sync/program.mlir
// RUN: braid-opt %t.sync/program.mlir --pass-pipeline='builtin.module(func.func(braid-async-exchanges))' -o %t.async/program.mlir
// RUN: braid-run %t.sync --reference --check --seed 5 | FileCheck %s --check-prefix=EXACT
// RUN: braid-run %t.async --reference --check --seed 5 | FileCheck %s --check-prefix=EXACT

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
// SYNC-LABEL: func.func @forward
// SYNC-NOT: _start
// SYNC: %[[A:.*]] = braid.all_to_all {{.*}} -> tensor<2x8xf32>
// SYNC-NEXT: braid.combine_shards @a(%[[A]]
// SYNC: %[[B:.*]] = braid.reduce_scatter max {{.*}} -> tensor<2x8xf32>
// SYNC-NEXT: braid.combine_shards @b(%[[B]]
// O2: braid.all_to_all_start
// O2: braid.reduce_scatter_start
// O2: braid.wait
// EXACT: check against the global program: max relative error {{.*}}: ok
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
