// A weighted bag: per-sample weights scale each row before the sum; they
// are partitioned only for data-parallel tables.
module {
  braid.table @t : tensor<10x4xf32> pooling_factor = 2.0
  func.func @forward(%i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<3xi64> {braid.input = "t.offsets"},
                     %w: tensor<?xf32> {braid.input = "t.weights"}) -> tensor<2x4xf32> {
    %e = braid.embedding_bag @t(%i, %o, weights %w) sum : (tensor<?xi64>, tensor<3xi64>, tensor<?xf32>) -> tensor<2x4xf32>
    return %e : tensor<2x4xf32>
  }
}
