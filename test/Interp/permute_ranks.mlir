// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=R4
// RUN: not braid-run %s --reference --ranks 3 2>&1 | FileCheck %s --check-prefix=R3

// A ring over 4 ranks: rank r receives rank r - 1's input [r].
// R4: rank 0 result 0: tensor<1xf32>
// R4-NEXT: [3]
// R4-NEXT: rank 1 result 0: tensor<1xf32>
// R4-NEXT: [0]
// R4-NEXT: rank 2 result 0: tensor<1xf32>
// R4-NEXT: [1]
// R4-NEXT: rank 3 result 0: tensor<1xf32>
// R4-NEXT: [2]
// On 3 ranks the pairs name a rank that does not run.
// R3: error: pair [2, 3] names a rank beyond the 3 ranks that run
func.func @forward() -> tensor<1xf32> {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %x = tensor.splat %rf : tensor<1xf32>
  %y = braid.permute %x pairs [[0, 1], [1, 2], [2, 3], [3, 0]] : tensor<1xf32>
  return %y : tensor<1xf32>
}
