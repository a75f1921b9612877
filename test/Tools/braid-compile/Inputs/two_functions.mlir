// Two entry points over one table: which one is the forward pass is the
// host's choice.
module {
  braid.table @t : tensor<10x4xf32> pooling_factor = 2.0
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<3xi64> {braid.input = "t.offsets"}) -> tensor<2x4xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x4xf32>
    return %e : tensor<2x4xf32>
  }
  func.func @serve(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<3xi64> {braid.input = "t.offsets"}) -> tensor<2x4xf32> {
    %e = braid.embedding_bag @t(%i, %o) mean : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x4xf32>
    return %e : tensor<2x4xf32>
  }
}
