// braid-lower-cuda: the CPU target's kernels, tiled onto blocks of 128
// threads (a thread per sample, or per 4 columns of a bag), outlined into kernels named after
// their work, lowered to NVVM with 16-byte row loads, and serialized to PTX
// for each chip (format=ptx: the PTX is what the host embeds; the default,
// format=fatbin, assembles it into cubins, assemble_cuda_kernels.mlir).
// The host keeps the GEMM's runtime call and launches the kernels.
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{chips=sm_90 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=NVVM
// RUN: braid-opt %s --braid-lower-cuda=format=ptx | FileCheck %s
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{threads-per-block=64 chips=sm_80 format=ptx})' \
// RUN:   | FileCheck %s --check-prefix=SIXTY-FOUR

// The lookup is a private function of its own, as on the CPU; each kernel
// module follows the function that launches it.
// NVVM: func.func @forward(
// NVVM: call @__braid_forward_embedding_bag_t(
// NVVM: gpu.launch_func @interaction_dot::@interaction_dot blocks in ({{.*}}) threads in (%c128,
// NVVM: call @braidrt_linear_f32(
// NVVM: gpu.module @interaction_dot [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// NVVM: llvm.func @interaction_dot(
// NVVM: "llvm.intr.vector.reduce.fadd"
// NVVM: func.func private @__braid_forward_embedding_bag_t(
// NVVM: gpu.launch_func @embedding_bag_t::@embedding_bag_t blocks in (%{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c128, %c1{{.*}}, %c1{{.*}})
// NVVM: gpu.module @embedding_bag_t [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// NVVM-SAME: llvm.data_layout
// NVVM: llvm.func @embedding_bag_t({{.*}} attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>}
// NVVM-DAG: nvvm.read.ptx.sreg.ctaid.x{{.*}} : i32
// NVVM-DAG: nvvm.read.ptx.sreg.tid.x{{.*}} : i32
// A thread's 4 columns of a row: one 16-byte vector load, aligned (its
// first column a multiple of 4); the whole row is not one thread's.
// NVVM-NOT: vector<16xf32>
// NVVM: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// NVVM-NOT: vector<16xf32>

// The whole pipeline: the host in the LLVM dialect (buffers through the
// runtime's allocation hooks, the dense layer on the CUDA runtime's
// cuBLASLt GEMM), the launches kept for the translation, and one PTX
// object per default chip, the rows read as ld.global.v4.
// CHECK: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK: llvm.func @forward(
// CHECK: gpu.launch_func @interaction_dot::@interaction_dot
// CHECK: llvm.call @braidrt_cuda_linear_f32(
// CHECK: gpu.binary @interaction_dot
// CHECK: llvm.func internal @__braid_forward_embedding_bag_t(
// CHECK: gpu.launch_func @embedding_bag_t::@embedding_bag_t
// CHECK: gpu.binary @embedding_bag_t  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// CHECK-SAME: assembly = "{{.*}}.target sm_80{{.*}}.entry embedding_bag_t{{.*}}.maxntid 128, 1, 1{{.*}}ld.global.v4.b32{{.*}}#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">{{.*}}.target sm_90{{.*}}.entry embedding_bag_t{{.*}}ld.global.v4.b32
// CHECK: llvm.call @_mlir_ciface_braidrt_cuda_linear_f32(
// CHECK: llvm.func @braid_entry_forward(
// CHECK-NOT: braidrt_linear_f32
// CHECK-NOT: braid.

// The pipeline's options: 64 threads per block, one chip.
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{threads-per-block=64 chips=sm_80 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-module-to-binary 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=SIXTY-FOUR-BEFORE
// SIXTY-FOUR-BEFORE: threads in (%c64,
// SIXTY-FOUR: gpu.binary @embedding_bag_t  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// SIXTY-FOUR-SAME: .maxntid 64, 1, 1
// SIXTY-FOUR-NOT: sm_90
braid.table @t : tensor<40x16xf32> pooling_factor = 2.0
func.func @forward(%x: tensor<?x16xf32> {braid.input = "dense"}, %idx: tensor<?xi64> {braid.input = "t.indices"},
                   %off: tensor<?xi64> {braid.input = "t.offsets"}, %w: tensor<1x17xf32> {braid.param = "w"},
                   %b: tensor<1xf32> {braid.param = "b"}) -> tensor<?x1xf32> {
  %e = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
  %z = braid.interaction dot %x, %e : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x17xf32>
  %y = braid.linear %z, %w, %b sigmoid : tensor<?x17xf32>, tensor<1x17xf32>, tensor<1xf32> -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}
