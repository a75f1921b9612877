// braid-lower-cuda on a cat interaction: cat-lanes 4 makes it one kernel
// per feature, each a 1-D grid over (sample, group of 4 columns) with a
// 16-byte load and store a thread, the result's column offset folded into
// the store.
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{chips=sm_90 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary 2>&1 >/dev/null | FileCheck %s

// CHECK: func.func @forward(
// CHECK: gpu.launch_func @interaction_cat::@interaction_cat blocks in ({{.*}}) threads in (%c128,
// CHECK: gpu.launch_func @interaction_cat_1::@interaction_cat_1 blocks in ({{.*}}) threads in (%c128,
// CHECK: gpu.module @interaction_cat
// CHECK: llvm.func @interaction_cat(
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// CHECK: gpu.module @interaction_cat_1
// CHECK: llvm.func @interaction_cat_1(
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// CHECK-NOT: gpu.module @interaction_cat_2
func.func @forward(%x: tensor<?x64xf32>, %e: tensor<?x16xf32>) -> tensor<?x80xf32> {
  %c = braid.interaction cat %x, %e : (tensor<?x64xf32>, tensor<?x16xf32>) -> tensor<?x80xf32>
  return %c : tensor<?x80xf32>
}
