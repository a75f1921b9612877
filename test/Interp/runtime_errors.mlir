// RUN: rm -rf %t && %python %S/Inputs/make_table.py %t t 4 2
// RUN: not braid-run %s --reference --weights %t 2>&1 | FileCheck %s

// An index beyond the table is a located error, not a crash or a wrong read.
braid.table @t : tensor<4x2xf32> pooling_factor = 1.0

func.func @forward() -> tensor<2x2xf32> {
  %idx = arith.constant dense<[1, 4]> : tensor<2xi64>
  %off = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
  // CHECK: runtime_errors.mlir:[[@LINE+1]]:8: error: index 4 at position 1 is out of range for table 't' with 4 rows
  %r = braid.embedding_bag @t(%idx, %off) sum : (tensor<2xi64>, tensor<3xi64>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
