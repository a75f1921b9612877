// Every rank holds three shard rows (rank 0 rows [0, 3), rank 1 rows
// [3, 6)); value 3 is past them, which rank 0 reports first.
module {
  braid.table @t : tensor<6x2xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 3, 6]>
  func.func @forward() -> tensor<1x2xf32> {
    %values = arith.constant dense<[3]> : tensor<1xi64>
    %lengths = arith.constant dense<[1]> : tensor<1xi64>
    %p = braid.shard_embedding_bag @t(%values, %lengths) sum : (tensor<1xi64>, tensor<1xi64>) -> tensor<1x2xf32>
    return %p : tensor<1x2xf32>
  }
}
