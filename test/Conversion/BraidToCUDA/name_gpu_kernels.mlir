// RUN: braid-opt %s --split-input-file --braid-name-gpu-kernels | FileCheck %s

// Kernels take the name convert-braid-to-cpu tagged their work with (the
// metadata of a fused location), found on the kernel or on an op of its
// body; equal names are numbered; untagged kernels are elementwise, with
// the model's name for the value when a location has one. Every launch
// follows its kernel.

// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch_func @embedding_bag_t0::@embedding_bag_t0
// CHECK: gpu.launch_func @embedding_bag_t0_1::@embedding_bag_t0_1
// CHECK: gpu.launch_func @interaction_dot::@interaction_dot
// CHECK: gpu.launch_func @elementwise_relu::@elementwise_relu
// CHECK: gpu.launch_func @elementwise::@elementwise
// CHECK: gpu.module @embedding_bag_t0 {
// CHECK-NEXT: gpu.func @embedding_bag_t0(
// CHECK: gpu.module @embedding_bag_t0_1 {
// CHECK-NEXT: gpu.func @embedding_bag_t0_1(
// CHECK: gpu.module @interaction_dot {
// CHECK: gpu.module @elementwise_relu {
// CHECK: gpu.module @elementwise {
module attributes {gpu.container_module} {
  func.func @forward(%n: index, %m: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @forward_kernel::@forward_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    gpu.launch_func @forward_kernel_0::@forward_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    gpu.launch_func @forward_kernel_1::@forward_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    gpu.launch_func @forward_kernel_2::@forward_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    gpu.launch_func @forward_kernel_3::@forward_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    return
  }
  // Tagged on the kernel itself.
  gpu.module @forward_kernel {
    gpu.func @forward_kernel(%m: memref<?xf32>) kernel {
      gpu.return
    } loc(fused<"embedding_bag_t0">["model.json":1:1])
  }
  // Tagged on an op of the body, inside a named location.
  gpu.module @forward_kernel_0 {
    gpu.func @forward_kernel(%m: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index loc("t0"(fused<"embedding_bag_t0">["model.json":2:1]))
      gpu.return
    }
  }
  gpu.module @forward_kernel_1 {
    gpu.func @forward_kernel(%m: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index loc(fused<"interaction_dot">["model.json":3:1])
      gpu.return
    }
  }
  // Untagged, with the model's name for the value.
  gpu.module @forward_kernel_2 {
    gpu.func @forward_kernel(%m: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index loc("relu"("model.json":4:1))
      gpu.return
    }
  }
  gpu.module @forward_kernel_3 {
    gpu.func @forward_kernel(%m: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A module that is not one kernel keeps its name, and no kernel takes it.
// RUN: braid-opt %s --split-input-file --braid-name-gpu-kernels | FileCheck %s --check-prefix=KEPT
// KEPT-LABEL: func.func @twice
// KEPT: gpu.launch_func @interaction_dot_1::@interaction_dot_1
// KEPT: gpu.module @interaction_dot {
// KEPT-NEXT: gpu.func @helper()
// KEPT: gpu.module @interaction_dot_1 {
module attributes {gpu.container_module} {
  func.func @twice(%n: index, %m: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @twice_kernel::@twice_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<?xf32>)
    return
  }
  gpu.module @interaction_dot {
    gpu.func @helper() {
      gpu.return
    }
  }
  gpu.module @twice_kernel {
    gpu.func @twice_kernel(%m: memref<?xf32>) kernel {
      gpu.return
    } loc(fused<"interaction_dot">["model.json":1:1])
  }
}
