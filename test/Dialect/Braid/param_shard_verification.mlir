// RUN: braid-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// A parameter stored as blocks of columns: each of 2 ranks holds 8 of 16.
// CHECK-LABEL: func.func @blocks
// CHECK-SAME: braid.param_shard = #braid.replica_groups<{{\[\[}}0, 1]]>, braid.shard_dim = 1 : i64
func.func @blocks(%w: tensor<4x8xf32> {braid.param = "w", braid.param_shard = #braid.replica_groups<[[0, 1]]>, braid.shard_dim = 1 : i64},
                  %s: tensor<4x8xf32> {braid.state = "w.sum", braid.state_shard = #braid.replica_groups<[[0, 1]]>, braid.shard_dim = 1 : i64})
    -> (tensor<4x8xf32> {braid.param = "w", braid.param_shard = #braid.replica_groups<[[0, 1]]>, braid.shard_dim = 1 : i64}) {
  return %w : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{argument 0: 'braid.param_shard' must be a #braid.replica_groups attribute}}
func.func @not_groups(%w: tensor<16xf32> {braid.param = "b", braid.param_shard = 2 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'braid.param_shard' needs 'braid.param' beside it}}
func.func @no_param(%w: tensor<16xf32> {braid.state = "b.sum", braid.param_shard = #braid.replica_groups<[[0, 1]]>}) {
  return
}

// -----

// expected-error @+1 {{result 0: 'braid.param_shard' needs a tensor with a static dimension 1}}
func.func @dynamic(%w: tensor<4x?xf32>) -> (tensor<4x?xf32> {braid.param = "w", braid.param_shard = #braid.replica_groups<[[0, 1]]>, braid.shard_dim = 1 : i64}) {
  return %w : tensor<4x?xf32>
}

// -----

// expected-error @+1 {{argument 0: 'braid.param_shard' needs a tensor with a static dimension 2}}
func.func @dim_out_of_range(%w: tensor<4x8xf32> {braid.param = "w", braid.param_shard = #braid.replica_groups<[[0, 1]]>, braid.shard_dim = 2 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'braid.shard_dim' needs 'braid.param_shard' or 'braid.state_shard' beside it}}
func.func @dim_alone(%w: tensor<4x8xf32> {braid.param = "w", braid.shard_dim = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'braid.shard_dim' must be a non-negative integer}}
func.func @dim_not_integer(%w: tensor<4x8xf32> {braid.param = "w", braid.param_shard = #braid.replica_groups<[[0, 1]]>, braid.shard_dim = "one"}) {
  return
}
