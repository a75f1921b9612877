module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<6x2xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 3, 6]>
  func.func @forward(%idx: tensor<?xi64> {braid.mod