// Ranks in no replica group take no part in a collective: their result is
// their input, as in a group of one. Ranks 0 and 1 reduce-scatter and sum
// their inputs; rank 2 (and rank 3 with --ranks 4) keeps its input.
// RUN: braid-run %s --reference --ranks 3 --seed 4 | FileCheck %s
// RUN: braid-run %s --reference --ranks 4 --seed 4 | FileCheck %s --check-prefix=CHECK-FOUR

// CHECK: rank 0 result 0: tensor<2xf32> sum=[[S0:[^ ]+]]
// CHECK: rank 0 result 1: tensor<4xf32>
// CHECK: rank 0 result 2: tensor<4xf32> sum=[[SUM:[^ ]+]]
// CHECK: rank 1 result 0: tensor<2xf32>
// CHECK: rank 1 result 2: tensor<4xf32> sum=[[SUM]]
// CHECK: rank 2 result 0: tensor<4xf32> sum=[[X2:[^ ]+]]
// CHECK: rank 2 result 1: tensor<4xf32> sum=[[X2]]
// CHECK: rank 2 result 2: tensor<4xf32> sum=[[X2]]
// CHECK-FOUR: rank 3 result 0: tensor<4xf32> sum=[[X3:[^ ]+]]
// CHECK-FOUR: rank 3 result 1: tensor<4xf32> sum=[[X3]]
func.func @forward(%x: tensor<4xf32> {braid.input = "x"}) -> (tensor<?xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = braid.reduce_scatter sum %x dim = 0 groups [[0, 1]] : tensor<4xf32> -> tensor<?xf32>
  %r = braid.all_reduce sum %x groups [[0, 1]] : tensor<4xf32>
  return %s, %x, %r : tensor<?xf32>, tensor<4xf32>, tensor<4xf32>
}
