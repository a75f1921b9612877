// A row-wise lookup on 2 ranks, partitioned then lowered: the exchanges
// become runtime calls on buffers, the routing and the shard lookup
// generated kernels, and the table argument this rank's shard.
// RUN: braid-opt %s --braid-partition --convert-braid-to-cpu | FileCheck %s
// RUN: braid-opt %s --braid-partition --braid-lower-cpu | FileCheck %s --check-prefix=CHECK-LLVM

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[SHARD:[a-z0-9]+]]: tensor<?x?xf32> {braid.table = "t", bufferization.writable = false}
// Each generated kernel moves to an internal, noinline function of its own
// (the exchanges between them stay): bucketize, then the lengths (a static
// all_to_all, received rows picked by rank) and the indices (counts first,
// then the data), the shard lookup, the reduce_scatter and the combine.
// CHECK: call @__braid_forward_bucketize_t(
// CHECK: call @braidrt_rank() : () -> i64
// CHECK: memref.alloc
// CHECK: call @braidrt_all_to_all_i64(
// CHECK: call @braidrt_exchange_counts(
// CHECK: call @braidrt_all_to_all_v_i64(
// CHECK: call @__braid_forward_shard_embedding_bag_t({{.*}}, %[[SHARD]])
// CHECK: call @braidrt_reduce_scatter_f32({{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i32, i32) -> ()
// CHECK: %[[OUT:.*]] = call @__braid_forward_combine_shards_t(
// CHECK: return %[[OUT]]
// Bucketize: a bounds check over all indices, then count and route.
// CHECK: func.func private @__braid_forward_bucketize_t({{.*}}) -> (tensor<6xi64>, tensor<?xi64>, tensor<2xi64>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: scf.for
// CHECK: func.call @braidrt_index_error
// CHECK: tensor.insert
// The owner's partial over its shard: the pooling kernel, each received
// row checked as it is read, and read whole: a row-wise shard holds every
// column, though its columns are only known at run time, so the read is
// in bounds and nothing is masked (lower_shard_lookup_width.mlir has a
// column-wise shard's masked reads).
// CHECK: func.func private @__braid_forward_shard_embedding_bag_t({{.*}}, %[[ROWS:[a-z0-9]+]]: tensor<?x?xf32> {bufferization.writable = false}) -> tensor<6x8xf32>
// CHECK: scf.forall
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: func.call @braidrt_index_error
// CHECK: memref.prefetch
// CHECK: vector.transfer_read %[[ROWS]]{{.*}} {in_bounds = [true]} : tensor<?x?xf32>, vector<8xf32>
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK-NOT: vector.create_mask
// CHECK: tensor.parallel_insert_slice
// The mean, after the reduce_scatter.
// CHECK: func.func private @__braid_forward_combine_shards_t(
// CHECK: tensor.generate
// CHECK: arith.divf
// CHECK-DAG: func.func private @braidrt_all_to_all_i64(memref<*xi64>, memref<*xi64>, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @braidrt_reduce_scatter_f32(memref<*xf32>, memref<*xf32>, i64, i32, i32) attributes {llvm.emit_c_interface}

// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_all_to_all_v_i64(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_exchange_counts(!llvm.ptr, !llvm.ptr)
// CHECK-LLVM-DAG: llvm.func @braid_entry_forward
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x8xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 30, 100]>
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<6xi64> {braid.input = "t.offsets"}) -> tensor<5x8xf32> {
    %e = braid.embedding_bag @t(%i, %o) mean : (tensor<?xi64>, tensor<6xi64>) -> tensor<5x8xf32>
    return %e : tensor<5x8xf32>
  }
}
