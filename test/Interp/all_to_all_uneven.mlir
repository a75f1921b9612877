// RUN: rm -rf %t
// RUN: %python %S/Inputs/write_npy.py %t/rank0/x.npy "[0, 1, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/rank1/x.npy "[10, 11, 12, 13]" int64
// RUN: %python %S/Inputs/write_npy.py %t/rank2/x.npy "[20, 21, 22]" int64
// RUN: braid-run %s --reference --ranks 3 --inputs %t --print-values | FileCheck %s

// Uneven exchange of indices, as a row-wise embedding sends them to the
// owners of their rows. Rank i sends split_sizes[i][j] elements to rank j:
//   [[1, 2, 0],
//    [0, 1, 3],
//    [2, 0, 1]]
// CHECK: rank 0 result 0: tensor<3xi64>
// CHECK-NEXT: [0, 20, 21]
// CHECK-NEXT: rank 1 result 0: tensor<3xi64>
// CHECK-NEXT: [1, 2, 10]
// CHECK-NEXT: rank 2 result 0: tensor<4xi64>
// CHECK-NEXT: [11, 12, 13, 22]
func.func @forward(%x: tensor<?xi64> {braid.input = "x"}) -> tensor<?xi64> {
  %y = braid.all_to_all %x split_dim = 0 concat_dim = 0 split_sizes = [1, 2, 0, 0, 1, 3, 2, 0, 1] groups [[0, 1, 2]] : tensor<?xi64> -> tensor<?xi64>
  return %y : tensor<?xi64>
}
