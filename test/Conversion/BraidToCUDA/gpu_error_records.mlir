// RUN: braid-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(braid-gpu-error-records))' \
// RUN:   | FileCheck %s

// A kernel's error call claims the module's record (code 1: index) by
// compare-and-swap of the code, writes its operands when it won, and ends
// the thread before the bad index is read. The declaration goes.

// CHECK-LABEL: gpu.module @shard_embedding_bag_t
// CHECK: memref.global "public" @braid_error : memref<3xi64> = dense<0> {alignment = 8 : i64}
// CHECK-NOT: func.func private @braidrt_index_error
// CHECK: gpu.func @shard_embedding_bag_t(%[[I:.*]]: i64, %[[ROWS:.*]]: i64, %[[BAD:.*]]: i1)
// CHECK: scf.if %[[BAD]] {
// CHECK:   %[[REC:.*]] = memref.get_global @braid_error : memref<3xi64>
// CHECK:   %[[CODE:.*]] = arith.constant 1 : i64
// CHECK:   %[[OLD:.*]] = memref.generic_atomic_rmw %[[REC]][%{{.*}}] : memref<3xi64> {
// CHECK:   ^bb0(%[[CUR:.*]]: i64):
// CHECK:     %[[FREE:.*]] = arith.cmpi eq, %[[CUR]], %{{.*}} : i64
// CHECK:     %[[NEXT:.*]] = arith.select %[[FREE]], %[[CODE]], %[[CUR]] : i64
// CHECK:     memref.atomic_yield %[[NEXT]] : i64
// CHECK:   %[[WON:.*]] = arith.cmpi eq, %[[OLD]], %{{.*}} : i64
// CHECK:   scf.if %[[WON]] {
// CHECK:     memref.store %[[I]], %[[REC]][%{{.*}}] : memref<3xi64>
// CHECK:     memref.store %[[ROWS]], %[[REC]][%{{.*}}] : memref<3xi64>
// CHECK:   }
// CHECK:   nvvm.exit
// CHECK-NOT: func.call
// CHECK: gpu.return
gpu.module @shard_embedding_bag_t {
  func.func private @braidrt_index_error(i64, i64)
  gpu.func @shard_embedding_bag_t(%index: i64, %rows: i64, %bad: i1) kernel {
    scf.if %bad {
      func.call @braidrt_index_error(%index, %rows) : (i64, i64) -> ()
    }
    gpu.return
  }
}

// -----

// Offsets errors are code 2; two calls share one record.

// CHECK-LABEL: gpu.module @two_errors
// CHECK: memref.global "public" @braid_error
// CHECK-NOT: memref.global
// CHECK: arith.constant 2 : i64
// CHECK: nvvm.exit
// CHECK: arith.constant 3 : i64
// CHECK: nvvm.exit
gpu.module @two_errors {
  func.func private @braidrt_offsets_error(i64, i64)
  func.func private @braidrt_weights_error(i64, i64)
  gpu.func @two_errors(%a: i64, %b: i64) kernel {
    func.call @braidrt_offsets_error(%a, %b) : (i64, i64) -> ()
    func.call @braidrt_weights_error(%a, %b) : (i64, i64) -> ()
    gpu.return
  }
}

// -----

// A kernel without error calls is left alone: no record.

// CHECK-LABEL: gpu.module @clean
// CHECK-NOT: braid_error
gpu.module @clean {
  gpu.func @clean() kernel {
    gpu.return
  }
}

// -----

gpu.module @bad_operands {
  func.func private @braidrt_index_error(i32, i64)
  gpu.func @bad_operands(%a: i32, %b: i64) kernel {
    // expected-error @below {{runtime error call 'braidrt_index_error' without two i64 operands in a kernel}}
    func.call @braidrt_index_error(%a, %b) : (i32, i64) -> ()
    gpu.return
  }
}
