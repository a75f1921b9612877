// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @uneven(%x: tensor<4xf32>) {
  // expected-error @+1 {{replica group 1 has 1 ranks but group 0 has 2; all groups must have the same size}}
  %0 = braid.all_reduce sum %x groups [[0, 1], [2]] : tensor<4xf32>
  return
}

// -----

func.func @overlap(%x: tensor<4xf32>) {
  // expected-error @+1 {{replica groups must be disjoint, but rank 1 appears twice}}
  %0 = braid.all_reduce sum %x groups [[0, 1], [1, 2]] : tensor<4xf32>
  return
}

// -----

func.func @negative(%x: tensor<4xf32>) {
  // expected-error @+1 {{replica groups have a negative rank -1}}
  %0 = braid.all_reduce sum %x groups [[0, -1]] : tensor<4xf32>
  return
}

// -----

func.func @empty(%x: tensor<4xf32>) {
  // expected-error @+1 {{replica groups must list at least one group}}
  %0 = braid.all_reduce sum %x groups [] : tensor<4xf32>
  return
}

// -----

func.func @empty_group(%x: tensor<4xf32>) {
  // expected-error @+1 {{replica groups must not be empty}}
  %0 = braid.all_reduce sum %x groups [[]] : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{replica group 1 has 3 ranks but group 0 has 1}}
module attributes {a.b = #braid.replica_groups<[[0], [1, 2, 3]]>} {}
