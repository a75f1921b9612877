// braid-fuse-elementwise-kernels, after convert-elementwise-to-linalg: a
// generic of elementwise arithmetic whose result one such generic alone
// reads is fused into it; one read by several stays a kernel of its own.
// RUN: braid-opt %s --pass-pipeline='builtin.module(func.func(convert-elementwise-to-linalg,braid-fuse-elementwise-kernels))' -split-input-file | FileCheck %s
// On the CUDA target the DCN cross layer's chain is one kernel.
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{chips=sm_90 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary -split-input-file 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=CUDA

// A DCN cross layer's x0 * (W x + b) + x: one generic reading x0, the
// projection and x, the product kept in a register.
// CHECK-LABEL: func.func @cross(
// CHECK-SAME: %[[X0:[a-z0-9]+]]: tensor<?x8xf32>, %[[P:[a-z0-9]+]]: tensor<?x8xf32>, %[[X:[a-z0-9]+]]: tensor<?x8xf32>
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[X0]], %[[P]], %[[X]] : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) outs(%[[E]] : tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[M]], %[[C]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
// CUDA-LABEL: func.func @cross(
// CUDA-COUNT-1: gpu.launch_func
// CUDA-NOT: gpu.launch_func
func.func @cross(%x0: tensor<?x8xf32>, %p: tensor<?x8xf32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %m = arith.mulf %x0, %p : tensor<?x8xf32>
  %s = arith.addf %m, %x : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// A chain of three (the backward's (g_a * y + g_b * z) + h): one kernel.
// CHECK-LABEL: func.func @three(
// CHECK: linalg.generic
// CHECK-COUNT-2: arith.mulf
// CHECK-COUNT-2: arith.addf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CUDA-LABEL: func.func @three(
// CUDA-COUNT-1: gpu.launch_func
// CUDA-NOT: gpu.launch_func
func.func @three(%ga: tensor<16x4xf32>, %y: tensor<16x4xf32>, %gb: tensor<16x4xf32>, %z: tensor<16x4xf32>, %h: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %a = arith.mulf %ga, %y : tensor<16x4xf32>
  %b = arith.mulf %gb, %z : tensor<16x4xf32>
  %c = arith.addf %a, %b : tensor<16x4xf32>
  %d = arith.addf %c, %h : tensor<16x4xf32>
  return %d : tensor<16x4xf32>
}

// -----

// The product is read twice (by the sum and as a result): it stays a kernel
// of its own, so nothing is computed twice.
// CHECK-LABEL: func.func @shared(
// CHECK: %[[M:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[M]], %{{.*}} :
// CHECK: arith.addf
// CHECK: return %[[M]], %[[S]]
// CUDA-LABEL: func.func @shared(
// CUDA-COUNT-2: gpu.launch_func
func.func @shared(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %m = arith.mulf %a, %b : tensor<8xf32>
  %s = arith.addf %m, %a : tensor<8xf32>
  return %m, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// A product its one reader reads twice: the reader's inputs are merged, and
// the product is fused into it (the simulator prices it so too).
// CHECK-LABEL: func.func @twice(
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @twice(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %m = arith.mulf %a, %b : tensor<8xf32>
  %s = arith.addf %m, %m : tensor<8xf32>
  return %s : tensor<8xf32>
}
