// RUN: not braid-run %s --reference --ranks 2 2>&1 | FileCheck %s --check-prefix=CHECK-BEYOND
// RUN: not braid-run %s --reference --ranks 0 2>&1 | FileCheck %s --check-prefix=CHECK-ZERO
// RUN: not braid-run %s 2>&1 | FileCheck %s --check-prefix=CHECK-NOREF

// CHECK-BEYOND: error: replica groups name rank 2 but only 2 ranks run
// CHECK-ZERO: braid-run: error: --ranks must be between 1 and 4096, got 0
// CHECK-NOREF: braid-run: error: a .mlir file runs under the reference semantics; pass --reference, or give a braid-compile --target cpu directory
func.func @forward(%x: tensor<4xf32> {braid.input = "x"}) -> tensor<4xf32> {
  %y = braid.all_reduce sum %x groups [[0, 1], [2, 3]] : tensor<4xf32>
  return %y : tensor<4xf32>
}
