// Rows wider than the pooling kernel's 64 lanes: 136 f32 columns (two
// chunks of 64 and a tail of 8) and 72 f16 columns (one chunk and a tail
// of 8), pooled by mean and max. A global batch of 5; bags may be empty.
module attributes {braid.model = "wide"} {
  braid.table @wide_t : tensor<60x136xf32> pooling_factor = 3.0
  braid.table @half_t : tensor<30x72xf16> pooling_factor = 2.0
  func.func @forward(%x: tensor<5x4xf32> {braid.input = "dense"},
                     %wi: tensor<?xi64> {braid.input = "wide_t.indices"}, %wo: tensor<6xi64> {braid.input = "wide_t.offsets"},
                     %hi: tensor<?xi64> {braid.input = "half_t.indices"}, %ho: tensor<6xi64> {braid.input = "half_t.offsets"})
      -> tensor<5x212xf32> {
    %w = braid.embedding_bag @wide_t(%wi, %wo) mean : (tensor<?xi64>, tensor<6xi64>) -> tensor<5x136xf32>
    %h = braid.embedding_bag @half_t(%hi, %ho) max : (tensor<?xi64>, tensor<6xi64>) -> tensor<5x72xf16>
    %hf = arith.extf %h : tensor<5x72xf16> to tensor<5x72xf32>
    %z = braid.interaction cat %x, %w, %hf : (tensor<5x4xf32>, tensor<5x136xf32>, tensor<5x72xf32>) -> tensor<5x212xf32>
    return %z : tensor<5x212xf32>
  }
}
