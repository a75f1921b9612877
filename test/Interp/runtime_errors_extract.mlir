// tensor.extract (the expansion of a fused exchange reads its counts with
// it) checks its indices at run time: an index outside the tensor is a
// located error naming the index, the dimension and the tensor.
// RUN: rm -rf %t
// RUN: %python %S/Inputs/write_npy.py %t/ok/i.npy "[1]" int64
// RUN: %python %S/Inputs/write_npy.py %t/bad/i.npy "[3]" int64
// RUN: braid-run %s --reference --inputs %t/ok --print-values | FileCheck %s --check-prefix=OK
// RUN: not braid-run %s --reference --inputs %t/bad 2>&1 | FileCheck %s

// OK: 20
// CHECK: runtime_errors_extract.mlir:[[# @LINE + 6]]:{{[0-9]+}}: error: index 3 along dimension 0 of tensor<3xi64>
func.func @main(%i: tensor<1xi64> {braid.input = "i"}) -> tensor<2xi64> {
  %values = arith.constant dense<[10, 20, 30]> : tensor<3xi64>
  %c0 = arith.constant 0 : index
  %raw = tensor.extract %i[%c0] : tensor<1xi64>
  %at = arith.index_cast %raw : i64 to index
  %picked = tensor.extract %values[%at] : tensor<3xi64>
  %pair = tensor.from_elements %picked, %raw : tensor<2xi64>
  return %pair : tensor<2xi64>
}
