// RUN: rm -rf %t
// RUN: %python %S/Inputs/write_npy.py %t/rank0/x.npy "[1, 2, 3, 4, 5]" float32
// RUN: %python %S/Inputs/write_npy.py %t/rank1/x.npy "[1, 2, 3]" float32
// RUN: not braid-run %s --reference --ranks 2 --inputs %t 2>&1 | FileCheck %s

// Shapes that only the values reveal: ranks disagree on the shape of an
// all_reduce operand.
// CHECK: runtime_errors_shapes.mlir:[[@LINE+2]]:8: error: ranks 0 and 1 send different shapes: tensor<5xf32> and tensor<3xf32>
func.func @forward(%x: tensor<?xf32> {braid.input = "x"}) -> tensor<?xf32> {
  %y = braid.all_reduce sum %x : tensor<?xf32>
  return %y : tensor<?xf32>
}
