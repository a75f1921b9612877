// One table looked up by three bags, for tests of offsets and indices.
module {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<4xi64> {braid.input = "t.offsets"}) -> tensor<3x4xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<3x4xf32>
    return %e : tensor<3x4xf32>
  }
}
