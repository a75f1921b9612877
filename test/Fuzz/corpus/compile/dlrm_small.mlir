module attributes {braid.model = "dlrm_small"} {
  braid.table @user_id : tensor<1000x16xf32> pooling_factor = 1.000000e+00 unique_ratio = 9.000000e-01
  braid.table @item_history : tensor<500x16xf32> pooling_factor = 8.000000e+00 unique_ratio = 4.000000e-01
  braid.table @category : tensor<40x16xf32> pooling_factor = 3.000000e+00
  braid.table @region : tensor<12x16xf16> pooling_factor = 1.000000e+00
  func.func @forward(%arg0: tensor<8x13xf32> {braid.input = "dense"}, %arg1: tensor<?xi64> {braid.input = "user_id.indices"}, %arg2: tensor<9xi64> {braid.input = "user_id.offsets"}, %arg3: tensor<?xi64> {braid.input = "item_history.indices"}, %arg4: tensor<9xi64> {braid.input = "item_history.offsets"}, %arg5: tensor<?xi64> {braid.input = "category.indices"}, %arg6: tensor<9xi64> {braid.input = "category.offsets"}, %arg7: tensor<?xi64> {braid.input = "region.indices"}, %arg8: tensor<9xi64> {braid.input = "region.offsets"}, %arg9: tensor<32x13xf32> {braid.param = "bottom_mlp.0.weight"}, %arg10: tensor<32xf32> {braid.param = "bottom_mlp.0.bias"}, %arg11: tensor<16x32xf32> {braid.param = "bottom_mlp.1.weight"}, %arg12: tensor<16xf32> {braid.param = "bottom_mlp.1.bias"}, %arg13: tensor<32x26xf32> {braid.param = "top_mlp.0.weight"}, %arg14: tensor<32xf32> {braid.param = "top_mlp.0.bias"}, %arg15: tensor<16x32xf32> {braid.param = "top_mlp.1.weight"}, %arg16: tensor<16xf32> {braid.param = "top_mlp.1.bias"}, %arg17: tensor<1x16xf32> {braid.param = "top_mlp.2.weight"}, %arg18: tensor<1xf32> {braid.param = "top_mlp.2.bias"}) -> tensor<8x1xf32> {
    %0 = braid.linear %arg0, %arg9, %arg10 relu : tensor<8x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<8x32xf32>
    %1 = braid.linear %0, %arg11, %arg12 relu : tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<8x16xf32>
    %2 = braid.embedding_bag @user_id(%arg1, %arg2) sum : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x16xf32>
    %3 = braid.embedding_bag @item_history(%arg3, %arg4) mean : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x16xf32>
    %4 = braid.embedding_bag @category(%arg5, %arg6) max : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x16xf32>
    %5 = braid.embedding_bag @region(%arg7, %arg8) sum : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x16xf16>
    %6 = arith.extf %5 : tensor<8x16xf16> to tensor<8x16xf32>
    %7 = braid.interaction dot %1, %2, %3, %4, %6 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x26xf32>
    %8 = braid.linear %7, %arg13, %arg14 relu : tensor<8x26xf32>, tensor<32x26xf32>, tensor<32xf32> -> tensor<8x32xf32>
    %9 = braid.linear %8, %arg15, %arg16 relu : tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<8x16xf32>
    %10 = braid.linear %9, %arg17, %arg18 sigmoid : tensor<8x16xf32>, tensor<1x16xf32>, tensor<1xf32> -> tensor<8x1xf32>
    return %10 : tensor<8x1xf32>
  }
}
