// RUN: braid-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// A sharded optimizer state: each member of a group holds 16 of the 32 rows.
// CHECK-LABEL: func.func @sharded
// CHECK-SAME: braid.state_shard = #braid.replica_groups<{{\[\[}}0, 1]]>
func.func @sharded(%s: tensor<16x13xf32> {braid.state = "w.sum", braid.state_shard = #braid.replica_groups<[[0, 1]]>})
    -> (tensor<16x13xf32> {braid.state = "w.sum", braid.state_shard = #braid.replica_groups<[[0, 1]]>}) {
  return %s : tensor<16x13xf32>
}

// -----

// expected-error @+1 {{argument 0: 'braid.state_shard' must be a #braid.replica_groups attribute}}
func.func @not_groups(%s: tensor<16xf32> {braid.state = "b.sum", braid.state_shard = 2 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'braid.state_shard' needs 'braid.state' beside it}}
func.func @no_state(%s: tensor<16xf32> {braid.param = "b", braid.state_shard = #braid.replica_groups<[[0, 1]]>}) {
  return
}

// -----

// expected-error @+1 {{result 0: 'braid.state_shard' needs a tensor with a static dimension 0}}
func.func @dynamic(%s: tensor<?xf32>) -> (tensor<?xf32> {braid.state = "b.sum", braid.state_shard = #braid.replica_groups<[[0, 1]]>}) {
  return %s : tensor<?xf32>
}
