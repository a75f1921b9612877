module attributes {braid.model = "m"} {
  braid.table @a : tensor<10x4xf32> pooling_factor = 2.500000e+00
  braid.table @b : tensor<20x6xbf16> pooling_factor = 0.000000e+00
  func.func @forward(%arg0: tensor<2x3xf32> {braid.input = "dense"}, %arg1: tensor<?xi64> {braid.input = "a.indices"}, %arg2: tensor<3xi64> {braid.input = "a.offsets"}, %arg3: tensor<?xi64> {braid.input = "b.indices"}, %arg4: tensor<3xi64> {braid.input = "b.offsets"}, %arg5: tensor<8x3xf32> {braid.param = "bottom_mlp.0.weight"}, %arg6: tensor<8xf32> {braid.param = "bottom_mlp.0.bias"}, %arg7: tensor<3x18xf32> {braid.param = "top_mlp.0.weight"}, %arg8: tensor<3xf32> {braid.param = "top_mlp.0.bias"}) -> tensor<2x3xf32> {
    %0 = braid.linear %arg0, %arg5, %arg6 relu : tensor<2x3xf32>, tensor<8x3xf32>, tensor<8xf32> -> tensor<2x8xf32>
    %1 = braid.embedding_bag @a(%arg1, %arg2) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x4xf32>
    %2 = braid.embedding_bag @b(%arg3, %arg4) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x6xbf16>
    %3 = arith.extf %2 : tensor<2x6xbf16> to tensor<2x6xf32>
    %4 = braid.interaction cat %0, %1, %3 : (tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x6xf32>) -> tensor<2x18xf32>
    %5 = braid.linear %4, %arg7, %arg8 sigmoid : tensor<2x18xf32>, tensor<3x18xf32>, tensor<3xf32> -> tensor<2x3xf32>
    return %5 : tensor<2x3xf32>
  }
}
