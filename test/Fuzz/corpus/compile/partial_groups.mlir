func.func @forward(%x: tensor<4xf32> {braid.input = "x"}) -> (tensor<?xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = braid.reduce_scatter sum %x dim = 0 groups [[0, 1]] : tensor<4xf32> -> tensor<?xf32>
  %r = braid.all_reduce sum %x groups [[0, 1]] : tensor<4xf32>
  return %s, %x, %r : tensor<?xf32>, tensor<4xf32>, tensor<4xf32>
}
