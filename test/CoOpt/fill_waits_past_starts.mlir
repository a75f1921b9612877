// braid-fill-waits' third alternative, weighed by the simulator only: the
// work after a later start (%z, which reads nothing in flight) moves above
// an earlier wait, past that start. Here the all_to_all's 46 us are exposed
// and %z (60 us) runs beside the small all_reduce; moved above the
// all_to_all's wait it fills that wait instead, and the all_reduce's 19 us
// are exposed: 0.225 -> 0.209 ms.
// RUN: braid-opt %s --braid-fill-waits -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: braid-sim %s | FileCheck %s --check-prefix=BEFORE
// RUN: braid-sim %t.mlir --expect-overlap | FileCheck %s --check-prefix=AFTER
// Forced, the pass moves work up to the next communication only: nothing
// here (%h reads the wait, and the scan stops at the all_reduce's start).
// RUN: braid-opt %s --braid-fill-waits=force | FileCheck %s --check-prefix=FORCED
// The same values on every rank, bit for bit, on 4 simulated ranks.
// RUN: rm -rf %t.before %t.after
// RUN: braid-run %s --reference --ranks 4 --seed 3 --dump %t.before > /dev/null
// RUN: braid-run %t.mlir --reference --ranks 4 --seed 3 --dump %t.after > /dev/null
// RUN: diff -r %t.before %t.after

// CHECK-LABEL: func.func @forward
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start %arg1
// CHECK-NEXT: %[[Z:.*]] = braid.linear %arg0, %arg4, %arg5
// CHECK-NEXT: %[[XA:.*]] = braid.wait %[[T]]
// CHECK-NEXT: %[[H:.*]] = braid.linear %[[XA]], %arg2, %arg3
// CHECK-NEXT: %[[S:.*]] = braid.all_reduce_start sum %[[H]]
// CHECK-NEXT: %[[R:.*]] = braid.wait %[[S]]
// CHECK-NEXT: return %[[R]], %[[Z]]

// BEFORE: @forward on 4 ranks of dgx-h100: 0.225 ms per iteration
// BEFORE-NEXT: exposed 0.046 ms
// AFTER: @forward on 4 ranks of dgx-h100: 0.209 ms per iteration
// AFTER-NEXT: exposed 0.027 ms

// FORCED-LABEL: func.func @forward
// FORCED-NEXT: braid.all_to_all_start
// FORCED-NEXT: braid.wait
// FORCED-NEXT: braid.linear
// FORCED-NEXT: braid.all_reduce_start
// FORCED-NEXT: braid.linear %arg0

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @forward(%x: tensor<1024x1024xf32> {braid.input = "dense"},
                     %a: tensor<4096x1024xf32> {braid.input = "sparse"},
                     %w1: tensor<64x1024xf32> {braid.param = "w1"}, %b1: tensor<64xf32> {braid.param = "b1"},
                     %w2: tensor<1024x1024xf32> {braid.param = "w2"}, %b2: tensor<1024xf32> {braid.param = "b2"})
      -> (tensor<4096x64xf32>, tensor<1024x1024xf32>) {
    %t = braid.all_to_all_start %a split_dim = 0 concat_dim = 0 split_sizes = [1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024] groups [[0, 1, 2, 3]] : tensor<4096x1024xf32> -> !braid.token<tensor<4096x1024xf32>>
    %xa = braid.wait %t : !braid.token<tensor<4096x1024xf32>>
    %h = braid.linear %xa, %w1, %b1 relu : tensor<4096x1024xf32>, tensor<64x1024xf32>, tensor<64xf32> -> tensor<4096x64xf32>
    %s = braid.all_reduce_start sum %h groups [[0, 1, 2, 3]] : tensor<4096x64xf32> -> !braid.token<tensor<4096x64xf32>>
    %z = braid.linear %x, %w2, %b2 relu : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
    %r = braid.wait %s : !braid.token<tensor<4096x64xf32>>
    return %r, %z : tensor<4096x64xf32>, tensor<1024x1024xf32>
  }
}
