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
  func.func private @braidrt_all_to_all_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>) attributes {llvm.emit_c_interface}
  func.func private @braidrt_all_to_all_v_f32(memref<*xf32>, memref<*xi64>, memref<*xf32>, memref<*xi64>) attributes {llvm.emit_c_interface}
  func.func private @braidrt_exchange_counts(memref<*xi64>, memref<*xi64>) attributes {llvm.emit_c_interface}

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
  // CHECK:   memref.copy %[[IN]], %[[OUT]]
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

  // A started all_reduce (avg) returns its event as the handle, and its
  // wait synchronizes that event; so does a started all_to_all's.
  // CHECK-LABEL: func.func @started(
  // CHECK: %[[HANDLE:.*]] = scf.if
  // CHECK:   %[[AVG:.*]] = arith.constant 4 : i32
  // CHECK:   func.call @ncclAllReduce(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[AVG]],
  // CHECK:   %[[EVENT:.*]] = func.call @braidrt_cuda_record_event(%{{.*}}) : (!llvm.ptr) -> i64
  // CHECK:   scf.yield %[[EVENT]] : i64
  // CHECK: call @ncclGroupEnd()
  // CHECK: %[[A2A:.*]] = call @braidrt_cuda_record_event(
  // CHECK: call @braidrt_cuda_wait_event(%[[HANDLE]]) : (i64) -> ()
  // CHECK: call @braidrt_cuda_wait_event(%[[A2A]]) : (i64) -> ()
  // CHECK-NOT: braidrt_wait_exchange
  func.func @started(%in: memref<?xf32>, %out: memref<?xf32>, %split: memref<2xi64>) {
    %g = arith.constant 4 : i64
    %s = arith.constant 2 : i64
    %m = arith.constant 1 : i32
    %avg = arith.constant 3 : i32
    %a = memref.cast %in : memref<?xf32> to memref<*xf32>
    %b = memref.cast %out : memref<?xf32> to memref<*xf32>
    %c = memref.cast %split : memref<2xi64> to memref<*xi64>
    %h = call @braidrt_all_reduce_start_f32(%a, %b, %g, %s, %m, %avg) : (memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> i64
    %h2 = call @braidrt_all_to_all_start_f32(%a, %b, %c) : (memref<*xf32>, memref<*xf32>, memref<*xi64>) -> i64
    call @braidrt_wait_exchange_f32(%h, %a, %b) : (i64, memref<*xf32>, memref<*xf32>) -> ()
    call @braidrt_wait_exchange_f32(%h2, %a, %b) : (i64, memref<*xf32>, memref<*xf32>) -> ()
    return
  }

  // Max and min stay the runtime's MPI calls: NCCL's fmaxf and fminf drop a
  // NaN that Braid's reductions propagate (a row-wise max-pooled table's
  // partial maxima are reduced this way).
  // CHECK-LABEL: func.func @max_and_min_stay_on_mpi(
  // CHECK-NOT: nccl
  // CHECK: call @braidrt_reduce_scatter_f32(
  // CHECK-NOT: nccl
  // CHECK: call @braidrt_all_reduce_start_f32(
  // CHECK-NOT: nccl
  // CHECK: call @braidrt_wait_exchange_f32(
  // CHECK-NOT: nccl
  // CHECK: return
  func.func @max_and_min_stay_on_mpi(%full: memref<32x4xf32>, %part: memref<8x4xf32>) {
    %g = arith.constant 4 : i64
    %s = arith.constant 1 : i64
    %m = arith.constant 1 : i32
    %max = arith.constant 1 : i32
    %min = arith.constant 2 : i32
    %f = memref.cast %full : memref<32x4xf32> to memref<*xf32>
    %p = memref.cast %part : memref<8x4xf32> to memref<*xf32>
    call @braidrt_reduce_scatter_f32(%f, %p, %g, %m, %max) : (memref<*xf32>, memref<*xf32>, i64, i32, i32) -> ()
    %h = call @braidrt_all_reduce_start_f32(%p, %p, %g, %s, %m, %min) : (memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> i64
    call @braidrt_wait_exchange_f32(%h, %p, %p) : (i64, memref<*xf32>, memref<*xf32>) -> ()
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
  // A rank in no group cannot keep an input of another size: the runtime
  // fails the job.
  // CHECK: } else {
  // CHECK:   func.call @braidrt_cuda_no_group_error(
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

  // An uneven all_to_all (split matrix R x R, rows of 16 floats): one NCCL
  // group on the world's communicator; for each peer, the rows this rank
  // sends (split[rank][peer]) and receives (split[peer][rank]), at running
  // offsets, each transfer only when it has rows.
  // CHECK-LABEL: func.func @exchange(
  // CHECK-SAME: %[[IN:.*]]: memref<?x16xf32>, %[[OUT:.*]]: memref<?x16xf32>, %[[SPLIT:.*]]: memref<4xi64>
  // CHECK: %[[COMM:.*]] = call @braidrt_cuda_nccl_comm() : () -> !llvm.ptr
  // CHECK: %[[STREAM:.*]] = call @braidrt_cuda_comm_stream()
  // CHECK: call @braidrt_rank()
  // CHECK: call @braidrt_world_size()
  // CHECK: %[[START:.*]] = call @ncclGroupStart() : () -> i32
  // CHECK: call @braidrt_cuda_nccl_result(%[[START]], %[[COMM]], %{{.*}})
  // CHECK: scf.for %[[PEER:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[SENT:.*]] = %{{.*}}, %[[GOT:.*]] = %{{.*}}) -> (index, index) {
  // CHECK:   memref.load %[[SPLIT]]
  // CHECK:   memref.load %[[SPLIT]]
  // CHECK:   scf.if
  // CHECK:     llvm.inttoptr
  // CHECK:     func.call @ncclSend(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[COMM]], %[[STREAM]]) : (!llvm.ptr, i64, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
  // CHECK:   scf.if
  // CHECK:     func.call @ncclRecv(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[COMM]], %[[STREAM]]) : (!llvm.ptr, i64, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
  // CHECK:   scf.yield
  // CHECK: call @ncclGroupEnd() : () -> i32
  // CHECK: call @braidrt_cuda_stream_wait(%[[STREAM]])
  // The counts' exchange: one i64 to and from every peer (ncclInt64, 4).
  // CHECK: arith.constant 4 : i32
  // CHECK: call @ncclGroupStart()
  // CHECK: func.call @ncclSend(
  // CHECK: func.call @ncclRecv(
  // CHECK: call @ncclGroupEnd()
  // all_to_all_v: the rows per peer from the two counts buffers.
  // CHECK: call @ncclGroupStart()
  // CHECK: func.call @ncclSend(
  // CHECK: func.call @ncclRecv(
  // CHECK: call @ncclGroupEnd()
  // CHECK-NOT: braidrt_all_to_all
  // CHECK-NOT: braidrt_exchange_counts
  // CHECK: return
  func.func @exchange(%in: memref<?x16xf32>, %out: memref<?x16xf32>, %split: memref<4xi64>,
                      %send: memref<2xi64>, %recv: memref<2xi64>) {
    %a = memref.cast %in : memref<?x16xf32> to memref<*xf32>
    %b = memref.cast %out : memref<?x16xf32> to memref<*xf32>
    %c = memref.cast %split : memref<4xi64> to memref<*xi64>
    %s = memref.cast %send : memref<2xi64> to memref<*xi64>
    %r = memref.cast %recv : memref<2xi64> to memref<*xi64>
    call @braidrt_all_to_all_f32(%a, %b, %c) : (memref<*xf32>, memref<*xf32>, memref<*xi64>) -> ()
    call @braidrt_exchange_counts(%s, %r) : (memref<*xi64>, memref<*xi64>) -> ()
    call @braidrt_all_to_all_v_f32(%a, %s, %b, %r) : (memref<*xf32>, memref<*xi64>, memref<*xf32>, memref<*xi64>) -> ()
    return
  }

  // Kept on the CPU runtime: an f64 all_reduce, a reduction that is not a
  // constant, an exchange on a strided view.
  // CHECK-LABEL: func.func @kept(
  // CHECK: call @braidrt_all_reduce_f64(
  // CHECK: call @braidrt_all_reduce_f32(
  // CHECK: call @braidrt_all_to_all_f32(
  // CHECK-NOT: nccl
  // CHECK: return
  func.func @kept(%x: memref<4xf64>, %y: memref<4xf32>, %op: i32, %view: memref<4x16xf32, strided<[32, 1]>>, %split: memref<4xi64>) {
    %v = memref.cast %view : memref<4x16xf32, strided<[32, 1]>> to memref<*xf32>
    %sp = memref.cast %split : memref<4xi64> to memref<*xi64>
    %g = arith.constant 2 : i64
    %s = arith.constant 1 : i64
    %m = arith.constant 1 : i32
    %sum = arith.constant 0 : i32
    %a = memref.cast %x : memref<4xf64> to memref<*xf64>
    call @braidrt_all_reduce_f64(%a, %a, %g, %s, %m, %sum) : (memref<*xf64>, memref<*xf64>, i64, i64, i32, i32) -> ()
    %b = memref.cast %y : memref<4xf32> to memref<*xf32>
    call @braidrt_all_reduce_f32(%b, %b, %g, %s, %m, %op) : (memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> ()
    call @braidrt_all_to_all_f32(%v, %v, %sp) : (memref<*xf32>, memref<*xf32>, memref<*xi64>) -> ()
    return
  }
}
