// braid-pipeline-input-dist adds @forward_input_dist (the routing of @a's
// indices and their exchanges, from the inputs they read to what the rest
// of @forward reads) and @forward_pipelined: @forward's arguments, the next
// batch's inputs, this batch's carried values; @forward's results, then the
// next batch's carried values. @forward itself is left as it was. The
// lengths' routing result is carried; the rank arithmetic is recomputed.
// RUN: braid-opt %s --braid-pipeline-input-dist=force | FileCheck %s --check-prefixes=CHECK,FORCED
// Without force the simulator decides. In @forward the routed indices'
// exchanges are alone before the dense layers, all exposed; in the
// pipelined form the next batch's run beside them (its starts at the top,
// which is fastest here). In @hidden they already run beside the dense
// layers, so its pipelined form is predicted no faster and not added.
// RUN: braid-opt %s --braid-pipeline-input-dist -o %t.mlir
// RUN: FileCheck %s --check-prefixes=CHECK,DEFAULT < %t.mlir
// RUN: braid-sim %t.mlir | FileCheck %s --check-prefix=BEFORE
// RUN: braid-sim %t.mlir --function forward_pipelined --expect-overlap | FileCheck %s --check-prefix=AFTER
// The pipelined form gives @forward's values, bit for bit, on 2 simulated
// ranks, and returns for the same batch the carried values
// @forward_input_dist gives (braid-run --pipelined checks them).
// RUN: rm -rf %t.before %t.after
// RUN: braid-run %s --reference --ranks 2 --seed 3 --dump %t.before > /dev/null
// RUN: braid-run %t.mlir --reference --pipelined --ranks 2 --seed 3 --dump %t.after > /dev/null
// RUN: diff -r %t.before %t.after

// CHECK-LABEL: func.func @forward(
// CHECK: braid.bucketize @a
// CHECK: braid.all_to_all_v_start
// CHECK: braid.shard_embedding_bag @a

// CHECK-LABEL: func.func @forward_input_dist(
// CHECK-SAME: %[[I:[^:]*]]: tensor<?xi64> {braid.input = "a.indices"}
// CHECK-SAME: %[[O:[^:]*]]: tensor<3xi64> {braid.input = "a.offsets"}
// CHECK-SAME: -> (tensor<4xi64> {braid.carried = "carried.0"}, tensor<4xi64> {braid.carried = "carried.1"}, tensor<?xi64> {braid.carried = "carried.2"})
// CHECK-NEXT: %[[L:.*]], %[[V:.*]], %[[C:.*]] = braid.bucketize @a(%[[I]], %[[O]])
// CHECK-NEXT: %[[TL:.*]] = braid.all_to_all_start %[[L]]
// CHECK-NEXT: %[[TV:.*]] = braid.all_to_all_v_start %[[V]], %[[C]]
// CHECK-NEXT: %[[XL:.*]] = braid.wait %[[TL]]
// CHECK-NEXT: %[[XV:.*]] = braid.wait %[[TV]]
// CHECK-NEXT: return %[[L]], %[[XL]], %[[XV]]

