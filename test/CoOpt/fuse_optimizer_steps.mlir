// braid-fuse-collective-compute's rule for a gradient bucket's optimizer
// steps: the braid.dense_updates that read one bucket through static
// unit-stride slices, with one optimizer and step number, whose operands are
// there at the first of them, become one braid.fused_dense_update there; up
// to 16 to a fused step; a step alone stays as it is.
// RUN: braid-opt %s --braid-fuse-collective-compute=force -split-input-file | FileCheck %s
// (fuse_optimizer_steps.test checks fused programs through the reference
// semantics.)

// Two Adagrad steps and an SGD step read one bucket: the Adagrad pair is
// fused at the first of them, reading its gradients at 0 and 6 (the
// weight's reshaped slice and the bias's); the SGD step, alone with its
// optimizer, stays.
// CHECK-LABEL: func.func @mixed(
// CHECK: %[[G:.*]] = braid.all_reduce sum
// CHECK-NEXT: %[[F:.*]]:4 = braid.fused_dense_update(%arg0, %arg1) grads %[[G]] offsets = [0, 6] step %arg3 state(%arg4, %arg5) optimizer = {eps = 1.000000e-10 : f64, lr = 1.000000e-01 : f64, type = "adagrad"}
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[G]][9] [2] [1]
// CHECK-NEXT: %[[P:.*]] = braid.dense_update %arg2, %[[S]] step %arg3 optimizer = {lr = 1.000000e-01 : f64, type = "sgd"}
// CHECK-NEXT: return %[[F]]#0, %[[F]]#1, %[[P]], %[[F]]#2, %[[F]]#3
func.func @mixed(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2xf32>, %t: tensor<i64>, %sw: tensor<2x3xf32>, %sb: tensor<3xf32>, %x: tensor<11xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<3xf32>) {
  %g = braid.all_reduce sum %x groups [[0]] : tensor<11xf32>
  %g0 = tensor.extract_slice %g[0] [6] [1] : tensor<11xf32> to tensor<6xf32>
  %gw = tensor.expand_shape %g0 [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  %w2, %sw2 = braid.dense_update %w, %gw step %t state(%sw) optimizer = {eps = 1.000000e-10 : f64, lr = 1.000000e-01 : f64, type = "adagrad"} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %gc = tensor.extract_slice %g[9] [2] [1] : tensor<11xf32> to tensor<2xf32>
  %c2 = braid.dense_update %c, %gc step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<2xf32>, tensor<2xf32>, tensor<i64>) -> tensor<2xf32>
  %gb = tensor.extract_slice %g[6] [3] [1] : tensor<11xf32> to tensor<3xf32>
  %b2, %sb2 = braid.dense_update %b, %gb step %t state(%sb) optimizer = {eps = 1.000000e-10 : f64, lr = 1.000000e-01 : f64, type = "adagrad"} : (tensor<3xf32>, tensor<3xf32>, tensor<i64>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %w2, %b2, %c2, %sw2, %sb2 : tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<3xf32>
}

// -----

// The second step's parameter is computed after the first step, so the
// fused step could not go there: both stay.
// CHECK-LABEL: func.func @late_parameter(
// CHECK-NOT: braid.fused_dense_update
// CHECK-COUNT-2: braid.dense_update
func.func @late_parameter(%w: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<i64>, %x: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %g = braid.all_reduce sum %x groups [[0]] : tensor<8xf32>
  %g0 = tensor.extract_slice %g[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %w2 = braid.dense_update %w, %g0 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  %late = arith.addf %v, %w2 : tensor<4xf32>
  %g1 = tensor.extract_slice %g[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %v2 = braid.dense_update %late, %g1 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return %w2, %v2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A strided slice is not a gradient in the bucket's order: its step stays,
// and the other is alone.
// CHECK-LABEL: func.func @strided(
// CHECK-NOT: braid.fused_dense_update
func.func @strided(%w: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<i64>, %x: tensor<12xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %g = braid.all_reduce sum %x groups [[0]] : tensor<12xf32>
  %g0 = tensor.extract_slice %g[0] [4] [2] : tensor<12xf32> to tensor<4xf32>
  %w2 = braid.dense_update %w, %g0 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  %g1 = tensor.extract_slice %g[8] [4] [1] : tensor<12xf32> to tensor<4xf32>
  %v2 = braid.dense_update %v, %g1 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return %w2, %v2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// 17 steps of one bucket: 16 in one fused step, the 17th alone.
// CHECK-LABEL: func.func @seventeen(
// CHECK: braid.fused_dense_update(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10, %arg11, %arg12, %arg13, %arg14, %arg15) grads %{{.*}} offsets = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// CHECK-NOT: braid.fused_dense_update
// CHECK: braid.dense_update %arg16
// CHECK-NOT: braid.fused_dense_update
func.func @seventeen(%p0: tensor<1xf32>, %p1: tensor<1xf32>, %p2: tensor<1xf32>, %p3: tensor<1xf32>, %p4: tensor<1xf32>, %p5: tensor<1xf32>, %p6: tensor<1xf32>, %p7: tensor<1xf32>, %p8: tensor<1xf32>, %p9: tensor<1xf32>, %p10: tensor<1xf32>, %p11: tensor<1xf32>, %p12: tensor<1xf32>, %p13: tensor<1xf32>, %p14: tensor<1xf32>, %p15: tensor<1xf32>, %p16: tensor<1xf32>, %t: tensor<i64>, %x: tensor<17xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %g = braid.all_reduce sum %x groups [[0]] : tensor<17xf32>
  %g0 = tensor.extract_slice %g[0] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q0 = braid.dense_update %p0, %g0 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g1 = tensor.extract_slice %g[1] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q1 = braid.dense_update %p1, %g1 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g2 = tensor.extract_slice %g[2] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q2 = braid.dense_update %p2, %g2 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g3 = tensor.extract_slice %g[3] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q3 = braid.dense_update %p3, %g3 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g4 = tensor.extract_slice %g[4] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q4 = braid.dense_update %p4, %g4 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g5 = tensor.extract_slice %g[5] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q5 = braid.dense_update %p5, %g5 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g6 = tensor.extract_slice %g[6] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q6 = braid.dense_update %p6, %g6 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g7 = tensor.extract_slice %g[7] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q7 = braid.dense_update %p7, %g7 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g8 = tensor.extract_slice %g[8] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q8 = braid.dense_update %p8, %g8 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g9 = tensor.extract_slice %g[9] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q9 = braid.dense_update %p9, %g9 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g10 = tensor.extract_slice %g[10] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q10 = braid.dense_update %p10, %g10 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g11 = tensor.extract_slice %g[11] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q11 = braid.dense_update %p11, %g11 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g12 = tensor.extract_slice %g[12] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q12 = braid.dense_update %p12, %g12 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g13 = tensor.extract_slice %g[13] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q13 = braid.dense_update %p13, %g13 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g14 = tensor.extract_slice %g[14] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q14 = braid.dense_update %p14, %g14 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g15 = tensor.extract_slice %g[15] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q15 = braid.dense_update %p15, %g15 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  %g16 = tensor.extract_slice %g[16] [1] [1] : tensor<17xf32> to tensor<1xf32>
  %q16 = braid.dense_update %p16, %g16 step %t optimizer = {lr = 1.000000e-01 : f64, type = "sgd"} : (tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> tensor<1xf32>
  return %q0, %q1, %q2, %q3, %q4, %q5, %q6, %q7, %q8, %q9, %q10, %q11, %q12, %q13, %q14, %q15, %q16 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}
