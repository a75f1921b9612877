// braid-lower-cuda checks a lookup's indices and offsets in kernels of
// their own (named after the lookup and what they check), launched before
// the lookup's, whose failures write the error
// record (the host reads neither array: on managed memory its reads moved
// the pages back to it before every lookup).
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{chips=sm_90 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary 2>&1 >/dev/null | FileCheck %s

// CHECK: func.func private @__braid_bags_embedding_bag_t(
// CHECK-NOT: scf.for
// CHECK: gpu.launch_func @embedding_bag_t_indices_check::@embedding_bag_t_indices_check {{.*}} args(%arg0 : memref<?xi64>)
// CHECK-NOT: scf.for
// CHECK: gpu.launch_func @embedding_bag_t_offsets_check::@embedding_bag_t_offsets_check {{.*}} args(%arg1 : memref<?xi64>,
// CHECK: gpu.launch_func @embedding_bag_t::@embedding_bag_t
// CHECK: gpu.module @embedding_bag_t_indices_check
// CHECK: llvm.mlir.global external @braid_error
// CHECK: llvm.func @embedding_bag_t_indices_check(
// CHECK-NOT: llvm.call
// CHECK: llvm.mlir.addressof @braid_error
// CHECK: gpu.module @embedding_bag_t_offsets_check
// CHECK: llvm.mlir.global external @braid_error
// CHECK: llvm.func @embedding_bag_t_offsets_check(
// CHECK-NOT: llvm.call
// CHECK: llvm.mlir.addressof @braid_error
braid.table @t : tensor<40x4xf32> pooling_factor = 2.0
func.func @bags(%idx: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4xf32> {
  %e = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}
