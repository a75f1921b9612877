// RUN: rm -rf %t
// RUN: %python %S/Inputs/write_npy.py %t/z.npy "[[1, 2, 3], [4, 5, 6]]" float32
// RUN: %python %S/Inputs/write_npy.py %t/y.npy "[1, 0]" float32
// RUN: not braid-run %s --reference --inputs %t 2>&1 | FileCheck %s

// Logits of a dynamic width pass the verifier; several columns gave a loss
// from the wrong elements.
// CHECK: runtime_errors_bce_width.mlir:[[@LINE+2]]:16: error: logits are tensor<2x3xf32>, one column expected
func.func @forward(%z: tensor<?x?xf32> {braid.input = "z"}, %y: tensor<?xf32> {braid.input = "y"}) -> tensor<f32> {
  %loss, %dz = braid.bce_with_logits %z, %y scale = 0.5 : tensor<?x?xf32>, tensor<?xf32> -> tensor<f32>, tensor<?x?xf32>
  return %loss : tensor<f32>
}
