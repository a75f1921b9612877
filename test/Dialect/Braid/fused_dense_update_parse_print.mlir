// RUN: braid-opt %s | braid-opt | FileCheck %s
// braid.fused_dense_update prints what it parses: the parameters, the
// bucket and each member's offset in it, the step, the state (one per
// member and optimizer state, member by member), then the results (the new
// parameters, then the new state).

// CHECK-LABEL: func.func @adagrad(
// CHECK: %[[R:.*]]:4 = braid.fused_dense_update(%arg0, %arg1) grads %arg2 offsets = [3, 0] step %arg3 state(%arg4, %arg5) optimizer = {eps = 1.000000e-10 : f64, lr = 1.000000e-01 : f64, type = "adagrad"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>)
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
func.func @adagrad(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>, %sw: tensor<2x3xf32>, %sb: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>) {
  %r:4 = braid.fused_dense_update(%w, %b) grads %g offsets = [3, 0] step %t state(%sw, %sb) optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @sgd(
// CHECK: braid.fused_dense_update(%arg0) grads %arg1 offsets = [2] step %arg2 optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<4xf32>, tensor<6xf32>, tensor<i64>) -> tensor<4xf32>
func.func @sgd(%w: tensor<4xf32>, %g: tensor<6xf32>, %t: tensor<i64>) -> tensor<4xf32> {
  %r = braid.fused_dense_update(%w) grads %g offsets = [2] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<4xf32>, tensor<6xf32>, tensor<i64>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
