// braid-decompose-collectives leaves an all_reduce alone where a form would
// change its result: an integer average taken per node and then across
// nodes rounds twice (avg(avg(1, 2), avg(0, 1)) = 0 where avg(1, 2, 0, 1) =
// 1), and groups that do not cover every rank would give the ranks outside
// them a reduce_scatter's share.
// RUN: braid-opt %s -split-input-file --braid-decompose-collectives=force | FileCheck %s

// CHECK-LABEL: func.func @integer_average
// CHECK-NOT: braid.reduce_scatter
// CHECK: braid.all_reduce avg
// Each rank contributes (rank + 1) mod 3 = 1, 2, 0, 1: the average of the
// four is 4 / 4 = 1; nested, avg(avg(1, 2), avg(0, 1)) = avg(1, 0) = 0.
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  func.func @integer_average(%a: tensor<2x2xf32> {braid.input = "a"}) -> tensor<2x2xi32> {
    %r = braid.rank : index
    %ri = arith.index_cast %r : index to i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %s = arith.addi %ri, %c1 : i32
    %m = arith.remui %s, %c3 : i32
    %v = tensor.splat %m : tensor<2x2xi32>
    %h = braid.all_reduce avg %v : tensor<2x2xi32>
    return %h : tensor<2x2xi32>
  }
}

// -----

// CHECK-LABEL: func.func @part_of_the_ranks
// CHECK-NOT: braid.reduce_scatter
// CHECK: braid.all_reduce sum %arg0 groups {{\[\[}}0, 1]]
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @part_of_the_ranks(%a: tensor<4x2xf32> {braid.input = "a"}) -> tensor<4x2xf32> {
    %h = braid.all_reduce sum %a groups [[0, 1]] : tensor<4x2xf32>
    return %h : tensor<4x2xf32>
  }
}
