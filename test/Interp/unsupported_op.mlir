// RUN: not braid-run %s --reference 2>&1 | FileCheck %s

// Ops outside the reference semantics are reported where they are.
func.func @forward() -> tensor<2xf32> {
  %x = arith.constant dense<[1.0, 4.0]> : tensor<2xf32>
  // CHECK: unsupported_op.mlir:[[@LINE+1]]:8: error: the reference semantics cannot run 'arith.remf'
  %y = arith.remf %x, %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
