module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
  braid.table @b : tensor<50x8xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 20, 50]>
  func.func @forward(%x: tensor<4x4xf32> {braid.input = "dense"},
                     %ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<5xi64> {braid.input = "a.offsets"},
                     %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<5xi64> {braid.input = "b.offsets"}) -> tensor<4x20xf32> {
    %ea = braid.embedding_bag @a(%ai, %ao) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %eb = braid.embedding_bag @b(%bi, %bo) max : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %z = braid.interaction cat %x, %ea, %eb : (tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x20xf32>
    return %z : tensor<4x20xf32>
  }
}
