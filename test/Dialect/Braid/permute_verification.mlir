// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @triples(%x: tensor<8xf32>) {
  // expected-error @+1 {{pairs must each list a source and a target, got lists of 3}}
  %0 = braid.permute %x pairs [[0, 1, 2]] : tensor<8xf32>
  return
}

// -----

func.func @sources(%x: tensor<8xf32>) {
  // expected-error @+1 {{rank 0 is the source of two pairs}}
  %0 = braid.permute %x pairs [[0, 1], [0, 2]] : tensor<8xf32>
  return
}

// -----

func.func @targets(%x: tensor<8xf32>) {
  // expected-error @+1 {{rank 2 is the target of two pairs}}
  %0 = braid.permute %x pairs [[0, 2], [1, 2]] : tensor<8xf32>
  return
}

// -----

func.func @negative(%x: tensor<8xf32>) {
  // expected-error @+1 {{replica groups have a negative rank -1}}
  %0 = braid.permute %x pairs [[0, -1]] : tensor<8xf32>
  return
}
