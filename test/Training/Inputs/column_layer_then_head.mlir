module attributes {braid.optimizer = {dense = {lr = 5.000000e-02 : f64, type = "sgd"}, embedding = {lr = 5.000000e-02 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<8x4xf32> {braid.input = "dense"},
                     %w1: tensor<8x4xf32> {braid.param = "up.weight"},
                     %b1: tensor<8xf32> {braid.param = "up.bias"},
                     %wh: tensor<1x8xf32> {braid.param = "head.weight"},
                     %bh: tensor<1xf32> {braid.param = "head.bias"})
      -> tensor<8x1xf32> {
    %h = braid.linear %x, %w1, %b1 relu {placement = #braid.dense_placement<column, ranks = [0, 1]>}
        : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<8x8xf32>
    %p = braid.linear %h, %wh, %bh sigmoid
        : tensor<8x8xf32>, tensor<1x8xf32>, tensor<1xf32> -> tensor<8x1xf32>
    return %p : tensor<8x1xf32>
  }
}
