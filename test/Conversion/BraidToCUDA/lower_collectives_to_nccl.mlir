// RUN: braid-opt %s --braid-lower-collectives-to-nccl | FileCheck %s

// The host's f32 gradient collectives (the CPU runtime's calls after
// bufferization) become NCCL calls on the communication stream: the
// group's communicator (taken by every rank), then, on members only, the
// NCCL call with the buffers' pointers and element counts, its result
// check, and a wait on the stream (blocking) or an event (started). A rank
// in no group copies its input.

module {
  func.func private @braidrt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) attributes {llvm.emit_c_interface}
  func.func private @braidrt_all_reduce_start_f32(memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> i64 attributes {llvm.emit_c_interface}
  func.func private @braidrt_reduce_scatter_f32(memref<*xf32>, memref<*xf32>, i64, i32, i32) attributes {llvm.emit_c_interface}
  func.func private @braidrt_all_gather_f32(memref<*xf32>, memref<*xf32>, i64, i32) attributes {llvm.emit_c_interface}
  func.func private @braidrt_all_reduce_f64(memref<*xf64>, memref<*xf64>, i64, i64, i32, i32) attributes {llvm.emit_c_interface}
  func.func private @braidrt_all_to_all_start_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>) -> i64 attributes {llvm.emit_c_interface}
  func.func private @braidrt_wait_exchange_f32(i64, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}

  // CHECK-LABEL: func.func @blocking_all_reduce(
  // CHECK-SAME: %[[IN:.*]]: memref<16x4xf32>, %[[OUT:.*]]: memref<16x4xf32>)
  // CHECK: %[[COMM:.*]] = call @braidrt_cuda_comm(%{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i32) -> !llvm.ptr
  // CHECK: scf.if %{{.*}} -> (i64) {
  // CHECK:   %[[STREAM:.*]] = func.call @braidrt_cuda_comm_stream() : () -> !llvm.ptr
  // CHECK:   %[[SEND_ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[IN]]
  // CHECK:   %[[SEND:.*]] = llvm.inttoptr
  // CHECK:   %[[RECV_ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
  // CHECK:   %[[RECV:.*]] = llvm.inttoptr
  // CHECK:   %[[COUNT:.*]] = arith.index_cast %{{.*}} : index to i64
  // CHECK:   %[[F32:.*]] = arith.constant 7 : i32
  // CHECK:   %[[SUM:.*]] = arith.constant 0 : i32
  // CHECK:   %[[STATUS:.*]] = func.call @ncclAllReduce(%[[SEND]], %[[RECV]], %[[COUNT]], %[[F32]], %[[SUM]], %[[COMM]], %[[STREAM]]) : (!llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
  // CHECK:   func.call @braidrt_cuda_nccl_result(%[[STATUS]], %[[COMM]], %{{.*}})
  // CHECK:   func.call @braidrt_cuda_stream_wait(%[[STREAM]])
  // CHECK: } else {
  // CHECK:   %[[FROM:.*]] = memref.cast %[[IN]] : memref<16x4xf32> to memref<?x?xf32>
  // CHECK:   %[[TO:.*]] = memref.cast %[[OUT]] : memref<16x4xf32> to memref<?x?xf32>
  // CHECK:   memref.copy %[[FROM]], %[[TO]]
  // CHECK: }
  // CHECK-NOT: braidrt_all_reduce_f32
  func.func @blocking_all_reduce(%in: memref<16x4xf32>, %out: memref<16x4xf32>) {
    %g = arith.constant 8 : i64
    %s = arith.constant 1 : i64
    %m = arith.constant 1 : i32
    %sum = arith.constant 0 : i32
    %a = memref.cast %in : memref<16x4xf32> to memref<*xf32>
    %b = memref.cast %out : memref<16x4xf32> to memref<*xf32>
    call @braidrt_all_reduce_f32(%a, %b, %g, %s, %m, %sum) : (memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> ()
    return
  }

  // A started all_reduce (max) returns its event as the handle, and its
  // wait synchronizes that event; an all_to_all's wait stays with MPI.
  // CHECK-LABEL: func.func @started(
  // CHECK: %[[HANDLE:.*]] = scf.if
  // CHECK:   %[[MAX:.*]] = arith.constant 2 : i32
  // CHECK:   func.call @ncclAllReduce(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MAX]],
  // CHECK:   %[[EVENT:.*]] = func.call @braidrt_cuda_record_event(%{{.*}}) : (!llvm.ptr) -> i64
  // CHECK:   scf.yield %[[EVENT]] : i64
  // CHECK: %[[A2A:.*]] = call @braidrt_all_to_all_start_f32(
  // CHECK: call @braidrt_cuda_wait_event(%[[HANDLE]]) : (i64) -> ()
  // CHECK: call @braidrt_wait_exchange_f32(%[[A2A]],
  func.func @started(%in: memref<?xf32>, %out: memref<?xf32>, %split: memref<2xi64>) {
    %g = arith.constant 4 : i64
    %s = arith.constant 2 : i64
    %m = arith.constant 1 : i32
    %max = arith.constant 1 : i32
    %a = memref.cast %in : memref<?xf32> to memref<*xf32>
    %b = memref.cast %out : memref<?xf32> to memref<*xf32>
    %c = memref.cast %split : memref<2xi64> to memref<*xi64>
    %h = call @braidrt_all_reduce_start_f32(%a, %b, %g, %s, %m, %max) : (memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> i64
    %h2 = call @braidrt_all_to_all_start_f32(%a, %b, %c) : (memref<*xf32>, memref<*xf32>, memref<*xi64>) -> i64
    call @braidrt_wait_exchange_f32(%h, %a, %b) : (i64, memref<*xf32>, memref<*xf32>) -> ()
    call @braidrt_wait_exchange_f32(%h2, %a, %b) : (i64, memref<*xf32>, memref<*xf32>) -> ()
    return
  }

  // reduce_scatter counts the rank's share (its output), all_gather the
  // rank's part (its input); both over consecutive ranks (stride 1).
  // CHECK-LABEL: func.func @scatter_and_gather(
  // CHECK-SAME: %[[FULL:.*]]: memref<32x4xf32>, %[[PART:.*]]: memref<8x4xf32>)
  // CHECK: %[[ONE:.*]] = arith.constant 1 : i64
  // CHECK: call @braidrt_cuda_comm(%{{.*}}, %[[ONE]], %{{.*}})
  // CHECK: memref.dim %[[PART]], %{{.*}} : memref<8x4xf32>
  // CHECK: func.call @ncclReduceScatter(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
  // CHECK: call @braidrt_cuda_comm(
  // CHECK: memref.dim %[[PART]], %{{.*}} : memref<8x4xf32>
  // CHECK: func.call @ncclAllGather(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr, !llvm.ptr) -> i32
  func.func @scatter_and_gather(%full: memref<32x4xf32>, %part: memref<8x4xf32>) {
    %g = arith.constant 4 : i64
    %m = arith.constant 1 : i32
    %sum = arith.constant 0 : i32
    %f = memref.cast %full : memref<32x4xf32> to memref<*xf32>
    %p = memref.cast %part : memref<8x4xf32> to memref<*xf32>
    call @braidrt_reduce_scatter_f32(%f, %p, %g, %m, %sum) : (memref<*xf32>, memref<*xf32>, i64, i32, i32) -> ()
    call @braidrt_all_gather_f32(%p, %f, %g, %m) : (memref<*xf32>, memref<*xf32>, i64, i32) -> ()
    return
  }

  // Kept on the CPU runtime: f64, and a reduction that is not a constant.
  // CHECK-LABEL: func.func @kept(
  // CHECK: call @braidrt_all_reduce_f64(
  // CHECK: call @braidrt_all_reduce_f32(
  // CHECK-NOT: nccl
  // CHECK: return
  func.func @kept(%x: memref<4xf64>, %y: memref<4xf32>, %op: i32) {
    %g = arith.constant 2 : i64
    %s = arith.constant 1 : i64
    %m = arith.constant 1 : i32
    %sum = arith.constant 0 : i32
    %a = memref.cast %x : memref<4xf64> to memref<*xf64>
    call @braidrt_all_reduce_f64(%a, %a, %g, %s, %m, %sum) : (memref<*xf64>, memref<*xf64>, i64, i64, i32, i32) -> ()
    %b = memref.cast %y : memref<4xf32> to memref<*xf32>
    call @braidrt_all_reduce_f32(%b, %b, %g, %s, %m, %op) : (memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> ()
    return
  }
}
