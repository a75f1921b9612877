// RUN: rm -rf %t
// RUN: braid-run %s --reference --seed 7 --dump %t > %t.first
// RUN: braid-run %s --reference --inputs %t/inputs --weights %t/weights > %t.second
// RUN: FileCheck %s --check-prefix=CHECK-FIRST < %t.first
// RUN: FileCheck %s --check-prefix=CHECK-SECOND < %t.second
// RUN: %python -c "import numpy as n; a = n.load('%t/output.npy'); assert a.shape == (4, 3) and a.dtype == n.float32, a; print('output', a.shape, a.dtype)" | FileCheck %s --check-prefix=CHECK-NPY

// A run on generated data, dumped and read back, reproduces itself exactly.
// CHECK-FIRST: reference semantics of @forward on 1 rank (seed 7)
// CHECK-FIRST-NEXT: rank 0 result 0: tensor<4x3xf32> sum=[[SUM:[-0-9.e+]+]] min=[[MIN:[-0-9.e+]+]] max=[[MAX:[-0-9.e+]+]]
// CHECK-SECOND: reference semantics of @forward on 1 rank{{$}}
// CHECK-SECOND-NEXT: rank 0 result 0: tensor<4x3xf32> sum=[[SUM:[-0-9.e+]+]] min=[[MIN:[-0-9.e+]+]]
// CHECK-NPY: output (4, 3) float32
braid.table @t : tensor<50x3xf16> pooling_factor = 3.0

func.func @forward(%dense: tensor<4x5xf32> {braid.input = "dense"},
                   %idx: tensor<?xi64> {braid.input = "t.indices"},
                   %off: tensor<5xi64> {braid.input = "t.offsets"},
                   %w: tensor<3x5xf32> {braid.param = "layer.weight"},
                   %b: tensor<3xf32> {braid.param = "layer.bias"}) -> tensor<4x3xf32> {
  %e = braid.embedding_bag @t(%idx, %off) mean : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x3xf16>
  %ef = arith.extf %e : tensor<4x3xf16> to tensor<4x3xf32>
  %h = braid.linear %dense, %w, %b relu : tensor<4x5xf32>, tensor<3x5xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %y = arith.addf %h, %ef : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
