// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @root(%x: tensor<16xf32>) {
  // expected-error @+1 {{root 2 is not a position in groups of 2}}
  %0 = braid.broadcast %x root = 2 groups [[0, 1]] : tensor<16xf32>
  return
}

// -----

func.func @negative(%x: tensor<16xf32>) {
  // expected-error @+1 {{root -1 is not a position in groups of any size}}
  %0 = braid.broadcast %x root = -1 : tensor<16xf32>
  return
}

// -----

func.func @start_type(%x: tensor<16xf32>) {
  // expected-error @+1 {{result type 'tensor<8xf32>' must be the input type 'tensor<16xf32>'}}
  %0 = braid.broadcast_start %x root = 0 : tensor<16xf32> -> !braid.token<tensor<8xf32>>
  return
}
