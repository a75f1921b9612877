// A Megatron-style MLP block, tensor-parallel over every rank: a
// column-parallel layer (each rank computes a block of the 8192 hidden
// features for the whole batch), a row-parallel layer (each rank's block
// gives a partial sum of every output), the residual, and a data-parallel
// click-probability head so that the model also trains.
//
//   braid-compile examples/tp_mlp.mlir --cluster dgx-h100 --target cpu -o OUT
//
// The partitioner gathers the batch before the column-parallel layer and
// makes the row-parallel layer's partial sums whole with an all_reduce of
// which each rank keeps its rows; braid-reorder-collectives turns that
// all_reduce into a reduce_scatter (docs/coopt.md).
module attributes {braid.optimizer = {dense = {lr = 5.000000e-02 : f64, type = "sgd"}, embedding = {lr = 5.000000e-02 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<4096x2048xf32> {braid.input = "dense"},
                     %w1: tensor<8192x2048xf32> {braid.param = "mlp.up.weight"},
                     %b1: tensor<8192xf32> {braid.param = "mlp.up.bias"},
                     %w2: tensor<2048x8192xf32> {braid.param = "mlp.down.weight"},
                     %b2: tensor<2048xf32> {braid.param = "mlp.down.bias"},
                     %wh: tensor<1x2048xf32> {braid.param = "head.weight"},
                     %bh: tensor<1xf32> {braid.param = "head.bias"})
      -> tensor<4096x1xf32> {
    %h = braid.linear %x, %w1, %b1 relu {placement = #braid.dense_placement<column, ranks = [0, 1, 2, 3, 4, 5, 6, 7]>}
        : tensor<4096x2048xf32>, tensor<8192x2048xf32>, tensor<8192xf32> -> tensor<4096x8192xf32>
    %y = braid.linear %h, %w2, %b2 none {placement = #braid.dense_placement<row, ranks = [0, 1, 2, 3, 4, 5, 6, 7]>}
        : tensor<4096x8192xf32>, tensor<2048x8192xf32>, tensor<2048xf32> -> tensor<4096x2048xf32>
    %r = arith.addf %y, %x : tensor<4096x2048xf32>
    %p = braid.linear %r, %wh, %bh sigmoid
        : tensor<4096x2048xf32>, tensor<1x2048xf32>, tensor<1xf32> -> tensor<4096x1xf32>
    return %p : tensor<4096x1xf32>
  }
}
