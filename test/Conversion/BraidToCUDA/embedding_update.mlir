// The fused embedding update on the CUDA target: the same generated kernel
// as on the CPU. The host groups the lookup's entries by row
// (braidrt_segment_rows), reads the number of distinct rows and launches
// one thread per row in blocks of 128; each thread sums its row's gradient
// over the row's entries in order and moves the row once. Determinism
// comes from ownership, not from atomics: the kernel has none.
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{chips=sm_90 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary 2>&1 >/dev/null \
// RUN:   | FileCheck %s

// CHECK: func.func @train_step(
// CHECK: call @braidrt_segment_rows(
// CHECK: %[[COUNT:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<1xi64>
// CHECK: %[[ROWS:.*]] = arith.index_cast %[[COUNT]] : i64 to index
// CHECK: %[[BLOCKS:.*]] = affine.apply #{{.*}}()[%[[ROWS]]]
// CHECK: gpu.launch_func @embedding_bag_update_t::@embedding_bag_update_t blocks in (%[[BLOCKS]], %{{.*}}) threads in (%c128, {{.*}} args(%[[ROWS]] : index,
// CHECK: gpu.module @embedding_bag_update_t [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CHECK: llvm.func @embedding_bag_update_t({{.*}} attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: "llvm.intr.vector.reduce.fadd"
// CHECK: llvm.call @__nv_sqrt(%{{.*}}) : (f64) -> f64
// CHECK-NOT: llvm.atomicrmw
// CHECK-NOT: llvm.cmpxchg
// CHECK: llvm.return
braid.table @t : tensor<1000x32xf32> pooling_factor = 4.0
func.func @train_step(%idx: tensor<?xi64> {braid.input = "t.indices"},
                      %off: tensor<?xi64> {braid.input = "t.offsets"},
                      %g: tensor<?x32xf32> {braid.input = "g"}) {
  braid.embedding_bag_update @t(%idx, %off, %g) sum optimizer = {eps = 1.0e-08 : f64, lr = 5.0e-02 : f64, type = "rowwise_adagrad"} : tensor<?xi64>, tensor<?xi64>, tensor<?x32xf32>
  return
}