// CHECK-LABEL: func.func @forward_pipelined(
// CHECK-SAME: %[[X:[^:]*]]: tensor<512x512xf32> {braid.input = "dense"}
// CHECK-SAME: %{{[^:]*}}: tensor<?xi64> {braid.input = "a.indices"}
// CHECK-SAME: %{{[^:]*}}: tensor<3xi64> {braid.input = "a.offsets"}
// CHECK-SAME: %[[W:[^:]*]]: tensor<512x512xf32> {braid.param = "w"}
// CHECK-SAME: %[[B:[^:]*]]: tensor<512xf32> {braid.param = "b"}
// CHECK-SAME: %[[NI:[^:]*]]: tensor<?xi64> {braid.next_input = "a.indices"}
// CHECK-SAME: %[[NO:[^:]*]]: tensor<3xi64> {braid.next_input = "a.offsets"}
// CHECK-SAME: %[[CL:[^:]*]]: tensor<4xi64> {braid.carried = "carried.0"}
// CHECK-SAME: %[[CXL:[^:]*]]: tensor<4xi64> {braid.carried = "carried.1"}
// CHECK-SAME: %[[CXV:[^:]*]]: tensor<?xi64> {braid.carried = "carried.2"}
// CHECK-SAME: -> (tensor<?x8xf32>, tensor<512x512xf32>, tensor<4xi64>, tensor<4xi64> {braid.carried = "carried.0"}, tensor<4xi64> {braid.carried = "carried.1"}, tensor<?xi64> {braid.carried = "carried.2"})
// CHECK-SAME: attributes {braid.input_dist = @forward_input_dist, braid.pipelined_of = @forward}
// The next batch's routing and starts, at the top...
// CHECK-NEXT: %[[NL:.*]], %[[NV:.*]], %[[NC:.*]] = braid.bucketize @a(%[[NI]], %[[NO]])
// CHECK-NEXT: %[[NTL:.*]] = braid.all_to_all_start %[[NL]]
// CHECK-NEXT: %[[NTV:.*]] = braid.all_to_all_v_start %[[NV]], %[[NC]]
// ...this batch's work on the carried values...
// CHECK-NEXT: %[[P:.*]] = braid.shard_embedding_bag @a(%[[CXV]], %[[CXL]]) sum
// CHECK-NEXT: %[[Y:.*]] = braid.linear %[[X]], %[[W]], %[[B]] relu
// CHECK-NEXT: %[[Y2:.*]] = braid.linear %[[Y]], %[[W]], %[[B]] relu
// ...and the next batch's waits last.
// CHECK-NEXT: %[[NXL:.*]] = braid.wait %[[NTL]]
// CHECK-NEXT: %[[NXV:.*]] = braid.wait %[[NTV]]
// CHECK-NEXT: return %[[P]], %[[Y2]], %[[CL]], %[[NL]], %[[NXL]], %[[NXV]]

// BEFORE: @forward on 2 ranks of dgx-h100
// BEFORE-NEXT: exposed 0.0{{[1-9]}}
// AFTER: @forward_pipelined on 2 ranks of dgx-h100
// AFTER-NEXT: exposed 0.000 ms

// FORCED-LABEL: func.func @hidden(
// FORCED: func.func @hidden_input_dist(
// FORCED: func.func @hidden_pipelined(
// DEFAULT-LABEL: func.func @hidden(
// DEFAULT-NOT: func.func @hidden_

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  func.func @forward(%x: tensor<512x512xf32> {braid.input = "dense"},
                     %ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<3xi64> {braid.input = "a.offsets"},
                     %w: tensor<512x512xf32> {braid.param = "w"}, %b: tensor<512xf32> {braid.param = "b"})
      -> (tensor<?x8xf32>, tensor<512x512xf32>, tensor<4xi64>) {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %tl = braid.all_to_all_start %la split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> !braid.token<tensor<4xi64>>
    %tv = braid.all_to_all_v_start %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
    %xl = braid.wait %tl : !braid.token<tensor<4xi64>>
    %xv = braid.wait %tv : !braid.token<tensor<?xi64>>
    %pa = braid.shard_embedding_bag @a(%xv, %xl) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<?x8xf32>
    %y = braid.linear %x, %w, %b relu : tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32> -> tensor<512x512xf32>
    %y2 = braid.linear %y, %w, %b relu : tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32> -> tensor<512x512xf32>
    return %pa, %y2, %la : tensor<?x8xf32>, tensor<512x512xf32>, tensor<4xi64>
  }
  // The exchanges already run beside the dense layers: the pipelined form
  // is predicted no faster, and the simulator rejects it.
  func.func @hidden(%x: tensor<512x512xf32> {braid.input = "dense"},
                    %ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<3xi64> {braid.input = "a.offsets"},
                    %w: tensor<512x512xf32> {braid.param = "w"}, %b: tensor<512xf32> {braid.param = "b"})
      -> (tensor<?x8xf32>, tensor<512x512xf32>) {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %tl = braid.all_to_all_start %la split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> !braid.token<tensor<4xi64>>
    %tv = braid.all_to_all_v_start %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
    %y = braid.linear %x, %w, %b relu : tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32> -> tensor<512x512xf32>
    %y2 = braid.linear %y, %w, %b relu : tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32> -> tensor<512x512xf32>
    %xl = braid.wait %tl : !braid.token<tensor<4xi64>>
    %xv = braid.wait %tv : !braid.token<tensor<?xi64>>
    %pa = braid.shard_embedding_bag @a(%xv, %xl) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<?x8xf32>
    return %pa, %y2 : tensor<?x8xf32>, tensor<512x512xf32>
  }
}
