// The dense optimizer step on the CUDA target: the host checks Adam's step
// number and computes the bias corrections once; one kernel, a thread per
// element of the parameter (named after it), computes the new parameter and both moments,
// so neither the parameter nor its state is touched by the host.
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{chips=sm_90 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary 2>&1 >/dev/null \
// RUN:   | FileCheck %s

// CHECK: func.func @step(
// CHECK: call @braidrt_step_error(
// CHECK: math.powf %{{.*}} : f64
// CHECK: math.powf %{{.*}} : f64
// A thread per element, 128 to a block (2048 elements: 16 blocks).
// CHECK: gpu.launch_func @dense_update_top_weight::@dense_update_top_weight blocks in (%c16, %c1{{.*}}, %c1{{.*}}) threads in (%c128, %c1{{.*}}, %c1{{.*}})
// CHECK-NOT: braidrt_dense_update
// CHECK: gpu.module @dense_update_top_weight [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CHECK: llvm.func @dense_update_top_weight({{.*}} attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>
// CHECK: llvm.call @__nv_sqrt(%{{.*}}) : (f64) -> f64
// CHECK-COUNT-3: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK: llvm.return
func.func @step(%w: tensor<64x32xf32> {braid.param = "top.weight"}, %g: tensor<64x32xf32>, %t: tensor<i64>, %m: tensor<64x32xf32>,
                %v: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>) {
  %w2, %m2, %v2 = braid.dense_update %w, %g step %t state(%m, %v) optimizer = {beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, eps = 1.0e-08 : f64, lr = 1.0e-03 : f64, type = "adam"} : (tensor<64x32xf32>, tensor<64x32xf32>, tensor<i64>, tensor<64x32xf32>, tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>)
  return %w2, %m2, %v2 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>
}
