// A shard lookup's rows are read whole, unmasked, when every shard of its
// table holds the full width (table-wise here): a row that passes the
// bounds check is as wide as the result even though the shard argument's
// columns are only known at run time. A column-wise shard is narrower than
// the pooled row: its reads are masked to its columns and the columns past
// them are zero.
// RUN: braid-opt %s -split-input-file --braid-partition --convert-braid-to-cpu | FileCheck %s

// CHECK-LABEL: func.func private @__braid_forward_shard_embedding_bag_t(
// CHECK-SAME: %[[ROWS:[a-z0-9]+]]: tensor<?x?xf32> {bufferization.writable = false}) -> tensor<?x8xf32>
// CHECK: func.call @braidrt_index_error
// CHECK: memref.prefetch
// CHECK: vector.transfer_read %[[ROWS]]{{.*}} {in_bounds = [true]} : tensor<?x?xf32>, vector<8xf32>
// CHECK-NOT: vector.create_mask
// CHECK: tensor.parallel_insert_slice
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x8xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<6xi64> {braid.input = "t.offsets"}) -> tensor<5x8xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<6xi64>) -> tensor<5x8xf32>
    return %e : tensor<5x8xf32>
  }
}

// -----

// CHECK-LABEL: func.func private @__braid_forward_shard_embedding_bag_t(
// CHECK-SAME: %[[ROWS:[a-z0-9]+]]: tensor<?x?xf32> {bufferization.writable = false}) -> tensor<6x5xf32>
// CHECK: func.call @braidrt_index_error
// CHECK: vector.transfer_read %[[ROWS]][%{{.*}}, %{{.*}}], %{{.*}} : tensor<?x?xf32>, vector<5xf32>
// CHECK: %[[COLS:.*]] = tensor.dim %[[ROWS]], %c1
// CHECK: %[[LEFT:.*]] = arith.subi %[[COLS]]
// CHECK: %[[MASK:.*]] = vector.create_mask %[[LEFT]] : vector<5xi1>
// CHECK: arith.select %[[MASK]]
// CHECK: tensor.parallel_insert_slice
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x8xf32> pooling_factor = 2.0 placement = #braid.column_wise<ranks = [0, 1], col_offsets = [0, 3, 8]>
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<6xi64> {braid.input = "t.offsets"}) -> tensor<5x8xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<6xi64>) -> tensor<5x8xf32>
    return %e : tensor<5x8xf32>
  }
}
