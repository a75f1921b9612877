module attributes {braid.optimizer = {dense = {lr = 5.000000e-02 : f64, type = "sgd"}, embedding = {lr = 5.000000e-02 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<8x4xf32> {braid.input = "dense"},
                     %w1: tensor<4x4xf32> {braid.param = "a.weight"},
                     %b1: tensor<4xf32> {braid.param = "a.bias"},
                     %wh: tensor<1x4xf32> {braid.param = "head.weight"},
                     %bh: tensor<1xf32> {braid.param = "head.bias"})
      -> tensor<8x1xf32> {
    %c = arith.constant true
    %h = braid.linear %x, %w1, %b1 relu : tensor<8x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
    %s = arith.select %c, %h, %x : tensor<8x4xf32>
    %p = braid.linear %s, %wh, %bh sigmoid : tensor<8x4xf32>, tensor<1x4xf32>, tensor<1xf32> -> tensor<8x1xf32>
    return %p : tensor<8x1xf32>
  }
}
