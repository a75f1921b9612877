module attributes {braid.cluster = #braid.cluster<hardware = "dgx-a100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<500x8xf32> pooling_factor = 2.0
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<7xi64> {braid.input = "t.offsets"}) -> tensor<6x8xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<7xi64>) -> tensor<6x8xf32>
    return %e : tensor<6x8xf32>
  }
}
