module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  braid.table @rw : tensor<50x8xf32> pooling_factor = 3.0 placement = #braid.row_wise<ranks = [2, 0, 3], row_offsets = [0, 7, 7, 50]>
  braid.table @cw : tensor<30x8xf32> pooling_factor = 3.0 placement = #braid.column_wise<ranks = [3, 1], col_offsets = [0, 5, 8]>
  braid.table @trw : tensor<40x8xf16> pooling_factor = 4.0 placement = #braid.table_row_wise<node = 1, ranks = [3, 2], row_offsets = [0, 13, 40]>
  braid.table @tw : tensor<20x8xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
  braid.table @dp : tensor<20x8xf32> pooling_factor = 2.0 placement = #braid.data_parallel<ranks = [0, 1, 2, 3]>
  func.func @forward(%x: tensor<7x4xf32> {braid.input = "dense"},
                     %rwi: tensor<?xi64> {braid.input = "rw.indices"}, %rwo: tensor<8xi64> {braid.input = "rw.offsets"},
                     %cwi: tensor<?xi64> {braid.input = "cw.indices"}, %cwo: tensor<8xi64> {braid.input = "cw.offsets"},
                     %trwi: tensor<?xi64> {braid.input = "trw.indices"}, %trwo: tensor<8xi64> {braid.input = "trw.offsets"},
                     %twi: tensor<?xi64> {braid.input = "tw.indices"}, %two: tensor<8xi64> {braid.input = "tw.offsets"},
                     %dpi: tensor<?xi64> {braid.input = "dp.indices"}, %dpo: tensor<8xi64> {braid.input = "dp.offsets"},
                     %w: tensor<8x4xf32> {braid.param = "w"}, %b: tensor<8xf32> {braid.param = "b"}) -> tensor<7x8xf32> {
    %h = braid.linear %x, %w, %b relu : tensor<7x4xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<7x8xf32>
    %e0 = braid.embedding_bag @rw(%rwi, %rwo) max : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %e1 = braid.embedding_bag @cw(%cwi, %cwo) mean : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %e2 = braid.embedding_bag @trw(%trwi, %trwo) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf16>
    %e2f = arith.extf %e2 : tensor<7x8xf16> to tensor<7x8xf32>
    %e3 = braid.embedding_bag @tw(%twi, %two) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %e4 = braid.embedding_bag @dp(%dpi, %dpo) mean : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %s0 = arith.addf %h, %e0 : tensor<7x8xf32>
    %s1 = arith.addf %s0, %e1 : tensor<7x8xf32>
    %s2 = arith.addf %s1, %e2f : tensor<7x8xf32>
    %s3 = arith.addf %s2, %e3 : tensor<7x8xf32>
    %s4 = arith.addf %s3, %e4 : tensor<7x8xf32>
    return %s4 : tensor<7x8xf32>
  }
}
