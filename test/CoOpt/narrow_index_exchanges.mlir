// braid-fuse-collective-compute narrows the routed indices' fused exchange:
// every member sends a braid.bucketize's routed row indices of a table of
// fewer than 2^31 rows, which bucketize has checked against the table, so
// the values move as i32 (wire_type) and each member receives what it did.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force | braid-opt --braid-bucket-collectives="force gradients=false" -o %t.fused.mlir
// RUN: braid-opt %t.fused.mlir --braid-fuse-collective-compute=force | FileCheck %s
// The simulator chooses it on its own: half the bytes on the wire.
// RUN: braid-opt %t.fused.mlir --braid-fuse-collective-compute | FileCheck %s --check-prefix=SIM
// A table of 2^31 rows or more keeps its indices i64, and so does every
// member of its exchange.
// RUN: sed 's/tensor<40x8xf32>/tensor<3000000000x8xf32>/' %s | braid-opt --braid-partition | braid-opt --braid-overlap=force | braid-opt --braid-bucket-collectives="force gradients=false" | braid-opt --braid-fuse-collective-compute=force | FileCheck %s --check-prefix=WIDE
//
// Exact: every rank's results under the reference semantics, narrowed and
// then expanded for the backends (trunci into the pack, extsi out of the
// unpack), match the global program's.
// RUN: rm -rf %t && mkdir -p %t/narrowed %t/expanded
// RUN: cp %s %t/narrowed/model.mlir && cp %s %t/expanded/model.mlir
// RUN: braid-opt %t.fused.mlir --braid-fuse-collective-compute=force -o %t/narrowed/program.mlir
// RUN: braid-opt %t/narrowed/program.mlir --braid-expand-fused-exchanges -o %t/expanded/program.mlir
// RUN: braid-run %t/narrowed --reference --check --seed 5 | FileCheck %s --check-prefix=EXACT
// RUN: braid-run %t/expanded --reference --check --seed 5 | FileCheck %s --check-prefix=EXACT
// RUN: FileCheck %s --check-prefix=EXPANDED < %t/expanded/program.mlir

// CHECK-LABEL: func.func @forward
// CHECK: %{{.*}}, %[[VA:.*]], %[[CA:.*]] = braid.bucketize @a
// CHECK: %{{.*}}, %[[VB:.*]], %[[CB:.*]] = braid.bucketize @b
// CHECK: %{{.*}}, %[[VC:.*]], %[[CC:.*]] = braid.bucketize @c
// CHECK-NEXT: %[[T:.*]]:3 = braid.fused_all_to_all_v_start(%[[VA]], %[[VB]], %[[VC]]) counts(%[[CA]], %[[CB]], %[[CC]]) {wire_type = i32} : (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
// CHECK: %[[RA:.*]] = braid.wait %[[T]]#0 : !braid.token<tensor<?xi64>>
// CHECK: braid.shard_embedding_bag @a(%[[RA]],

// SIM: braid.fused_all_to_all_v_start({{.*}}) {wire_type = i32}

// WIDE-LABEL: func.func @forward
// WIDE: braid.fused_all_to_all_v_start
// WIDE-NOT: wire_type
// WIDE-SAME: -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>

// EXACT: check against the global program: max relative error {{.*}}: ok

// EXPANDED: arith.trunci %{{.*}} : tensor<?xi64> to tensor<?xi32>
// EXPANDED: braid.all_to_all_v_start %{{.*}} : (tensor<?xi32>, tensor<2xi64>) -> !braid.token<tensor<?xi32>>
// EXPANDED: arith.extsi %{{.*}} : tensor<?xi32> to tensor<?xi64>
// EXPANDED-NOT: fused_all_to_all_v_start

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  braid.table @b : tensor<50x8xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 20, 50]>
  braid.table @c : tensor<40x8xf32> pooling_factor = 3.0 placement = #braid.table_wise<rank = 1>
  func.func @forward(%x: tensor<4x4xf32> {braid.input = "dense"},
                     %ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<5xi64> {braid.input = "a.offsets"},
                     %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<5xi64> {braid.input = "b.offsets"},
                     %ci: tensor<?xi64> {braid.input = "c.indices"}, %co: tensor<5xi64> {braid.input = "c.offsets"}) -> tensor<4x28xf32> {
    %ea = braid.embedding_bag @a(%ai, %ao) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %eb = braid.embedding_bag @b(%bi, %bo) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %ec = braid.embedding_bag @c(%ci, %co) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %z = braid.interaction cat %x, %ea, %eb, %ec : (tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x28xf32>
    return %z : tensor<4x28xf32>
  }
}
