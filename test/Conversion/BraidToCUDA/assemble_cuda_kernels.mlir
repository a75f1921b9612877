// REQUIRES: ptxas
// braid-assemble-cuda-kernels: each chip's PTX assembled by ptxas into a
// cubin, and the cubins, with the newest chip's PTX, packed by fatbinary
// into the binary's one object, which the driver loads (cuModuleLoadData)
// picking the device's cubin. The objects come in any order; the PTX kept
// is the newest chip's.
// RUN: rm -rf %t && braid-opt %s --split-input-file --verify-diagnostics \
// RUN:   --braid-assemble-cuda-kernels='kernel-dir=%t' | FileCheck %s
// RUN: %python %S/../../Tools/braid-compile/Inputs/fatbin_images.py %t/add_one.fatbin | FileCheck %s --check-prefix=IMAGES
// RUN: %python -c "import json,sys; k=json.load(open(sys.argv[1])); print(k['chips'], [(e['name'], e['chip'], e['cubin'], e['fatbin'], e['spill_store_bytes']) for e in k['kernels']])" %t/kernels.json \
// RUN:   | FileCheck %s --check-prefix=LISTED
// The pipeline's default format: every kernel a fat binary.
// RUN: braid-opt %S/lower_cuda.mlir --braid-lower-cuda | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: gpu.binary @interaction_dot  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {cubins = ["sm_80", "sm_90"], ptx = "sm_90"}, "P\EDU\BA
// PIPELINE: gpu.binary @embedding_bag_t  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {cubins = ["sm_80", "sm_90"], ptx = "sm_90"}, "P\EDU\BA
// A toolkit without ptxas is a located error (the lit configuration's
// $BRAID_PTXAS would override the toolkit, so it is unset here).
// RUN: env -u BRAID_PTXAS not braid-opt %S/lower_cuda.mlir \
// RUN:   --braid-lower-cuda='toolkit=%t/no-toolkit' 2>&1 | FileCheck %s --check-prefix=NO-TOOLKIT
// NO-TOOLKIT: error: assembling the kernels needs the CUDA toolkit's ptxas: none in $BRAID_PTXAS or '{{.*}}no-toolkit/bin'

