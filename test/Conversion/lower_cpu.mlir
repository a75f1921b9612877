// The whole braid-lower-cpu pipeline reaches the LLVM dialect: OpenMP
// parallel loops for the kernels, the C interface the host calls, and the
// runtime's bounds-check hook.
// RUN: braid-opt %s --braid-lower-cpu | FileCheck %s
// Before OpenMP, the kernels are scf.parallel loops mapped to GPU
// processors (bags to blocks), the form the CUDA target lowers.
// RUN: braid-opt %s --pass-pipeline='builtin.module(convert-braid-to-cpu,one-shot-bufferize{bufferize-function-boundaries},func.func(cse,canonicalize),func.func(scf-forall-to-parallel,gpu-map-parallel-loops))' | FileCheck %s --check-prefix=CHECK-MAP
// CHECK-MAP: scf.parallel
// CHECK-MAP: vector.transfer_read
// CHECK-MAP: } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}

// The lookup is an internal, noinline function of its own that @forward
// calls; the interaction is an OpenMP loop in @forward.
// CHECK: llvm.func @forward(
// CHECK: llvm.call @__braid_forward_embedding_bag_t(
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK: llvm.func @_mlir_ciface_forward(
// CHECK: llvm.func internal @__braid_forward_embedding_bag_t({{.*}} attributes {passthrough = ["noinline"]
// CHECK: llvm.call @braidrt_index_error
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK: llvm.func @braidrt_index_error(i64, i64)
// CHECK-NOT: braid.
braid.table @t : tensor<40x4xf32> pooling_factor = 2.0
func.func @forward(%x: tensor<?x4xf32> {braid.input = "dense"}, %idx: tensor<?xi64> {braid.input = "t.indices"},
                   %off: tensor<?xi64> {braid.input = "t.offsets"}, %w: tensor<2x8xf32> {braid.param = "w"},
                   %b: tensor<2xf32> {braid.param = "b"}) -> tensor<?x2xf32> {
  %e = braid.embedding_bag @t(%idx, %off) mean : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
  %z = braid.interaction cat %x, %e : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %y = braid.linear %z, %w, %b relu : tensor<?x8xf32>, tensor<2x8xf32>, tensor<2xf32> -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
