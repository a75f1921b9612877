// In braid-lower-cuda: a tensor 70,000 columns wide (more than the 65,535
// a grid's y dimension holds) is a grid of one dimension, 128 consecutive
// elements to a block.
// RUN: braid-opt %s --pass-pipeline='builtin.module(braid-lower-cuda{chips=sm_90 format=ptx})' \
// RUN:   --mlir-print-ir-before=gpu-kernel-outlining 2>&1 >/dev/null | FileCheck %s
// CHECK-LABEL: func.func @wide(
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %c70000 : index
// CHECK: %[[BLOCKS:.*]] = affine.apply #{{.*}}()[%[[N]]]
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK: arith.remsi %{{.*}}, %c70000
func.func @wide(%x: tensor<?x70000xf32> {braid.input = "dense"}, %y: tensor<?x70000xf32> {braid.input = "d2"}) -> tensor<?x70000xf32> {
  %a = arith.mulf %x, %y : tensor<?x70000xf32>
  %b = arith.addf %a, %x : tensor<?x70000xf32>
  return %b : tensor<?x70000xf32>
}
