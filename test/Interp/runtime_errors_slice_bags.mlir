// RUN: not braid-run %s --reference 2>&1 | FileCheck %s

// Offsets that end past the indices are an error, located at the op.
// CHECK: runtime_errors_slice_bags.mlir:8:12: error: the last offset must be the number of indices (6), got 7
func.func @forward() -> (tensor<?xi64>, tensor<?xi64>) {
  %idx = arith.constant dense<[0, 2, 4, 1, 1, 3]> : tensor<6xi64>
  %off = arith.constant dense<[0, 2, 7]> : tensor<3xi64>
  %i, %o = braid.slice_bags %idx, %off bags [1, 1] : (tensor<6xi64>, tensor<3xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return %i, %o : tensor<?xi64>, tensor<?xi64>
}
