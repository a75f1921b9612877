// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s

// Hierarchical forms over 4 ranks on 2 "nodes": intra-node groups
// [[0, 1], [2, 3]] and inter-node groups [[0, 2], [1, 3]].
// Rank r holds [r].
// Result 0: intra-node sum. Result 1: inter-node sum of result 0, which is
// the global sum, 6. Result 2: intra-node broadcast from position 1.
// Result 3: all_gather within [[0, 2], [1, 3]].
// CHECK: rank 0 result 0: tensor<1xf32>
// CHECK-NEXT: [1]
// CHECK-NEXT: rank 0 result 1: tensor<1xf32>
// CHECK-NEXT: [6]
// CHECK-NEXT: rank 0 result 2: tensor<1xf32>
// CHECK-NEXT: [1]
// CHECK-NEXT: rank 0 result 3: tensor<2xf32>
// CHECK-NEXT: [0, 2]
// CHECK: rank 3 result 0: tensor<1xf32>
// CHECK-NEXT: [5]
// CHECK-NEXT: rank 3 result 1: tensor<1xf32>
// CHECK-NEXT: [6]
// CHECK-NEXT: rank 3 result 2: tensor<1xf32>
// CHECK-NEXT: [3]
// CHECK-NEXT: rank 3 result 3: tensor<2xf32>
// CHECK-NEXT: [1, 3]
func.func @forward() -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<2xf32>) {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %x = tensor.splat %rf : tensor<1xf32>
  %intra = braid.all_reduce sum %x groups [[0, 1], [2, 3]] : tensor<1xf32>
  %global = braid.all_reduce sum %intra groups [[0, 2], [1, 3]] : tensor<1xf32>
  %b = braid.broadcast %x root = 1 groups [[0, 1], [2, 3]] : tensor<1xf32>
  %g = braid.all_gather %x dim = 0 groups [[0, 2], [1, 3]] : tensor<1xf32> -> tensor<2xf32>
  return %intra, %global, %b, %g : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<2xf32>
}
