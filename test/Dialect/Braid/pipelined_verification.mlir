// The attributes of a pipelined form (braid-pipeline-input-dist): each
// misuse is a located error.
// RUN: braid-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'braid.input_dist' must name a function (a flat symbol reference) on a function}}
module attributes {braid.input_dist = @f} {}

// -----

module {
  // expected-error @+1 {{'braid.pipelined_of' must name a function (a flat symbol reference) on a function}}
  func.func @f() attributes {braid.pipelined_of = "g"} {
    return
  }
}

// -----

module {
  // expected-error @+1 {{'braid.input_dist' names @missing, which is no function of the module}}
  func.func @f() attributes {braid.input_dist = @missing} {
    return
  }
}

// -----

// expected-error @+1 {{argument 0: 'braid.next_input' must be a non-empty string}}
func.func @f(%a: tensor<4xi64> {braid.next_input = 3}) {
  return
}

// -----

// expected-error @+1 {{result 0: 'braid.carried' must be a non-empty string}}
func.func @f() -> (tensor<4xi64> {braid.carried = ""}) {
  %0 = arith.constant dense<0> : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

module {
  // expected-error @+1 {{'braid.input_dist' names @f, which is itself or a pipelined form}}
  func.func @f() attributes {braid.input_dist = @f} {
    return
  }
}

// -----

module {
  func.func @g() attributes {braid.pipelined_of = @h} {
    return
  }
  func.func @h() {
    return
  }
  // expected-error @+1 {{'braid.input_dist' names @g, which is itself or a pipelined form}}
  func.func @f() attributes {braid.input_dist = @g} {
    return
  }
}
