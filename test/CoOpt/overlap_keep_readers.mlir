// braid-overlap{keep-readers} also tries each start with the ops that only
// carry the collective's result to the function's results left where they
// are. Here %y reads the exchanged rows and feeds only a result: sunk to
// the end it would run after the all_reduce's wait with nothing beside that
// all_reduce, so the simulator predicts the exchange started early slower
// with %y sunk and faster with %y kept beside the all_reduce. Without the
// option (braid-co-optimize's first sweep) the exchange stays synchronous;
// with it (its last sweep) it starts early and %y stays.
// RUN: braid-opt %s --braid-overlap | FileCheck %s --check-prefix=SINKONLY
// RUN: braid-opt %s --braid-overlap=keep-readers | FileCheck %s
// RUN: braid-opt %s --braid-overlap=keep-readers -o %t.mlir
// RUN: braid-sim %s | FileCheck %s --check-prefix=BEFORE
// RUN: braid-sim %t.mlir --expect-overlap | FileCheck %s --check-prefix=AFTER
// The rewrite is exact on random inputs, on 4 simulated ranks.
// RUN: rm -rf %t.before %t.after
// RUN: braid-run %s --reference --ranks 4 --seed 5 --dump %t.before > /dev/null
// RUN: braid-run %t.mlir --reference --ranks 4 --seed 5 --dump %t.after > /dev/null
// RUN: diff -r %t.before %t.after

// SINKONLY-LABEL: func.func @forward
// SINKONLY-NOT: _start
// SINKONLY: braid.all_to_all %arg1
// SINKONLY-NOT: braid.all_to_all_start

// CHECK-LABEL: func.func @forward
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start %arg1
// CHECK-NEXT: %[[P:.*]] = braid.linear %arg0, %arg2, %arg3 relu
// CHECK-NEXT: %[[XA:.*]] = braid.wait %[[T]]
// CHECK-NEXT: %[[H:.*]] = braid.linear %[[XA]], %arg4, %arg5 relu
// CHECK-NEXT: %[[R:.*]] = braid.all_reduce_start sum %[[H]]
// CHECK-NEXT: %[[Y:.*]] = braid.linear %[[XA]], %arg6, %arg7 relu
// CHECK-NEXT: %[[S:.*]] = braid.wait %[[R]]
// CHECK-NEXT: return %[[S]], %[[Y]], %[[P]]

// BEFORE: @forward on 4 ranks of dgx-h100: 0.376 ms per iteration
// BEFORE-NEXT: exposed 0.020 ms
// AFTER: @forward on 4 ranks of dgx-h100: 0.358 ms per iteration
// AFTER-NEXT: exposed 0.000 ms

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @forward(%x: tensor<1024x1024xf32> {braid.input = "dense"},
                     %a: tensor<1024x1024xf32> {braid.input = "sparse"},
                     %w1: tensor<1024x1024xf32> {braid.param = "w1"}, %b1: tensor<1024xf32> {braid.param = "b1"},
                     %w2: tensor<1024x1024xf32> {braid.param = "w2"}, %b2: tensor<1024xf32> {braid.param = "b2"},
                     %w3: tensor<1024x1024xf32> {braid.param = "w3"}, %b3: tensor<1024xf32> {braid.param = "b3"})
      -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
    %xa = braid.all_to_all %a split_dim = 0 concat_dim = 0 split_sizes = [256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256] groups [[0, 1, 2, 3]] : tensor<1024x1024xf32> -> tensor<1024x1024xf32>
    %p = braid.linear %x, %w1, %b1 relu : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
    %h = braid.linear %xa, %w2, %b2 relu : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
    %t = braid.all_reduce_start sum %h groups [[0, 1, 2, 3]] : tensor<1024x1024xf32> -> !braid.token<tensor<1024x1024xf32>>
    %y = braid.linear %xa, %w3, %b3 relu : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
    %r = braid.wait %t : !braid.token<tensor<1024x1024xf32>>
    return %r, %y, %p : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}
