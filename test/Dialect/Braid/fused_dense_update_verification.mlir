// RUN: braid-opt %s -split-input-file -verify-diagnostics
// braid.fused_dense_update (a gradient bucket's optimizer steps as one
// kernel): one case per verifier rule.

func.func @no_params(%g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{needs at least one parameter}}
  braid.fused_dense_update() grads %g offsets = [] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<9xf32>, tensor<i64>) -> ()
  return
}

// -----

func.func @offsets(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{has 1 offset(s) for 2 parameter(s)}}
  %r:2 = braid.fused_dense_update(%w, %b) grads %g offsets = [0] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @states(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{adagrad keeps 1 state tensor(s) per parameter: 2 parameter(s) need 2 state operand(s), and a result for each parameter and state; got 0 state operand(s) and 2 result(s)}}
  %r:2 = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 6] step %t optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @results(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{sgd keeps 0 state tensor(s) per parameter: 2 parameter(s) need 0 state operand(s), and a result for each parameter and state; got 0 state operand(s) and 1 result(s)}}
  %r = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 6] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dynamic_grads(%w: tensor<2x3xf32>, %g: tensor<?xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{grads must have a static size}}
  %r = braid.fused_dense_update(%w) grads %g offsets = [0] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<?xf32>, tensor<i64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dynamic_param(%w: tensor<?x3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{parameter 0 'tensor<?x3xf32>' must have a static shape}}
  %r = braid.fused_dense_update(%w) grads %g offsets = [0] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<?x3xf32>, tensor<9xf32>, tensor<i64>) -> tensor<?x3xf32>
  return
}

// -----

func.func @new_param(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{new parameter 1 must have the parameter's type 'tensor<3xf32>'}}
  %r:2 = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 6] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
  return
}

// -----

func.func @outside(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{parameter 1's 3 gradient element(s) at offset 7 do not lie inside grads 'tensor<9xf32>'}}
  %r:2 = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 7] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @negative(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{parameter 0's 6 gradient element(s) at offset -1 do not lie inside grads 'tensor<9xf32>'}}
  %r:2 = braid.fused_dense_update(%w, %b) grads %g offsets = [-1, 6] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @overlap(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{two parameters' gradients overlap at element 5}}
  %r:2 = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 5] step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @state_type(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>, %s: tensor<2x3xf32>, %sb: tensor<2x3xf32>) {
  // expected-error @+1 {{state 0 of parameter 1 and its result must have the parameter's type 'tensor<3xf32>'}}
  %r:4 = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 6] step %t state(%s, %sb) optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return
}

// -----

func.func @optimizer(%w: tensor<2x3xf32>, %b: tensor<3xf32>, %g: tensor<9xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{'braid.optimizer' dense: 'lr' must be finite and positive, got -1}}
  %r:2 = braid.fused_dense_update(%w, %b) grads %g offsets = [0, 6] step %t optimizer = {lr = -1.0 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<9xf32>, tensor<i64>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return
}
