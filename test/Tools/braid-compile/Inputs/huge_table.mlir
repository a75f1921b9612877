// One 102 GB table: more than one H100 holds.
module {
  braid.table @t : tensor<200000000x128xf32> pooling_factor = 2.0
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<3xi64> {braid.input = "t.offsets"}) -> tensor<2x128xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x128xf32>
    return %e : tensor<2x128xf32>
  }
}
