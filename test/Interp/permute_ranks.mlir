// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=CHECK-FOUR
// RUN: not braid-run %s --reference --ranks 3 2>&1 | FileCheck %s --check-prefix=CHECK-THREE

// A ring over 4 ranks: rank r receives rank r - 1's input [r].
// CHECK-FOUR: rank 0 result 0: tensor<1xf32>
// CHECK-FOUR-NEXT: [3]
// CHECK-FOUR-NEXT: rank 1 result 0: tensor<1xf32>
// CHECK-FOUR-NEXT: [0]
// CHECK-FOUR-NEXT: rank 2 result 0: tensor<1xf32>
// CHECK-FOUR-NEXT: [1]
// CHECK-FOUR-NEXT: rank 3 result 0: tensor<1xf32>
// CHECK-FOUR-NEXT: [2]
// On 3 ranks the pairs name a rank that does not run.
// CHECK-THREE: error: pair [2, 3] names a rank beyond the 3 ranks that run
func.func @forward() -> tensor<1xf32> {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %x = tensor.splat %rf : tensor<1xf32>
  %y = braid.permute %x pairs [[0, 1], [1, 2], [2, 3], [3, 0]] : tensor<1xf32>
  return %y : tensor<1xf32>
}
