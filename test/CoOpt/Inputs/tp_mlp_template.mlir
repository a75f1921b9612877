// A small Megatron-style block for exactness tests: COLUMN and ROW are
// replaced by the layers' placements.
module attributes {braid.optimizer = {dense = {lr = 5.000000e-02 : f64, type = "adagrad", eps = 1.000000e-08 : f64}, embedding = {lr = 5.000000e-02 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<16x8xf32> {braid.input = "dense"},
                     %w1: tensor<32x8xf32> {braid.param = "up.weight"},
                     %b1: tensor<32xf32> {braid.param = "up.bias"},
                     %w2: tensor<8x32xf32> {braid.param = "down.weight"},
                     %b2: tensor<8xf32> {braid.param = "down.bias"},
                     %wh: tensor<1x8xf32> {braid.param = "head.weight"},
                     %bh: tensor<1xf32> {braid.param = "head.bias"})
      -> tensor<16x1xf32> {
    %h = braid.linear %x, %w1, %b1 relu {placement = COLUMN}
        : tensor<16x8xf32>, tensor<32x8xf32>, tensor<32xf32> -> tensor<16x32xf32>
    %y = braid.linear %h, %w2, %b2 none {placement = ROW}
        : tensor<16x32xf32>, tensor<8x32xf32>, tensor<8xf32> -> tensor<16x8xf32>
    %r = arith.addf %y, %x : tensor<16x8xf32>
    %p = braid.linear %r, %wh, %bh sigmoid
        : tensor<16x8xf32>, tensor<1x8xf32>, tensor<1xf32> -> tensor<16x1xf32>
    return %p : tensor<16x1xf32>
  }
}
