// braid-bucket-collectives fuses the routed indices' all_to_all_vs of
// several lookups (two row-wise tables and a table-wise one) into one
// braid.fused_all_to_all_v_start with a token per member, started after the
// last member's indices are routed; each member's wait keeps its place.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force | braid-opt --braid-bucket-collectives="force gradients=false" | FileCheck %s
// Synchronous members in the partitioner's order, each read before the next
// lookup's indices are routed, fuse too: the bucketizes (pure, reading only
// the function's inputs) move up before the fused start, and each member's
// wait stands just before its first reader.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-bucket-collectives="force gradients=false" | FileCheck %s --check-prefix=SYNC
// (bucket_index_exchanges_sync.mlir: synchronous members read after the
// last one's routing.)
//
// The rewrite and its expansion for the backends are exact: every rank's
// results under the reference semantics match the global program's.
// RUN: rm -rf %t && mkdir -p %t/fused %t/expanded
// RUN: cp %s %t/fused/model.mlir && cp %s %t/expanded/model.mlir
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force | braid-opt --braid-bucket-collectives="force gradients=false" -o %t/fused/program.mlir
// RUN: braid-opt %t/fused/program.mlir --braid-expand-fused-exchanges -o %t/expanded/program.mlir
// RUN: braid-run %t/fused --reference --check --seed 3 | FileCheck %s --check-prefix=EXACT
// RUN: braid-run %t/expanded --reference --check --seed 3 | FileCheck %s --check-prefix=EXACT
// RUN: mkdir -p %t/sync && cp %s %t/sync/model.mlir
// RUN: braid-opt %s --braid-partition | braid-opt --braid-bucket-collectives="force gradients=false" -o %t/sync/program.mlir
// RUN: braid-run %t/sync --reference --check --seed 3 | FileCheck %s --check-prefix=EXACT
// braid-sim prices the fused exchange on the communication stream.
// RUN: braid-sim %t/fused/program.mlir --function forward --expect-overlap | FileCheck %s --check-prefix=SIM

// CHECK-LABEL: func.func @forward
// CHECK: %{{.*}}, %[[VA:.*]], %[[CA:.*]] = braid.bucketize @a
// CHECK: %{{.*}}, %[[VB:.*]], %[[CB:.*]] = braid.bucketize @b
// CHECK: %{{.*}}, %[[VC:.*]], %[[CC:.*]] = braid.bucketize @c
// CHECK-NEXT: %[[T:.*]]:3 = braid.fused_all_to_all_v_start(%[[VA]], %[[VB]], %[[VC]]) counts(%[[CA]], %[[CB]], %[[CC]]) : (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
// CHECK-NOT: braid.all_to_all_v
// CHECK: %[[RA:.*]] = braid.wait %[[T]]#0
// CHECK: braid.shard_embedding_bag @a(%[[RA]],
// CHECK: %[[RB:.*]] = braid.wait %[[T]]#1
// CHECK-NEXT: braid.shard_embedding_bag @b(%[[RB]],
// CHECK: %[[RC:.*]] = braid.wait %[[T]]#2
// CHECK: braid.shard_embedding_bag @c(%[[RC]],

// SYNC-LABEL: func.func @forward
// SYNC-NEXT: %{{.*}}, %[[VA:.*]], %[[CA:.*]] = braid.bucketize @a
// SYNC-NEXT: %{{.*}}, %[[VB:.*]], %[[CB:.*]] = braid.bucketize @b
// SYNC-NEXT: %{{.*}}, %[[VC:.*]], %[[CC:.*]] = braid.bucketize @c
// SYNC-NEXT: %[[T:.*]]:3 = braid.fused_all_to_all_v_start(%[[VA]], %[[VB]], %[[VC]]) counts(%[[CA]], %[[CB]], %[[CC]])
// SYNC-NEXT: braid.all_to_all %
// SYNC-NEXT: %[[RA:.*]] = braid.wait %[[T]]#0
// SYNC-NEXT: braid.shard_embedding_bag @a(%[[RA]],
// SYNC: %[[RB:.*]] = braid.wait %[[T]]#1
// SYNC-NEXT: braid.shard_embedding_bag @b(%[[RB]],
// SYNC: %[[RC:.*]] = braid.wait %[[T]]#2
// SYNC-NEXT: braid.shard_embedding_bag @c(%[[RC]],
// SYNC-NOT: braid.all_to_all_v

// EXACT: check against the global program: max relative error {{.*}}: ok
// SIM: comm {{.*}} hidden behind compute 0.0{{[1-9]}}

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
