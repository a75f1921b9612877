// RUN: rm -rf %t
// RUN: %python %S/Inputs/write_npy.py %t/weights/t.npy "[[1, 10], [2, 20], [3, 30], [4, 40], [5, 50], [6, 60]]" float32
// RUN: %python %S/Inputs/write_npy.py %t/inputs/rank0/t.indices.npy "[0, 4, 5]" int64
// RUN: %python %S/Inputs/write_npy.py %t/inputs/rank0/t.offsets.npy "[0, 2, 3]" int64
// RUN: %python %S/Inputs/write_npy.py %t/inputs/rank1/t.indices.npy "[3]" int64
// RUN: %python %S/Inputs/write_npy.py %t/inputs/rank1/t.offsets.npy "[0, 1]" int64
// RUN: braid-run %s --reference --ranks 2 --inputs %t/inputs --weights %t/weights --print-values | FileCheck %s

// A row-wise table, rows [0, 3) on rank 0 and [3, 6) on rank 1, looked up
// with mean pooling by 2 + 1 bags: {0, 4} and {5} on rank 0, {3} on rank 1.
// Each rank gets 2 bag slots per destination.
//
// Rank 0 routes row 0 to rank 0 and rows 4, 5 to rank 1 as 1, 2; rank 1
// routes row 3 to rank 1 as 0.
// CHECK: rank 0 result 0: tensor<4xi64>
// CHECK-NEXT: [1, 0, 1, 1]
// CHECK-NEXT: rank 0 result 1: tensor<3xi64>
// CHECK-NEXT: [0, 1, 2]
// CHECK-NEXT: rank 0 result 2: tensor<2xi64>
// CHECK-NEXT: [1, 2]
// Rank 0's owner partials: row 0 for its first bag, nothing else.
// CHECK-NEXT: rank 0 result 3: tensor<4x2xf32>
// CHECK-NEXT: {{\[\[}}1, 10], [0, 0], [0, 0], [0, 0]]
// Rank 0's bags after the reduce_scatter and the mean: (1 + 5) / 2 and 6.
// CHECK-NEXT: rank 0 result 4: tensor<2x2xf32>
// CHECK-NEXT: {{\[\[}}3, 30], [6, 60]]
// CHECK-NEXT: rank 1 result 0: tensor<4xi64>
// CHECK-NEXT: [0, 0, 1, 0]
// CHECK-NEXT: rank 1 result 1: tensor<1xi64>
// CHECK-NEXT: [0]
// CHECK-NEXT: rank 1 result 2: tensor<2xi64>
// CHECK-NEXT: [0, 1]
// Rank 1 holds rows 3..5: rank 0's two bags (5, 6) and its own (4).
// CHECK-NEXT: rank 1 result 3: tensor<4x2xf32>
// CHECK-NEXT: {{\[\[}}5, 50], [6, 60], [4, 40], [0, 0]]
// CHECK-NEXT: rank 1 result 4: tensor<1x2xf32>
// CHECK-NEXT: {{\[\[}}4, 40]]
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<6x2xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 3, 6]>
  func.func @forward(%idx: tensor<?xi64> {braid.input = "t.indices"}, %off: tensor<?xi64> {braid.input = "t.offsets"})
      -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>, tensor<4x2xf32>, tensor<?x2xf32>) {
    %len, %vals, %counts = braid.bucketize @t(%idx, %off) to [0, 1] bags_per_rank = 2
        : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    %rlen = braid.all_to_all %len split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> tensor<4xi64>
    %rvals = braid.all_to_all_v %vals, %counts : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
    %part = braid.shard_embedding_bag @t(%rvals, %rlen) sum : (tensor<?xi64>, tensor<4xi64>) -> tensor<4x2xf32>
    %mine = braid.reduce_scatter sum %part dim = 0 groups [[0, 1]] : tensor<4x2xf32> -> tensor<2x2xf32>
    %e = braid.combine_shards @t(%mine, %off) mean bags_per_rank = 2 : (tensor<2x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
    return %len, %vals, %counts, %part, %e : tensor<4xi64>, tensor<?xi64>, tensor<2xi64>, tensor<4x2xf32>, tensor<?x2xf32>
  }
}
