// RUN: braid-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{cluster nodes must be positive, got 0}}
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 0, ranks_per_node = 8>} {}

// -----

// expected-error @+1 {{cluster ranks_per_node must be positive, got -8}}
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = -8>} {}

// -----

// expected-error @+1 {{cluster hardware must be named}}
module attributes {braid.cluster = #braid.cluster<hardware = "", nodes = 1, ranks_per_node = 8>} {}

// -----

// expected-error @+1 {{'braid.cluster' must be a #braid.cluster attribute, got "dgx"}}
module attributes {braid.cluster = "dgx"} {}

// -----

module {
  // expected-error @+1 {{'braid.cluster' may only be attached to a module}}
  func.func @f() attributes {braid.cluster = #braid.cluster<hardware = "x", nodes = 1, ranks_per_node = 1>} {
    return
  }
}

// -----

// expected-error @+1 {{'braid.model' must be a string on a module}}
module attributes {braid.model = 3 : i64} {}

// -----

// expected-error @+1 {{'braid.planner' must be a string on a module}}
module attributes {braid.planner = 3 : i64} {}

// -----

// expected-error @+1 {{unknown Braid attribute 'braid.bogus'}}
module attributes {braid.bogus = 1 : i64} {}

// -----

// expected-error @+1 {{argument 0: 'braid.input' must be a non-empty string}}
func.func @f(%a: tensor<4xf32> {braid.input = ""}) {
  return
}

// -----

// expected-error @+1 {{unknown Braid argument attribute 'braid.weight'}}
func.func @f(%a: tensor<4xf32> {braid.weight = "w"}) {
  return
}

// -----

// The world is bounded, and its product is not taken where it would
// overflow (2^62 + 1 nodes of 4 ranks wrapped to 4 ranks).
// expected-error @+1 {{a cluster of 4611686018427387905 x 4 ranks is more than the 4096 Braid plans and simulates}}
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 4611686018427387905, ranks_per_node = 4>} {}
