// three_bags.mlir with i32 indices and offsets.
module {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
  func.func @forward(%i: tensor<?xi32> {braid.input = "t.indices"}, %o: tensor<4xi32> {braid.input = "t.offsets"}) -> tensor<3x4xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi32>, tensor<4xi32>) -> tensor<3x4xf32>
    return %e : tensor<3x4xf32>
  }
}
