// Four tables, every pooling mode and a 16-bit table, returned through a
// `cat` interaction so that every pooled value reaches the output. A
// global batch of 7 divides by none of 2, 4 and 8 ranks.
module attributes {braid.model = "pooled"} {
  braid.table @sum_t : tensor<300x8xf32> pooling_factor = 3.0
  braid.table @mean_t : tensor<97x8xf32> pooling_factor = 4.0
  braid.table @max_t : tensor<50x8xf32> pooling_factor = 2.0
  braid.table @half_t : tensor<40x8xf16> pooling_factor = 2.0
  func.func @forward(%x: tensor<7x4xf32> {braid.input = "dense"},
                     %si: tensor<?xi64> {braid.input = "sum_t.indices"}, %so: tensor<8xi64> {braid.input = "sum_t.offsets"},
                     %ai: tensor<?xi64> {braid.input = "mean_t.indices"}, %ao: tensor<8xi64> {braid.input = "mean_t.offsets"},
                     %mi: tensor<?xi64> {braid.input = "max_t.indices"}, %mo: tensor<8xi64> {braid.input = "max_t.offsets"},
                     %hi: tensor<?xi64> {braid.input = "half_t.indices"}, %ho: tensor<8xi64> {braid.input = "half_t.offsets"})
      -> tensor<7x36xf32> {
    %s = braid.embedding_bag @sum_t(%si, %so) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %a = braid.embedding_bag @mean_t(%ai, %ao) mean : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %m = braid.embedding_bag @max_t(%mi, %mo) max : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %h = braid.embedding_bag @half_t(%hi, %ho) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf16>
    %hf = arith.extf %h : tensor<7x8xf16> to tensor<7x8xf32>
    %z = braid.interaction cat %x, %s, %a, %m, %hf : (tensor<7x4xf32>, tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>) -> tensor<7x36xf32>
    return %z : tensor<7x36xf32>
  }
}
