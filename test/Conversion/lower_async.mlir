// Started exchanges lower to the runtime's non-blocking calls, which return
// a handle; the wait completes them and keeps both buffers alive until then.
// RUN: braid-opt %s --braid-partition | braid-opt --pass-pipeline='builtin.module(func.func(braid-async-exchanges),convert-braid-to-cpu)' | FileCheck %s
// RUN: braid-opt %s --braid-partition | braid-opt --pass-pipeline='builtin.module(func.func(braid-async-exchanges),braid-lower-cpu)' | FileCheck %s --check-prefix=CHECK-LLVM
// A started index exchange (all_to_all_v_start) exchanges its counts at
// the start, sizes the receive buffer from them and starts the rows.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-overlap=force --convert-braid-to-cpu | FileCheck %s --check-prefix=INDEX

// CHECK-LABEL: func.func @forward
// CHECK: %[[H:.*]] = call @braidrt_reduce_scatter_start_f32(%[[IN:[a-z_0-9]+]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i32, i32) -> i64
// CHECK: call @braidrt_wait_exchange_f32(%[[H]], %[[IN]], %{{.*}}) : (i64, memref<*xf32>, memref<*xf32>) -> ()
// CHECK: bufferization.to_tensor
// CHECK-NOT: braid.wait
// CHECK-NOT: braid.reduce_scatter_start
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_reduce_scatter_start_f32(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_wait_exchange_f32(i64, !llvm.ptr, !llvm.ptr)
// INDEX-LABEL: func.func @forward
// INDEX: call @braidrt_exchange_counts(%[[SEND:.*]], %{{.*}}) : (memref<*xi64>, memref<*xi64>) -> ()
// INDEX: scf.for
// INDEX: %[[H:.*]] = call @braidrt_all_to_all_v_start_i64(%[[IN:[a-z_0-9]+]], %[[SEND]], %{{.*}}, %{{.*}}) : (memref<*xi64>, memref<*xi64>, memref<*xi64>, memref<*xi64>) -> i64
// INDEX: call @braidrt_wait_exchange_i64(%[[H]], %[[IN]], %{{.*}}) : (i64, memref<*xi64>, memref<*xi64>) -> ()
// INDEX-NOT: braid.all_to_all_v
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x8xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 30, 100]>
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<6xi64> {braid.input = "t.offsets"}) -> tensor<5x8xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<6xi64>) -> tensor<5x8xf32>
    return %e : tensor<5x8xf32>
  }
}
