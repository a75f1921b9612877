// braid-fill-waits moves the work after a wait that reads nothing the
// pending collectives give above the wait, up to the next op that issues
// communication. Here %y and %y2 (which reads %y) move above the exchange's
// wait and run beside it; %h, which reads the wait, stays; the scan stops
// at the all_reduce's start, so %z moves above the all_reduce's wait but
// not above its start.
// RUN: braid-opt %s --braid-fill-waits=force | FileCheck %s
// Without force the simulator decides. Before, the exchange's 20 us are
// exposed, and the all_reduce (started when %h is ready) runs beside %y.
// Filling the first wait alone moves %y before %h and exposes the
// all_reduce; filling the second alone changes nothing. Both
// together hide all the communication, so the pass's second alternative
// (a wait with every later one) is kept.
// RUN: braid-opt %s --braid-fill-waits -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: braid-sim %s | FileCheck %s --check-prefix=BEFORE
// RUN: braid-sim %t.mlir --expect-overlap | FileCheck %s --check-prefix=AFTER
// The same values on every rank, bit for bit, on 4 simulated ranks.
// RUN: rm -rf %t.before %t.after
// RUN: braid-run %s --reference --ranks 4 --seed 5 --dump %t.before > /dev/null
// RUN: braid-run %t.mlir --reference --ranks 4 --seed 5 --dump %t.after > /dev/null
// RUN: diff -r %t.before %t.after

// CHECK-LABEL: func.func @forward
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start %arg1
// CHECK-NEXT: %[[Y:.*]] = braid.linear %arg0, %arg6, %arg7
// CHECK-NEXT: %[[Y2:.*]] = braid.linear %[[Y]], %arg8, %arg9
// CHECK-NEXT: %[[XA:.*]] = braid.wait %[[T]]
// CHECK-NEXT: %[[H:.*]] = braid.linear %[[XA]], %arg4, %arg5
// CHECK-NEXT: %[[S:.*]] = braid.all_reduce_start sum %[[H]]
// CHECK-NEXT: %[[Z:.*]] = braid.linear %arg0, %arg8, %arg9
// CHECK-NEXT: %[[R:.*]] = braid.wait %[[S]]
// CHECK-NEXT: return %[[R]], %[[Y2]], %[[Z]]

// BEFORE: @forward on 4 ranks of dgx-h100: 0.492 ms per iteration
// BEFORE-NEXT: exposed 0.020 ms, hidden behind compute 0.058 ms
// AFTER: @forward on 4 ranks of dgx-h100: 0.474 ms per iteration
// AFTER-NEXT: exposed 0.000 ms, hidden behind compute 0.078 ms

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @forward(%x: tensor<1024x1024xf32> {braid.input = "dense"},
                     %a: tensor<1024x1024xf32> {braid.input = "sparse"},
                     %w1: tensor<1024x1024xf32> {braid.param = "w1"}, %b1: tensor<1024xf32> {braid.param = "b1"},
                     %w2: tensor<1024x1024xf32> {braid.param = "w2"}, %b2: tensor<1024xf32> {braid.param = "b2"},
                     %w3: tensor<1024x1024xf32> {braid.param = "w3"}, %b3: tensor<1024xf32> {braid.param = "b3"},
                     %w4: tensor<1024x1024xf32> {braid.param = "w4"}, %b4: tensor<1024xf32> {braid.param = "b4"})
      -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
    %t = braid.all_to_all_start %a split_dim = 0 concat_dim = 0 split_sizes = [256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256] groups [[0, 1, 2, 3]] : tensor<1024x1024xf32> -> !braid.token<tensor<1024x1024xf32>>
    %xa = braid.wait %t : !braid.token<tensor<1024x1024xf32>>
    %h = braid.linear %xa, %w2, %b2 relu : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
    %y = braid.linear %x, %w3, %b3 relu : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
    %y2 = braid.linear %y, %w4, %b4 relu : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
    %s = braid.all_reduce_start sum %h groups [[0, 1, 2, 3]] : tensor<1024x1024xf32> -> !braid.token<tensor<1024x1024xf32>>
    %r = braid.wait %s : !braid.token<tensor<1024x1024xf32>>
    %z = braid.linear %x, %w4, %b4 relu : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
    return %r, %y2, %z : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}
