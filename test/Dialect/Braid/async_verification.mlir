// RUN: braid-opt %s -split-input-file -verify-diagnostics

func.func @gather(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{gathering 8 along dim 0 over groups of 2 gives 16, but the result has 8}}
  %0 = braid.all_gather_start %x dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
  return
}

// -----

func.func @scatter(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{scattering 8 along dim 0 over groups of 2 needs the input to be 2 times the result's 8}}
  %0 = braid.reduce_scatter_start sum %x dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
  return
}

// -----

func.func @all_to_all(%x: tensor<7xf32>) {
  // expected-error @+1 {{input size 7 along split_dim 0 does not divide into 2 equal chunks}}
  %0 = braid.all_to_all_start %x split_dim = 0 concat_dim = 0 groups [[0, 1]] : tensor<7xf32> -> !braid.token<tensor<7xf32>>
  return
}

// -----

// expected-note @+1 {{prior use here}}
func.func @wait(%t: !braid.token<tensor<8xf32>>) {
  // expected-error @+1 {{use of value '%t' expects different type than prior uses: '!braid.token<tensor<4xf32>>' vs '!braid.token<tensor<8xf32>>'}}
  %0 = braid.wait %t : !braid.token<tensor<4xf32>>
  return
}

// -----

func.func @wait_result(%t: !braid.token<tensor<8xf32>>) {
  // expected-error @+1 {{the result type is the token's value type}}
  %0 = "braid.wait"(%t) : (!braid.token<tensor<8xf32>>) -> tensor<4xf32>
  return
}

// -----

func.func @overlap(%x: tensor<8xf32>) {
  // expected-error @+1 {{replica groups must be disjoint, but rank 0 appears twice}}
  %0 = braid.all_reduce_start sum %x groups [[0, 1], [0, 2]] : tensor<8xf32> -> !braid.token<tensor<8xf32>>
  return
}

// -----

// A token waited for twice: the lowering waited on one handle twice, and the
// runtime freed the exchange's buffers twice.
func.func @waited_twice(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{returns a token that must be waited for by exactly one braid.wait and used by nothing else; token 0 has 2 wait(s) and 0 other use(s)}}
  %t = braid.all_reduce_start sum %x groups [[0, 1]] : tensor<8xf32> -> !braid.token<tensor<8xf32>>
  %a = braid.wait %t : !braid.token<tensor<8xf32>>
  %b = braid.wait %t : !braid.token<tensor<8xf32>>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

// Never waited for: the receive buffer was freed while MPI still wrote it.
func.func @never_waited(%x: tensor<8xf32>) {
  // expected-error @+1 {{returns a token that must be waited for by exactly one braid.wait and used by nothing else; token 0 has 0 wait(s) and 0 other use(s)}}
  %t = braid.all_reduce_start sum %x groups [[0, 1]] : tensor<8xf32> -> !braid.token<tensor<8xf32>>
  return
}