// CHECK: gpu.binary @add_one [#gpu.object<#nvvm.target<chip = "sm_90">, properties = {cubins = ["sm_80", "sm_90"], ptx = "sm_90"}, "P\EDU\BA
// CHECK-NOT: assembly
// IMAGES: elf sm_80 magic=ELF
// IMAGES-NEXT: elf sm_90 magic=ELF
// IMAGES-NEXT: ptx sm_90
// IMAGES-NOT: {{.}}
// LISTED: ['sm_80', 'sm_90'] [('add_one', 'sm_80', 'add_one.sm_80.cubin', 'add_one.fatbin', 0), ('add_one', 'sm_90', 'add_one.sm_90.cubin', 'add_one.fatbin', 0)]
module attributes {gpu.container_module} {
  gpu.binary @add_one [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".version 8.0\0A.target sm_90\0A.address_size 64\0A.visible .entry add_one(.param .u64 p)\0A{\0A.reg .f32 %f<3>;\0A.reg .b32 %r<2>;\0A.reg .b64 %rd<5>;\0Ald.param.u64 %rd1, [p];\0Acvta.to.global.u64 %rd2, %rd1;\0Amov.u32 %r1, %tid.x;\0Amul.wide.u32 %rd3, %r1, 4;\0Aadd.s64 %rd4, %rd2, %rd3;\0Ald.global.f32 %f1, [%rd4];\0Aadd.f32 %f2, %f1, 0f3F800000;\0Ast.global.f32 [%rd4], %f2;\0Aret;\0A}\0A">,
                       #gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A.visible .entry add_one(.param .u64 p)\0A{\0A.reg .f32 %f<3>;\0A.reg .b32 %r<2>;\0A.reg .b64 %rd<5>;\0Ald.param.u64 %rd1, [p];\0Acvta.to.global.u64 %rd2, %rd1;\0Amov.u32 %r1, %tid.x;\0Amul.wide.u32 %rd3, %r1, 4;\0Aadd.s64 %rd4, %rd2, %rd3;\0Ald.global.f32 %f1, [%rd4];\0Aadd.f32 %f2, %f1, 0f3F800000;\0Ast.global.f32 [%rd4], %f2;\0Aret;\0A}\0A">]
}

// -----

// A binary that is already a cubin is not PTX to assemble.
module attributes {gpu.container_module} {
  // expected-error @below {{expected PTX objects for NVVM targets (gpu-module-to-binary's 'isa' format)}}
  gpu.binary @cubin [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "\7FELF">]
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{cannot assemble for chip 'gfx90a': expected sm_NN}}
  gpu.binary @amd_chip [#gpu.object<#nvvm.target<chip = "gfx90a">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A.visible .entry add_one(.param .u64 p)\0A{\0A.reg .f32 %f<3>;\0A.reg .b32 %r<2>;\0A.reg .b64 %rd<5>;\0Ald.param.u64 %rd1, [p];\0Acvta.to.global.u64 %rd2, %rd1;\0Amov.u32 %r1, %tid.x;\0Amul.wide.u32 %rd3, %r1, 4;\0Aadd.s64 %rd4, %rd2, %rd3;\0Ald.global.f32 %f1, [%rd4];\0Aadd.f32 %f2, %f1, 0f3F800000;\0Ast.global.f32 [%rd4], %f2;\0Aret;\0A}\0A">]
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{two objects for chip sm_80}}
  gpu.binary @twice [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A.visible .entry add_one(.param .u64 p)\0A{\0A.reg .f32 %f<3>;\0A.reg .b32 %r<2>;\0A.reg .b64 %rd<5>;\0Ald.param.u64 %rd1, [p];\0Acvta.to.global.u64 %rd2, %rd1;\0Amov.u32 %r1, %tid.x;\0Amul.wide.u32 %rd3, %r1, 4;\0Aadd.s64 %rd4, %rd2, %rd3;\0Ald.global.f32 %f1, [%rd4];\0Aadd.f32 %f2, %f1, 0f3F800000;\0Ast.global.f32 [%rd4], %f2;\0Aret;\0A}\0A">,
                     #gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A.visible .entry add_one(.param .u64 p)\0A{\0A.reg .f32 %f<3>;\0A.reg .b32 %r<2>;\0A.reg .b64 %rd<5>;\0Ald.param.u64 %rd1, [p];\0Acvta.to.global.u64 %rd2, %rd1;\0Amov.u32 %r1, %tid.x;\0Amul.wide.u32 %rd3, %r1, 4;\0Aadd.s64 %rd4, %rd2, %rd3;\0Ald.global.f32 %f1, [%rd4];\0Aadd.f32 %f2, %f1, 0f3F800000;\0Ast.global.f32 [%rd4], %f2;\0Aret;\0A}\0A">]
}

// -----

// ptxas's own message, located at the binary.
module attributes {gpu.container_module} {
  // expected-error-re @below {{ptxas failed on kernel 'broken' for sm_80: {{.*}}nowhere}}
  gpu.binary @broken [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A.visible .entry add_one(.param .u64 p)\0A{\0A.reg .f32 %f<3>;\0A.reg .b32 %r<2>;\0A.reg .b64 %rd<5>;\0Ald.param.u64 %rd1, [p];\0Acvta.to.global.u64 %rd2, %rd1;\0Amov.u32 %r1, %tid.x;\0Amul.wide.u32 %rd3, %r1, 4;\0Aadd.s64 %rd4, %rd2, %rd3;\0Ald.global.f32 %f1, [%rd4];\0Aadd.f32 %f2, %f1, %nowhere;\0Ast.global.f32 [%rd4], %f2;\0Aret;\0A}\0A">]
}
