// Hand-made placements: uneven rows with an empty range, column shards of
// unequal width, a table-row-wise 16-bit table and a table-wise table, on
// 2 x 2 ranks with a batch of 7.
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 3.0 placement = #braid.row_wise<ranks = [2, 0, 3], row_offsets = [0, 7, 7, 50]>
  braid.table @b : tensor<30x8xf32> pooling_factor = 3.0 placement = #braid.column_wise<ranks = [3, 1], col_offsets = [0, 5, 8]>
  braid.table @c : tensor<40x8xf16> pooling_factor = 4.0 placement = #braid.table_row_wise<node = 1, ranks = [3, 2], row_offsets = [0, 13, 40]>
  braid.table @d : tensor<20x8xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
  func.func @forward(%ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<8xi64> {braid.input = "a.offsets"},
                     %bi: tensor<?xi64> {braid.input = "b.indices"}, %bo: tensor<8xi64> {braid.input = "b.offsets"},
                     %ci: tensor<?xi64> {braid.input = "c.indices"}, %co: tensor<8xi64> {braid.input = "c.offsets"},
                     %di: tensor<?xi64> {braid.input = "d.indices"}, %do: tensor<8xi64> {braid.input = "d.offsets"})
      -> (tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf16>, tensor<7x8xf16>, tensor<7x8xf32>) {
    %0 = braid.embedding_bag @a(%ai, %ao) mean : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %1 = braid.embedding_bag @a(%ai, %ao) max : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %2 = braid.embedding_bag @b(%bi, %bo) max : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %3 = braid.embedding_bag @b(%bi, %bo) mean : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %4 = braid.embedding_bag @c(%ci, %co) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf16>
    %5 = braid.embedding_bag @c(%ci, %co) max : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf16>
    %6 = braid.embedding_bag @d(%di, %do) mean : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    return %0, %1, %2, %3, %4, %5, %6 : tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf16>, tensor<7x8xf16>, tensor<7x8xf32>
  }
}
