// A pair of 1 GiB layers on a batch of 16: reading the weights dominates,
// so the planner splits them over the ranks, column-parallel then
// row-parallel; the last pair's second layer has an activation and stays.
module attributes {braid.optimizer = {dense = {lr = 5.000000e-02 : f64, type = "sgd"}, embedding = {lr = 5.000000e-02 : f64, type = "sgd"}}} {
  func.func @forward(%x: tensor<16x8192xf32> {braid.input = "dense"},
                     %w1: tensor<32768x8192xf32> {braid.param = "w1"}, %b1: tensor<32768xf32> {braid.param = "b1"},
                     %w2: tensor<8192x32768xf32> {braid.param = "w2"}, %b2: tensor<8192xf32> {braid.param = "b2"},
                     %w3: tensor<64x8192xf32> {braid.param = "w3"}, %b3: tensor<64xf32> {braid.param = "b3"},
                     %w4: tensor<1x64xf32> {braid.param = "w4"}, %b4: tensor<1xf32> {braid.param = "b4"})
      -> tensor<16x1xf32> {
    %h = braid.linear %x, %w1, %b1 relu : tensor<16x8192xf32>, tensor<32768x8192xf32>, tensor<32768xf32> -> tensor<16x32768xf32>
    %y = braid.linear %h, %w2, %b2 none : tensor<16x32768xf32>, tensor<8192x32768xf32>, tensor<8192xf32> -> tensor<16x8192xf32>
    %z = braid.linear %y, %w3, %b3 relu : tensor<16x8192xf32>, tensor<64x8192xf32>, tensor<64xf32> -> tensor<16x64xf32>
    %p = braid.linear %z, %w4, %b4 sigmoid : tensor<16x64xf32>, tensor<1x64xf32>, tensor<1xf32> -> tensor<16x1xf32>
    return %p : tensor<16x1xf32>
  }
}
