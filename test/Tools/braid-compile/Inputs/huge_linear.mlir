// A 17 GB layer on a batch of 8: reading its weights dominates, so splitting
// them over the ranks (tensor parallelism) would pay.
module {
  braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
  func.func @forward(%x: tensor<8x65536xf32> {braid.input = "dense"},
                     %w: tensor<65536x65536xf32> {braid.param = "w"}, %b: tensor<65536xf32> {braid.param = "b"},
                     %i: tensor<?xi64> {braid.input = "t.indices"}, %o: tensor<9xi64> {braid.input = "t.offsets"})
      -> (tensor<8x65536xf32>, tensor<8x16xf32>) {
    %h = braid.linear %x, %w, %b relu : tensor<8x65536xf32>, tensor<65536x65536xf32>, tensor<65536xf32> -> tensor<8x65536xf32>
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x16xf32>
    return %h, %e : tensor<8x65536xf32>, tensor<8x16xf32>
  }
}
