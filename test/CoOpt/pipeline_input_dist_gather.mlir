// A gathered batch (a tensor-parallel block's input, all_gathered from
// every rank's samples) is an input distribution too: it depends on the
// batch alone. The pipelined form gathers the next batch's while this
// batch's layers run, and carries the gathered batch; the values are the
// same, bit for bit, on 2 simulated ranks.
// RUN: braid-opt %s --braid-pipeline-input-dist -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: braid-sim %t.mlir | FileCheck %s --check-prefix=BEFORE
// RUN: braid-sim %t.mlir --function forward_pipelined --expect-overlap | FileCheck %s --check-prefix=AFTER
// RUN: rm -rf %t.before %t.after
// RUN: braid-run %s --reference --ranks 2 --seed 7 --dump %t.before > /dev/null
// RUN: braid-run %t.mlir --reference --pipelined --ranks 2 --seed 7 --dump %t.after > /dev/null
// RUN: diff -r %t.before %t.after

// CHECK-LABEL: func.func @forward_input_dist(
// CHECK-SAME: %[[X:[^:]*]]: tensor<256x512xf32> {braid.input = "dense"}
// CHECK-SAME: -> (tensor<512x512xf32> {braid.carried = "carried.0"})
// CHECK-NEXT: %[[T:.*]] = braid.all_gather_start %[[X]]
// CHECK-NEXT: %[[G:.*]] = braid.wait %[[T]]
// CHECK-NEXT: return %[[G]]
// CHECK-LABEL: func.func @forward_pipelined(
// CHECK-SAME: %[[NX:[^:]*]]: tensor<256x512xf32> {braid.next_input = "dense"}
// CHECK-SAME: %[[CG:[^:]*]]: tensor<512x512xf32> {braid.carried = "carried.0"}
// CHECK-NEXT: %[[NT:.*]] = braid.all_gather_start %[[NX]]
// CHECK-NEXT: %[[Y:.*]] = braid.linear %[[CG]]
// CHECK-NEXT: %[[Y2:.*]] = braid.linear %[[Y]]
// CHECK-NEXT: %[[NG:.*]] = braid.wait %[[NT]]
// CHECK-NEXT: return %[[Y2]], %[[NG]]

// BEFORE: @forward on 2 ranks of dgx-h100
// BEFORE-NEXT: exposed 0.0{{[0-9]*[1-9]}}
// AFTER: @forward_pipelined on 2 ranks of dgx-h100
// AFTER-NEXT: exposed 0.000 ms

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%x: tensor<256x512xf32> {braid.input = "dense"},
                     %w: tensor<512x512xf32> {braid.param = "w"}, %b: tensor<512xf32> {braid.param = "b"})
      -> tensor<512x512xf32> {
    %t = braid.all_gather_start %x dim = 0 groups [[0, 1]] : tensor<256x512xf32> -> !braid.token<tensor<512x512xf32>>
    %g = braid.wait %t : !braid.token<tensor<512x512xf32>>
    %y = braid.linear %g, %w, %b relu : tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32> -> tensor<512x512xf32>
    %y2 = braid.linear %y, %w, %b relu : tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32> -> tensor<512x512xf32>
    return %y2 : tensor<512x512xf32>
  }
}
