// bench/coopt's tensor-parallel model for the two hosts: a Megatron-style
// block over the 4 ranks (column-parallel 512 -> 2048 with relu,
// row-parallel 2048 -> 512, a residual) and a data-parallel head. At O0 its
// partial sums (1024 x 512 floats, 2 MiB) are all_reduced over the 1 Gbit/s
// link and each rank keeps its rows; the default program reduce-scatters
// them, half the bytes on the wire.
module attributes {braid.optimizer = {dense = {lr = 1.000000e-02 : f64, type = "adagrad", eps = 1.000000e-08 : f64}, embedding = {lr = 1.000000e-02 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<1024x512xf32> {braid.input = "dense"},
                     %w1: tensor<2048x512xf32> {braid.param = "up.weight"},
                     %b1: tensor<2048xf32> {braid.param = "up.bias"},
                     %w2: tensor<512x2048xf32> {braid.param = "down.weight"},
                     %b2: tensor<512xf32> {braid.param = "down.bias"},
                     %wh: tensor<1x512xf32> {braid.param = "head.weight"},
                     %bh: tensor<1xf32> {braid.param = "head.bias"})
      -> tensor<1024x1xf32> {
    %h = braid.linear %x, %w1, %b1 relu {placement = #braid.dense_placement<column, ranks = [0, 1, 2, 3]>}
        : tensor<1024x512xf32>, tensor<2048x512xf32>, tensor<2048xf32> -> tensor<1024x2048xf32>
    %y = braid.linear %h, %w2, %b2 none {placement = #braid.dense_placement<row, ranks = [0, 1, 2, 3]>}
        : tensor<1024x2048xf32>, tensor<512x2048xf32>, tensor<512xf32> -> tensor<1024x512xf32>
    %r = arith.addf %y, %x : tensor<1024x512xf32>
    %p = braid.linear %r, %wh, %bh sigmoid
        : tensor<1024x512xf32>, tensor<1x512xf32>, tensor<1xf32> -> tensor<1024x1xf32>
    return %p : tensor<1024x1xf32>
  }
}
