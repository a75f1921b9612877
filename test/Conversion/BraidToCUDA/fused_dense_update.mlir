// A gradient bucket's optimizer steps on the CUDA target: one kernel for
// both parameters (named after the first), a thread per element of all
// of them (2048 + 64 = 2112: 17 blocks of 128), each thread picking its
// parameter's buffers by a switch and reading its gradient from the bucket
// at the parameter's offset; the host checks Adam's step number and
// computes the bias corrections once.
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{chips=sm_90 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary 2>&1 >/dev/null \
// RUN:   | FileCheck %s

// CHECK: func.func @step(
// CHECK: call @braidrt_step_error(
// CHECK: math.powf %{{.*}} : f64
// CHECK: math.powf %{{.*}} : f64
// CHECK: gpu.launch_func @fused_dense_update_top_weight::@fused_dense_update_top_weight blocks in (%c17, %c1{{.*}}, %c1{{.*}}) threads in (%c128, %c1{{.*}}, %c1{{.*}}) args(%arg2 : memref<2200xf32>
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.module @fused_dense_update_top_weight
// CHECK: llvm.func @fused_dense_update_top_weight(
// CHECK: llvm.switch %{{.*}} : i32, ^[[LAST:bb[0-9]+]] [
// CHECK-NEXT: 0: ^[[FIRST:bb[0-9]+]]
// Each member's body: its gradient, parameter and both moments read, the
// square root, then the new parameter and both moments written.
// CHECK: ^[[FIRST]]:
// CHECK: llvm.call @__nv_sqrt(%{{.*}}) : (f64) -> f64
// CHECK-COUNT-3: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK: ^[[LAST]]:
// CHECK: llvm.call @__nv_sqrt(%{{.*}}) : (f64) -> f64
// CHECK-COUNT-3: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK: llvm.return
func.func @step(%w: tensor<64x32xf32> {braid.param = "top.weight"}, %b: tensor<64xf32> {braid.param = "top.bias"}, %g: tensor<2200xf32>, %t: tensor<i64>,
                %mw: tensor<64x32xf32>, %vw: tensor<64x32xf32>, %mb: tensor<64xf32>, %vb: tensor<64xf32>) -> (tensor<64x32xf32>, tensor<64xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>) {
  %r:6 = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 2050] step %t state(%mw, %vw, %mb, %vb) optimizer = {beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, eps = 1.0e-08 : f64, lr = 1.0e-03 : f64, type = "adam"} : (tensor<64x32xf32>, tensor<64xf32>, tensor<2200xf32>, tensor<i64>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64x32xf32>, tensor<64xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<64x32xf32>, tensor<64xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>
}
