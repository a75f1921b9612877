// A started all_reduce and all_gather (braid-overlap's) and a started
// all_to_all of i64 lengths lower to the runtime's non-blocking calls; the
// wait completes them and keeps both buffers alive until then.
// RUN: braid-opt %s --convert-braid-to-cpu | FileCheck %s
// RUN: braid-opt %s --braid-lower-cpu | FileCheck %s --check-prefix=CHECK-LLVM

// CHECK-LABEL: func.func @forward
// CHECK: %[[H:.*]] = call @braidrt_all_reduce_start_f32(%[[IN:[a-z_0-9]+]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> i64
// CHECK: %[[L:.*]] = call @braidrt_all_to_all_start_i64(%[[LIN:[a-z_0-9]+]], %{{.*}}, %{{.*}}) : (memref<*xi64>, memref<*xi64>, memref<*xi64>) -> i64
// CHECK: %[[G:.*]] = call @braidrt_all_gather_start_f32(%[[GIN:[a-z_0-9]+]], %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i32) -> i64
// CHECK: call @braidrt_wait_exchange_i64(%[[L]], %[[LIN]], %{{.*}}) : (i64, memref<*xi64>, memref<*xi64>) -> ()
// CHECK: call @braidrt_wait_exchange_f32(%[[H]], %[[IN]], %{{.*}}) : (i64, memref<*xf32>, memref<*xf32>) -> ()
// CHECK: call @braidrt_wait_exchange_f32(%[[G]], %[[GIN]], %{{.*}}) : (i64, memref<*xf32>, memref<*xf32>) -> ()
// CHECK-NOT: braid.wait
// CHECK-NOT: braid.all_reduce_start
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_all_reduce_start_f32(!llvm.ptr, !llvm.ptr, i64, i64, i32, i32) -> i64
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_all_gather_start_f32(!llvm.ptr, !llvm.ptr, i64, i32) -> i64
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_all_to_all_start_i64(!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i64
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_wait_exchange_f32(i64, !llvm.ptr, !llvm.ptr)
// CHECK-LLVM-DAG: llvm.func @_mlir_ciface_braidrt_wait_exchange_i64(i64, !llvm.ptr, !llvm.ptr)
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%g: tensor<4x3xf32> {braid.input = "g"}, %n: tensor<4xi64> {braid.input = "n"}) -> (tensor<4x3xf32>, tensor<?xi64>, tensor<8x3xf32>) {
    %t = braid.all_reduce_start sum %g groups [[0, 1]] : tensor<4x3xf32> -> !braid.token<tensor<4x3xf32>>
    %u = braid.all_to_all_start %n split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> !braid.token<tensor<?xi64>>
    %a = braid.all_gather_start %g dim = 0 groups [[0, 1]] : tensor<4x3xf32> -> !braid.token<tensor<8x3xf32>>
    %l = braid.wait %u : !braid.token<tensor<?xi64>>
    %r = braid.wait %t : !braid.token<tensor<4x3xf32>>
    %ga = braid.wait %a : !braid.token<tensor<8x3xf32>>
    return %r, %l, %ga : tensor<4x3xf32>, tensor<?xi64>, tensor<8x3xf32>
  }
}
