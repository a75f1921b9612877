// What joins the input distribution and what does not. In @forward the
// lengths a rank keeps are picked by rank arithmetic (braid.rank, muli)
// that both the exchange and the rest of the function read: the pipelined
// form recomputes it from the rank instead of carrying it, and carries only
// tensors. In @lookup a lookup feeds a started exchange of pooled rows: it
// reads a table, which is no batch input, so neither it nor its exchange
// joins the input distribution (the next batch must read the table as this
// step leaves it); only the routing and the routed indices' exchange do.
// RUN: braid-opt %s --braid-pipeline-input-dist=force | FileCheck %s
// RUN: braid-opt %s --braid-pipeline-input-dist=force -o %t.mlir
// RUN: rm -rf %t.before %t.after
// RUN: braid-run %s --reference --ranks 2 --seed 9 --dump %t.before > /dev/null
// RUN: braid-run %t.mlir --reference --pipelined --ranks 2 --seed 9 --dump %t.after > /dev/null
// RUN: diff -r %t.before %t.after

// CHECK-LABEL: func.func @forward_input_dist(
// CHECK-SAME: -> (tensor<4xi64> {braid.carried = "carried.0"}, tensor<4xi64> {braid.carried = "carried.1"}, tensor<?xi64> {braid.carried = "carried.2"}, tensor<2xi64> {braid.carried = "carried.3"})
// CHECK: braid.rank
// CHECK-LABEL: func.func @forward_pipelined(
// CHECK-NOT: index {braid.carried
// CHECK-SAME: {
// The next batch's: the slice's offset computed for the exchange...
// CHECK: braid.bucketize @a
// CHECK: %[[NR:.*]] = braid.rank : index
// CHECK-NEXT: %[[NOFF:.*]] = arith.muli %[[NR]]
// CHECK-NEXT: tensor.extract_slice %{{.*}}[%[[NOFF]]] [2] [1]
// ...and this batch's, recomputed for the slice the function returns.
// CHECK: %[[R:.*]] = braid.rank : index
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[R]]
// CHECK: tensor.extract_slice %arg{{[0-9]+}}[%[[OFF]]] [2] [1]
// CHECK: return

// CHECK-LABEL: func.func @lookup_input_dist(
// CHECK-NOT: braid.shard_embedding_bag
// CHECK-NOT: braid.all_to_all_start %{{.*}} : tensor<?x8xf32>
// CHECK: return
// CHECK-LABEL: func.func @lookup_pipelined(
// CHECK: braid.all_to_all_v_start
// CHECK: %[[P:.*]] = braid.shard_embedding_bag @a
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start %[[P]]
// CHECK-NEXT: braid.wait %[[T]]

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  func.func @forward(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<3xi64> {braid.input = "a.offsets"})
      -> (tensor<?x8xf32>, tensor<2xi64>, tensor<2xi64>) {
    %c2 = arith.constant 2 : index
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %tl = braid.all_to_all_start %la split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> !braid.token<tensor<4xi64>>
    %tv = braid.all_to_all_v_start %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
    %r = braid.rank : index
    %off = arith.muli %r, %c2 : index
    %mine = tensor.extract_slice %la[%off] [2] [1] : tensor<4xi64> to tensor<2xi64>
    %tm = braid.all_to_all_start %mine split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1] groups [[0, 1]] : tensor<2xi64> -> !braid.token<tensor<2xi64>>
    %xl = braid.wait %tl : !braid.token<tensor<4xi64>>
    %xv = braid.wait %tv : !braid.token<tensor<?xi64>>
    %xm = braid.wait %tm : !braid.token<tensor<2xi64>>
    %pa = braid.shard_embedding_bag @a(%xv, %xl) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<?x8xf32>
    %keep = tensor.extract_slice %la[%off] [2] [1] : tensor<4xi64> to tensor<2xi64>
    return %pa, %keep, %xm : tensor<?x8xf32>, tensor<2xi64>, tensor<2xi64>
  }
  func.func @lookup(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<3xi64> {braid.input = "a.offsets"})
      -> tensor<?x8xf32> {
    %la, %va, %ca = braid.bucketize @a(%ai, %ao) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %tv = braid.all_to_all_v_start %va, %ca : (tensor<?xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>
    %xv = braid.wait %tv : !braid.token<tensor<?xi64>>
    %pa = braid.shard_embedding_bag @a(%xv, %la) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<?x8xf32>
    %tp = braid.all_to_all_start %pa split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<?x8xf32> -> !braid.token<tensor<?x8xf32>>
    %xp = braid.wait %tp : !braid.token<tensor<?x8xf32>>
    return %xp : tensor<?x8xf32>
  }
}
