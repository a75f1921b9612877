module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<6x2xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 3, 6]>
  func.func @forward(%idx: tensor<?xi64> {braid.input = "t.indices"}, %off: tensor<?xi64> {braid.input = "t.offsets"})
      -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>, tensor<4x2xf32>, tensor<?x2xf32>) {
    %len, %vals, %counts = braid.bucketize @t(%idx, %off) to [0, 1] bags_per_rank = 2
        : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %rlen = braid.all_to_all %len split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> tensor<4xi64>
    %rvals = braid.all_to_all_v %vals, %counts : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %part = braid.shard_embedding_bag @t(%rvals, %rlen) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<4x2xf32>
    %mine = braid.reduce_scatter sum %part dim = 0 groups [[0, 1]] : tensor<4x2xf32> -> tensor<2x2xf32>
    %e = braid.combine_shards @t(%mine, %off) mean bags_per_rank = 2 : (tensor<2x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
    return %len, %vals, %counts, %part, %e : tensor<4xi64>, tensor<?xi64>, tensor<2xi64>, tensor<4x2xf32>, tensor<?x2xf32>
  }
}
