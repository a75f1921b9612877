// braid-reorder-collectives shards a dense optimizer's state only in a
// function nothing calls: sharding changes the function's type, which a
// call would no longer match. Here @step is called, and keeps its
// all_reduce and whole state.
// RUN: braid-opt %s --braid-reorder-collectives=force | FileCheck %s

// CHECK-LABEL: func.func private @step
// CHECK-NOT: braid.reduce_scatter
// CHECK: braid.all_reduce sum
// CHECK: braid.dense_update
// CHECK-LABEL: func.func @train_step
// CHECK: call @step
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func private @step(%w: tensor<8x3xf32> {braid.param = "w"}, %dw: tensor<8x3xf32>, %t: tensor<i64>,
                          %sw: tensor<8x3xf32> {braid.state = "w.sum"})
      -> (tensor<8x3xf32> {braid.param = "w"}, tensor<8x3xf32> {braid.state = "w.sum"}) {
    %gw = braid.all_reduce sum %dw : tensor<8x3xf32>
    %w2, %sw2 = braid.dense_update %w, %gw step %t state(%sw) optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<i64>, tensor<8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>)
    return %w2, %sw2 : tensor<8x3xf32>, tensor<8x3xf32>
  }
  func.func @train_step(%w: tensor<8x3xf32>, %dw: tensor<8x3xf32>, %t: tensor<i64>, %sw: tensor<8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>) {
    %a, %b = func.call @step(%w, %dw, %t, %sw) : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<i64>, tensor<8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>)
    return %a, %b : tensor<8x3xf32>, tensor<8x3xf32>
  }
}
