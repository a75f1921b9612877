// RUN: braid-opt %s -split-input-file -verify-diagnostics --braid-plan-sharding

// expected-error @+1 {{no cluster: give the module a braid.cluster attribute or the pass a cluster}}
module {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
}

// -----

// expected-error @+1 {{'no-such-machine' is neither a preset (dgx-a100, dgx-h100, pcie-a100x4, aws-p4d, aws-p5, gcp-a3, gcp-a3-mega, gcp-a3-ultra, azure-nd-a100-v4, azure-nd-h100-v5, oci-a100, oci-h100, oci-h200, local-cpu) nor a readable file}}
module attributes {braid.cluster = #braid.cluster<hardware = "no-such-machine", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
  func.func @f(%i: tensor<?xi64>, %o: tensor<?xi64>) -> tensor<?x4xf32> {
    // expected-error @+1 {{the global batch must be static, but this bag's result has a dynamic number of rows}}
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
    return %e : tensor<?x4xf32>
  }
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
  func.func @f(%i: tensor<?xi64>, %o: tensor<5xi64>, %o2: tensor<7xi64>) -> (tensor<4x4xf32>, tensor<6x4xf32>) {
    // expected-note @+1 {{4 bags here}}
    %e = braid.embedding_bag @t(%i, %o) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x4xf32>
    // expected-error @+1 {{the global batch is ambiguous: 6 bags here}}
    %f = braid.embedding_bag @t(%i, %o2) sum : (tensor<?xi64>, tensor<7xi64>) -> tensor<6x4xf32>
    return %e, %f : tensor<4x4xf32>, tensor<6x4xf32>
  }
}

// -----

// A 40 GB table cannot fit on one 80 GB H100 less its reserve, twice.
// expected-error @+1 {{planning failed}}
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 1>} {
  braid.table @a : tensor<40000000x256xf32> pooling_factor = 1.0
  braid.table @b : tensor<40000000x256xf32> pooling_factor = 1.0
  func.func @f(%i: tensor<?xi64>, %o: tensor<5xi64>) -> tensor<4x256xf32> {
    %e = braid.embedding_bag @a(%i, %o) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x256xf32>
    return %e : tensor<4x256xf32>
  }
}

// -----

// expected-error @+1 {{cannot find the global batch: no embedding bag and no statically shaped braid.input}}
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
}
