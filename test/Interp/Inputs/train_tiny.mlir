module attributes {braid.optimizer = {dense = {type = "sgd", lr = 6.0e-01 : f64}, embedding = {type = "sgd", lr = 6.0e-01 : f64}}} {
  braid.table @t : tensor<4x2xf32> pooling_factor = 1.0
  func.func @forward(%x: tensor<3x2xf32> {braid.input = "dense"}, %i: tensor<?xi64> {braid.input = "t.indices"},
                     %o: tensor<4xi64> {braid.input = "t.offsets"}, %w: tensor<1x4xf32> {braid.param = "top.weight"},
                     %b: tensor<1xf32> {braid.param = "top.bias"}) -> tensor<3x1xf32> {
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<3x2xf32>
    %z = braid.interaction cat %x, %e : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
    %y = braid.linear %z, %w, %b sigmoid : tensor<3x4xf32>, tensor<1x4xf32>, tensor<1xf32> -> tensor<3x1xf32>
    return %y : tensor<3x1xf32>
  }
}
