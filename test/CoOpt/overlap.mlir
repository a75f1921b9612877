// braid-overlap starts a collective right after its input is computed and
// waits for it just before its result's first use, moving the ops that
// only carry the result to the function's results to the end first.
// RUN: braid-opt %s --braid-overlap | FileCheck %s
// Forced, every collective is started, even where nothing runs beside it.
// RUN: braid-opt %s --braid-overlap=force | FileCheck %s --check-prefix=FORCE
// Without a braid.cluster nothing is predicted, and nothing changes.
// RUN: sed -e 's/attributes {braid.cluster = .*} {/{/' %s | braid-opt --braid-overlap | FileCheck %s --check-prefix=NOCLUSTER
// The simulated trace of the result shows the all_reduce beside the
// GEMMs; the forced program's @serial starts one with nothing beside it.
// RUN: braid-opt %s --braid-overlap -o %t.mlir
// RUN: braid-sim %t.mlir --function forward --expect-overlap | FileCheck %s --check-prefix=SIM
// RUN: braid-opt %s --braid-overlap=force -o %t.forced.mlir
// RUN: not braid-sim %t.forced.mlir --function serial --expect-overlap 2>&1 | FileCheck %s --check-prefix=NOOVERLAP
// The rewrite is exact on random inputs, on 4 simulated ranks.
// RUN: rm -rf %t.before %t.after %t.forced
// RUN: braid-run %s --reference --ranks 4 --seed 7 --dump %t.before > /dev/null
// RUN: braid-run %t.mlir --reference --ranks 4 --seed 7 --dump %t.after > /dev/null
// RUN: braid-run %t.forced.mlir --reference --ranks 4 --seed 7 --dump %t.forced > /dev/null
// RUN: diff -r %t.before %t.after
// RUN: diff -r %t.before %t.forced

// The gradient's all_reduce starts as soon as %g is computed; the two GEMMs
// run beside it; the wait and the update that only feeds the result go to
// the end.
// CHECK-LABEL: func.func @forward
// CHECK: %[[G:.*]] = braid.linear %arg0, %arg1, %arg2 relu
// CHECK-NEXT: %[[T:.*]] = braid.all_reduce_start sum %[[G]] groups {{\[\[}}0, 1, 2, 3]] : tensor<256x256xf32> -> !braid.token<tensor<256x256xf32>>
// CHECK-NEXT: %[[H:.*]] = braid.linear %arg0, %arg3, %arg4 relu
// CHECK-NEXT: %[[H2:.*]] = braid.linear %[[H]], %arg5, %arg6 relu
// CHECK-NEXT: %[[R:.*]] = braid.wait %[[T]] : !braid.token<tensor<256x256xf32>>
// CHECK-NEXT: %[[U:.*]] = arith.addf %[[R]], %[[G]]
// CHECK-NEXT: return %[[U]], %[[H2]]
// Nothing can run beside an all_reduce whose result the next op reads.
// CHECK-LABEL: func.func private @serial
// CHECK-NOT: _start
// CHECK: braid.all_reduce sum
// CHECK-NOT: _start

// FORCE-LABEL: func.func private @serial
// FORCE: %[[T:.*]] = braid.all_reduce_start sum
// FORCE-NEXT: %[[R:.*]] = braid.wait %[[T]]
// FORCE-NEXT: braid.linear %[[R]]

// NOCLUSTER-NOT: _start

// SIM: @forward on 4 ranks of dgx-h100
// SIM: hidden behind compute 0.{{[0-9]*[1-9][0-9]*}} ms
// NOOVERLAP: braid-sim: error: @serial starts 1 collectives, but no communication runs beside computation in its simulated trace

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @forward(%x: tensor<256x256xf32> {braid.input = "dense"},
                        %w1: tensor<256x256xf32> {braid.param = "w1"}, %b1: tensor<256xf32> {braid.param = "b1"},
                        %w2: tensor<256x256xf32> {braid.param = "w2"}, %b2: tensor<256xf32> {braid.param = "b2"},
                        %w3: tensor<256x256xf32> {braid.param = "w3"}, %b3: tensor<256xf32> {braid.param = "b3"})
      -> (tensor<256x256xf32>, tensor<256x256xf32>) {
    %g = braid.linear %x, %w1, %b1 relu : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<256x256xf32>
    %h = braid.linear %x, %w2, %b2 relu : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<256x256xf32>
    %r = braid.all_reduce sum %g groups [[0, 1, 2, 3]] : tensor<256x256xf32>
    %u = arith.addf %r, %g : tensor<256x256xf32>
    %h2 = braid.linear %h, %w3, %b3 relu : tensor<256x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<256x256xf32>
    return %u, %h2 : tensor<256x256xf32>, tensor<256x256xf32>
  }
  func.func private @serial(%x: tensor<256x64xf32> {braid.input = "dense"},
                    %w1: tensor<64x64xf32> {braid.param = "w1"}, %b1: tensor<64xf32> {braid.param = "b1"})
      -> tensor<256x64xf32> {
    %g = braid.linear %x, %w1, %b1 relu : tensor<256x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<256x64xf32>
    %r = braid.all_reduce sum %g groups [[0, 1, 2, 3]] : tensor<256x64xf32>
    %y = braid.linear %r, %w1, %b1 relu : tensor<256x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<256x64xf32>
    return %y : tensor<256x64xf32>
  }
}
