// Table @c is looked up twice with the same bags, @d once: forced, the
// co-optimizer fuses @c's two index exchanges and narrows them to i32,
// while @d's stays a started i64 exchange.
module {
  braid.table @c : tensor<40x8xf32> pooling_factor = 4.0
  braid.table @d : tensor<20x8xf32> pooling_factor = 2.0
  func.func @forward(%ci: tensor<?xi64> {braid.input = "c.indices"}, %co: tensor<8xi64> {braid.input = "c.offsets"},
                     %di: tensor<?xi64> {braid.input = "d.indices"}, %do: tensor<8xi64> {braid.input = "d.offsets"})
      -> (tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>) {
    %0 = braid.embedding_bag @c(%ci, %co) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %1 = braid.embedding_bag @c(%ci, %co) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    %2 = braid.embedding_bag @d(%di, %do) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>
    return %0, %1, %2 : tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x8xf32>
  }
}
