func.func @forward(%x: tensor<3xi64>) -> tensor<3xi64> {
  %y = braid.all_to_all %x split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1, 1, 1, 1, 1, 1] groups [[0, 1, 1000000]] : tensor<3xi64> -> tensor<3xi64>
  return %y : tensor<3xi64>
}
