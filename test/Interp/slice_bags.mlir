// RUN: braid-run %s --reference --print-values | FileCheck %s

// Bags {0, 2}, {4}, {}, {1, 1, 3}: ranges of them, rebased to start at 0;
// a range past the last bag stops there, one wholly past it has no bags.
// CHECK: reference semantics of @forward on 1 rank
// CHECK-NEXT: rank 0 result 0: tensor<1xi64>
// CHECK-NEXT: [4]
// CHECK-NEXT: rank 0 result 1: tensor<3xi64>
// CHECK-NEXT: [0, 1, 1]
// CHECK-NEXT: rank 0 result 2: tensor<3xi64>
// CHECK-NEXT: [1, 1, 3]
// CHECK-NEXT: rank 0 result 3: tensor<2xi64>
// CHECK-NEXT: [0, 3]
// CHECK-NEXT: rank 0 result 4: tensor<0xi64>
// CHECK-NEXT: []
// CHECK-NEXT: rank 0 result 5: tensor<1xi64>
// CHECK-NEXT: [0]
func.func @forward() -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) {
  %idx = arith.constant dense<[0, 2, 4, 1, 1, 3]> : tensor<6xi64>
  %off = arith.constant dense<[0, 2, 3, 3, 6]> : tensor<5xi64>
  %i1, %o1 = braid.slice_bags %idx, %off bags [1, 2] : (tensor<6xi64>, tensor<5xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  %i2, %o2 = braid.slice_bags %idx, %off bags [3, 4] : (tensor<6xi64>, tensor<5xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  %i3, %o3 = braid.slice_bags %idx, %off bags [6, 2] : (tensor<6xi64>, tensor<5xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return %i1, %o1, %i2, %o2, %i3, %o3 : tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>
}
