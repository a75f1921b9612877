// braid-defer-weight-gradients leaves a layer's gradient whole where a
// reader of its weight gradient writes memory (here a table update of @p,
// which a lookup of @p follows): moved behind the exchange, the update
// would come after the lookup.
// RUN: braid-opt %s --braid-defer-weight-gradients=force | FileCheck %s

// CHECK-LABEL: func.func @backward
// CHECK-NEXT: braid.linear_grad
// CHECK-NOT: grad_part
// CHECK-NEXT: braid.table_update @p
// CHECK-NEXT: braid.embedding_bag @p
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x4xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 0>
  braid.table @p : tensor<2x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1]>
  func.func @backward(%x: tensor<8x4xf32>, %w: tensor<2x4xf32>, %y: tensor<8x2xf32>, %dy: tensor<8x2xf32>,
                      %off: tensor<9xi64>, %i: tensor<2xi64>, %o: tensor<2xi64>)
      -> (tensor<?x4xf32>, tensor<2xf32>, tensor<1x4xf32>) {
    %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy none : (tensor<8x4xf32>, tensor<2x4xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<8x4xf32>, tensor<2x4xf32>, tensor<2xf32>)
    braid.table_update @p(%dw) optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<2x4xf32>
    %e = braid.embedding_bag @p(%i, %o) sum : (tensor<2xi64>, tensor<2xi64>) -> tensor<1x4xf32>
    %g = braid.combine_shards_grad @t(%dx, %off) sum bags_per_rank = 8 : (tensor<8x4xf32>, tensor<9xi64>) -> tensor<8x4xf32>
    %t = braid.all_to_all_start %g split_dim = 0 concat_dim = 0 split_sizes = [8, 0, 8, 0] groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<?x4xf32>>
    %rows = braid.wait %t : !braid.token<tensor<?x4xf32>>
    return %rows, %db, %e : tensor<?x4xf32>, tensor<2xf32>, tensor<1x4xf32>
  }
}
