// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK: module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 4>, braid.model = "m"}
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 4>, braid.model = "m"} {
  // CHECK: placement = #braid.table_wise<rank = 7>
  braid.table @tw : tensor<100x16xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 7>
  // CHECK: placement = #braid.row_wise<ranks = [0, 1, 2], row_offsets = [0, 10, 10, 100]>
  braid.table @rw : tensor<100x16xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1, 2], row_offsets = [0, 10, 10, 100]>
  // CHECK: placement = #braid.column_wise<ranks = [3, 5], col_offsets = [0, 4, 16]>
  braid.table @cw : tensor<100x16xf32> pooling_factor = 1.0 placement = #braid.column_wise<ranks = [3, 5], col_offsets = [0, 4, 16]>
  // CHECK: placement = #braid.table_row_wise<node = 1, ranks = [4, 5, 6, 7], row_offsets = [0, 25, 50, 75, 100]>
  braid.table @trw : tensor<100x16xf32> pooling_factor = 1.0 placement = #braid.table_row_wise<node = 1, ranks = [4, 5, 6, 7], row_offsets = [0, 25, 50, 75, 100]>
  // CHECK: placement = #braid.data_parallel<ranks = [0, 1, 2, 3, 4, 5, 6, 7]>
  braid.table @dp : tensor<100x16xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1, 2, 3, 4, 5, 6, 7]>
  // CHECK: func.func @args(%{{.*}}: tensor<4xf32> {braid.input = "dense"}, %{{.*}}: tensor<4xf32> {braid.param = "w"})
  func.func @args(%a: tensor<4xf32> {braid.input = "dense"}, %b: tensor<4xf32> {braid.param = "w"}) {
    return
  }
}
