// RUN: braid-opt %s --braid-partition -split-input-file -verify-diagnostics

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%x: tensor<16x8xf32> {braid.input = "dense"}, %w: tensor<4x8xf32> {braid.param = "w"}, %b: tensor<4xf32> {braid.param = "b"}) -> tensor<16x4xf32> {
    // expected-error @below {{braid-partition lays out a column-parallel braid.linear over all 2 ranks in order, but its placement names ranks [1, 0]}}
    %h = braid.linear %x, %w, %b relu {placement = #braid.dense_placement<column, ranks = [1, 0]>}
        : tensor<16x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<16x4xf32>
    return %h : tensor<16x4xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%x: tensor<15x8xf32> {braid.input = "dense"}, %w: tensor<4x8xf32> {braid.param = "w"}, %b: tensor<4xf32> {braid.param = "b"}) -> tensor<15x4xf32> {
    // expected-error @below {{a column-parallel braid.linear needs the batch of 15 to divide evenly over 2 ranks}}
    %h = braid.linear %x, %w, %b relu {placement = #braid.dense_placement<column, ranks = [0, 1]>}
        : tensor<15x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<15x4xf32>
    return %h : tensor<15x4xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%x: tensor<16x8xf32> {braid.input = "dense"}, %w: tensor<3x8xf32> {braid.param = "w"}, %b: tensor<3xf32> {braid.param = "b"}) -> tensor<16x3xf32> {
    // expected-error @below {{a column-parallel braid.linear splits its output features over 2 ranks, but the weight has 3}}
    %h = braid.linear %x, %w, %b relu {placement = #braid.dense_placement<column, ranks = [0, 1]>}
        : tensor<16x8xf32>, tensor<3x8xf32>, tensor<3xf32> -> tensor<16x3xf32>
    return %h : tensor<16x3xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%x: tensor<16x7xf32> {braid.input = "dense"}, %w: tensor<4x7xf32> {braid.param = "w"}, %b: tensor<4xf32> {braid.param = "b"}) -> tensor<16x4xf32> {
    // expected-error @below {{a row-parallel braid.linear splits its input features over 2 ranks, but the weight has 7}}
    %h = braid.linear %x, %w, %b none {placement = #braid.dense_placement<row, ranks = [0, 1]>}
        : tensor<16x7xf32>, tensor<4x7xf32>, tensor<4xf32> -> tensor<16x4xf32>
    return %h : tensor<16x4xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%x: tensor<16x8xf32> {braid.input = "dense"}, %w: tensor<4x8xf32> {braid.param = "w"}, %b: tensor<4xf32> {braid.param = "b"}) -> tensor<16x4xf32> {
    // expected-error @below {{a row-parallel braid.linear must have no activation: it would apply to partial sums}}
    %h = braid.linear %x, %w, %b relu {placement = #braid.dense_placement<row, ranks = [0, 1]>}
        : tensor<16x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<16x4xf32>
    return %h : tensor<16x4xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%x: tensor<16x8xf32> {braid.input = "dense"}, %w: tensor<4x8xf32> {braid.param = "w"}, %b: tensor<4xf32> {braid.param = "b"}) -> tensor<16x4xf32> {
    %c = arith.constant dense<1.0> : tensor<16x8xf32>
    // expected-error @below {{a column-parallel braid.linear needs a batch-shaped input}}
    %h = braid.linear %c, %w, %b relu {placement = #braid.dense_placement<column, ranks = [0, 1]>}
        : tensor<16x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<16x4xf32>
    %s = arith.addf %h, %h : tensor<16x4xf32>
    %y = arith.addf %x, %x : tensor<16x8xf32>
    return %s : tensor<16x4xf32>
  }
}
