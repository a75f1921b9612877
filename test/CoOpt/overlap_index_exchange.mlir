// braid-overlap starts a row-wise table's index exchange (the
// all_to_all_v of the routed indices) where its input is routed and waits
// just before the shard lookup that reads it, so that the other table's
// routing and the exchange of its lengths run beside it.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force | FileCheck %s
// The rewrite is exact: the per-rank program before and after it gives the
// global program's results under the reference semantics.
// RUN: rm -rf %t.sync %t.async && mkdir -p %t.sync %t.async
// RUN: cp %s %t.sync/model.mlir && cp %s %t.async/model.mlir
// RUN: braid-opt %s --braid-partition -o %t.sync/program.mlir
// RUN: braid-opt %t.sync/program.mlir --braid-overlap=force -o %t.async/program.mlir
// RUN: braid-run %t.sync --reference --check --seed 3 | FileCheck %s --check-prefix=EXACT
// RUN: braid-run %t.async --reference --check --seed 3 | FileCheck %s --check-prefix=EXACT
// braid-sim puts the started exchange on the communication stream: the
// program overlaps it with computation.
// RUN: braid-sim %t.async/program.mlir --function forward --expect-overlap | FileCheck %s --check-prefix=SIM

// CHECK-LABEL: func.func @forward
// CHECK: %{{.*}}, %[[VALUES:.*]], %[[COUNTS:.*]] = braid.bucketize @a
// CHECK: %[[T:.*]] = braid.all_to_all_v_start %[[VALUES]], %[[COUNTS]] : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
// CHECK: braid.bucketize @b
// CHECK: %[[R:.*]] = braid.wait %[[T]] : !braid.token<tensor<?xi64>>
// CHECK-NEXT: braid.shard_embedding_bag @a(%[[R]],
// EXACT: check against the global program: max relative error {{.*}}: ok
// SIM: comm {{.*}} hidden behind compute 0.0{{[1-9]}}

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  braid.table @b : tensor<50x8xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 20, 50]>
  func.func @forward(%x: tensor<4x4xf32> {braid.input = "dense"},
                     %ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<5xi64> {braid.input = "a.offsets"},
                     %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<5xi64> {braid.input = "b.offsets"}) -> tensor<4x20xf32> {
    %ea = braid.embedding_bag @a(%ai, %ao) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %eb = braid.embedding_bag @b(%bi, %bo) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %z = braid.interaction cat %x, %ea, %eb : (tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x20xf32>
    return %z : tensor<4x20xf32>
  }
}
