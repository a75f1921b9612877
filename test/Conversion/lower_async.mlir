// Started exchanges lower to the runtime's non-blocking calls, which return
// a handle; the wait completes them and keeps both buffers alive until then.
// RUN: braid-opt %s --braid-partition | braid-opt --pass-pipeline='builtin.module(func.func(braid-async-exchanges),convert-braid-to-cpu)' | FileCheck %s
// RUN: braid-opt %s --braid-partition | braid-opt --pass-pipeline='builtin.module(func.func(braid-async-exchanges),braid-lower-cpu)' | FileCheck %s --check-prefix=CHECK-LLVM
// A started index exchange (all_to_all_v_start) only posts its counts: the
// runtime moves the rows once they have arrived, and the wait asks how many
// rows came, allocates the result and takes them. With async-counts off (the
// CUDA target's form), the start exchanges the counts, sizes the receive
// buffer from them and starts the rows.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force --convert-braid-to-cpu | FileCheck %s --check-prefix=INDEX
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force --convert-braid-to-cpu=async-counts=false | FileCheck %s --check-prefix=SYNC-COUNTS
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force --braid-lower-cpu | FileCheck %s --check-prefix=INDEX-LLVM
// The CUDA target keeps the counts exchanged at the start, which NCCL's
// lowering rewrites into grouped sends and receives.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force --braid-lower-cuda='format=ptx' | FileCheck %s --check-prefix=INDEX-CUDA
// CHECK-LABEL: func.func @forward
// CHECK: %[[H:.*]] = call @braidrt_reduce_scatter_start_f32(%[[IN:[a-z_0-9]+]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i32, i32) -> i64
// CHECK: call @braidrt_wait_exchange_f32(%[[H]], %[[IN]], %{{.*}}) : (i64, memref<*xf32>, memref<*xf32>) -> ()
// CHECK: bufferization.to_tensor
// CHECK-NOT: braid.wait
// CHECK-NOT: braid.reduce_scatter_start
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_reduce_scatter_start_f32(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_wait_exchange_f32(i64, !llvm.ptr, !llvm.ptr)
// INDEX-LABEL: func.func @forward
// INDEX-NOT: braidrt_exchange_counts
// INDEX: %[[H:.*]] = call @braidrt_all_to_all_v_post_i64(%[[IN:[a-z_0-9]+]], %{{.*}}) : (memref<*xi64>, memref<*xi64>) -> i64
// INDEX: %[[ROWS:.*]] = call @braidrt_all_to_all_v_received_rows(%[[H]]) : (i64) -> i64
// INDEX: %[[N:.*]] = arith.index_cast %[[ROWS]] : i64 to index
// INDEX: %[[OUT:.*]] = memref.alloc(%[[N]]) : memref<?xi64>
// INDEX: %[[U:.*]] = memref.cast %[[OUT]] : memref<?xi64> to memref<*xi64>
// INDEX: call @braidrt_wait_all_to_all_v_i64(%[[H]], %[[IN]], %[[U]]) : (i64, memref<*xi64>, memref<*xi64>) -> ()
// INDEX: bufferization.to_tensor %[[OUT]]
// INDEX-NOT: braid.all_to_all_v
// SYNC-COUNTS-LABEL: func.func @forward
// SYNC-COUNTS: call @braidrt_exchange_counts(%[[SEND:.*]], %{{.*}}) : (memref<*xi64>, memref<*xi64>) -> ()
// SYNC-COUNTS: scf.for
// SYNC-COUNTS: %[[H:.*]] = call @braidrt_all_to_all_v_start_i64(%[[IN:[a-z_0-9]+]], %[[SEND]], %{{.*}}, %{{.*}}) : (memref<*xi64>, memref<*xi64>, memref<*xi64>, memref<*xi64>) -> i64
// SYNC-COUNTS: call @braidrt_wait_exchange_i64(%[[H]], %[[IN]], %{{.*}}) : (i64, memref<*xi64>, memref<*xi64>) -> ()
// SYNC-COUNTS-NOT: braid.all_to_all_v
// INDEX-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_all_to_all_v_post_i64(!llvm.ptr, !llvm.ptr) -> i64
// INDEX-LLVM-DAG: llvm.func @braidrt_all_to_all_v_received_rows(i64) -> i64
// INDEX-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_wait_all_to_all_v_i64(i64, !llvm.ptr, !llvm.ptr)
// INDEX-CUDA-NOT: braidrt_all_to_all_v_post
// INDEX-CUDA-NOT: braidrt_wait_all_to_all_v
// INDEX-CUDA: ncclSend
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x8xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 30, 100]>
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<6xi64> {braid.input = "t.offsets"}) -> tensor<5x8xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<6xi64>) -> tensor<5x8xf32>
    return %e : tensor<5x8xf32>
  }
}
