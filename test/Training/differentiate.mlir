// RUN: braid-opt %s --braid-differentiate | FileCheck %s
// braid-differentiate on a global program (one rank): the click
// probability's layer becomes its logit and the loss, each forward op's
// gradient rule runs in reverse order, the lookup ends in a fused update of
// the rows it read, and each parameter gets a dense_update with its state.

module attributes {braid.optimizer = {dense = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"}, embedding = {eps = 1.0e-08 : f64, lr = 1.0e-01 : f64, type = "rowwise_adagrad"}}} {
  braid.table @t : tensor<10x4xf16> pooling_factor = 2.0
  func.func @forward(%x: tensor<3x4xf32> {braid.input = "dense"},
                     %i: tensor<?xi64> {braid.input = "t.indices"},
                     %o: tensor<4xi64> {braid.input = "t.offsets"},
                     %w: tensor<4x4xf32> {braid.param = "bottom.weight"},
                     %b: tensor<4xf32> {braid.param = "bottom.bias"},
                     %v: tensor<1x5xf32> {braid.param = "top.weight"},
                     %c: tensor<1xf32> {braid.param = "top.bias"}) -> tensor<3x1xf32> {
    %h = braid.linear %x, %w, %b relu : tensor<3x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
    %e = braid.embedding_bag @t(%i, %o) mean : (tensor<?xi64>, tensor<4xi64>) -> tensor<3x4xf16>
    %e32 = arith.extf %e : tensor<3x4xf16> to tensor<3x4xf32>
    %z = braid.interaction dot %h, %e32 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x5xf32>
    %p = braid.linear %z, %v, %c sigmoid : tensor<3x5xf32>, tensor<1x5xf32>, tensor<1xf32> -> tensor<3x1xf32>
    return %p : tensor<3x1xf32>
  }
}

// The forward program stays as it was.
// CHECK: func.func @forward
// CHECK: braid.linear %{{.*}} sigmoid
// CHECK: func.func @train_step(%[[X:.*]]: tensor<3x4xf32> {braid.input = "dense"}, %[[I:.*]]: tensor<?xi64> {braid.input = "t.indices"}, %[[O:.*]]: tensor<4xi64> {braid.input = "t.offsets"}, %[[W:.*]]: tensor<4x4xf32> {braid.param = "bottom.weight"}, %[[B:.*]]: tensor<4xf32> {braid.param = "bottom.bias"}, %[[V:.*]]: tensor<1x5xf32> {braid.param = "top.weight"}, %[[C:.*]]: tensor<1xf32> {braid.param = "top.bias"}, %[[Y:.*]]: tensor<3xf32> {braid.input = "labels"}, %[[STEP:.*]]: tensor<i64> {braid.input = "step"}, %[[WS:.*]]: tensor<4x4xf32> {braid.state = "bottom.weight.sum"}, %{{.*}}: tensor<4xf32> {braid.state = "bottom.bias.sum"}, %{{.*}}: tensor<1x5xf32> {braid.state = "top.weight.sum"}, %{{.*}}: tensor<1xf32> {braid.state = "top.bias.sum"})
// CHECK-SAME: -> (tensor<f32> {braid.output = "loss"}, tensor<4x4xf32> {braid.param = "bottom.weight"}, tensor<4x4xf32> {braid.state = "bottom.weight.sum"},
// CHECK: %[[H:.*]] = braid.linear %[[X]], %[[W]], %[[B]] relu
// CHECK: %[[E:.*]] = braid.embedding_bag @t(%[[I]], %[[O]]) mean
// CHECK: %[[E32:.*]] = arith.extf %[[E]]
// CHECK: %[[Z:.*]] = braid.interaction dot %[[H]], %[[E32]]
// The logit, not the probability, and the loss over the global batch of 3.
// CHECK: %[[LOGIT:.*]] = braid.linear %[[Z]], %[[V]], %[[C]] none
// CHECK-NOT: sigmoid
// CHECK: %[[LOSS:.*]], %[[DZ:.*]] = braid.bce_with_logits %[[LOGIT]], %[[Y]] scale = 0.33333333333333331
// One rank: no collective anywhere.
// CHECK-NOT: braid.all_reduce
// CHECK: %[[DI:.*]], %[[DV:.*]], %[[DC:.*]] = braid.linear_grad %[[Z]], %[[V]], %[[LOGIT]], %[[DZ]] none
// CHECK: %[[DF:.*]]:2 = braid.interaction_grad dot %[[DI]], %[[H]], %[[E32]]
// The f16 table's gradient stays f32 through the extf, and the update is
// fused: no gradient of the whole table.
// CHECK-NOT: embedding_bag_grad
// CHECK: braid.embedding_bag_update @t(%[[I]], %[[O]], %[[DF]]#1) mean optimizer = {eps = 1.000000e-08 : f64, lr = 1.000000e-01 : f64, type = "rowwise_adagrad"} : tensor<?xi64>, tensor<4xi64>, tensor<3x4xf32>
// CHECK: %{{.*}}, %[[DW:.*]], %[[DB:.*]] = braid.linear_grad %[[X]], %[[W]], %[[H]], %[[DF]]#0 relu
// CHECK: %[[NW:.*]], %[[NWS:.*]] = braid.dense_update %[[W]], %[[DW]] step %[[STEP]] state(%[[WS]]) optimizer = {eps = 1.000000e-10 : f64, lr = 5.000000e-02 : f64, type = "adagrad"}
// CHECK: braid.dense_update %[[B]], %[[DB]]
// CHECK: braid.dense_update %[[V]], %[[DV]]
// CHECK: braid.dense_update %[[C]], %[[DC]]
// CHECK: return %[[LOSS]], %[[NW]], %[[NWS]],
