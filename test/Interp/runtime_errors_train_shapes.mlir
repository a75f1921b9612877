// RUN: rm -rf %t
// RUN: %python %S/Inputs/write_npy.py %t/w.npy "[1, 2, 3, 4]" float32
// RUN: %python %S/Inputs/write_npy.py %t/g.npy "[1, 1, 1, 1]" float32
// RUN: %python %S/Inputs/write_npy.py %t/s.npy "[1, 1]" float32
// RUN: not braid-run %s --reference --inputs %t 2>&1 | FileCheck %s

// Shapes of the training ops that only the values reveal, where the
// verifier sees dynamic sizes: an optimizer state smaller than its
// parameter was stepped as zeros past its end and came back with more
// values than its shape (runtime_errors_bce_width.mlir has the loss's).
// CHECK: runtime_errors_train_shapes.mlir:[[@LINE+3]]:14: error: parameter 0 is tensor<4xf32> but its optimizer state is tensor<2xf32>
func.func @forward(%w: tensor<?xf32> {braid.input = "w"}, %g: tensor<?xf32> {braid.input = "g"}, %s: tensor<?xf32> {braid.input = "s"}) -> (tensor<?xf32>, tensor<?xf32>) {
  %t = arith.constant dense<1> : tensor<i64>
  %w2, %s2 = braid.dense_update %w, %g step %t state(%s) optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"} : (tensor<?xf32>, tensor<?xf32>, tensor<i64>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %w2, %s2 : tensor<?xf32>, tensor<?xf32>
}
