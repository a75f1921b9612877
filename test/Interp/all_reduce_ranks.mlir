// RUN: braid-run %s --reference --ranks 1 --print-values | FileCheck %s --check-prefix=R1
// RUN: braid-run %s --reference --ranks 2 --print-values | FileCheck %s --check-prefix=R2
// RUN: braid-run %s --reference --ranks 3 --print-values | FileCheck %s --check-prefix=R3
// RUN: braid-run %s --reference --ranks 4 --print-values | FileCheck %s --check-prefix=R4

// Rank r contributes [1 + r, 10 + r]; results are sum, max, min, avg.
// R1: rank 0 result 0: tensor<2xf32>
// R1-NEXT: [1, 10]
// R1: rank 0 result 3: tensor<2xf32>
// R1-NEXT: [1, 10]

// R2: rank 0 result 0: tensor<2xf32>
// R2-NEXT: [3, 21]
// R2-NEXT: rank 0 result 1: tensor<2xf32>
// R2-NEXT: [2, 11]
// R2-NEXT: rank 0 result 2: tensor<2xf32>
// R2-NEXT: [1, 10]
// R2-NEXT: rank 0 result 3: tensor<2xf32>
// R2-NEXT: [1.5, 10.5]
// R2: rank 1 result 0: tensor<2xf32>
// R2-NEXT: [3, 21]

// R3: rank 0 result 0: tensor<2xf32>
// R3-NEXT: [6, 33]
// R3-NEXT: rank 0 result 1: tensor<2xf32>
// R3-NEXT: [3, 12]
// R3-NEXT: rank 0 result 2: tensor<2xf32>
// R3-NEXT: [1, 10]
// R3-NEXT: rank 0 result 3: tensor<2xf32>
// R3-NEXT: [2, 11]
// R3: rank 2 result 0: tensor<2xf32>
// R3-NEXT: [6, 33]

// R4: rank 0 result 0: tensor<2xf32>
// R4-NEXT: [10, 46]
// R4-NEXT: rank 0 result 1: tensor<2xf32>
// R4-NEXT: [4, 13]
// R4-NEXT: rank 0 result 2: tensor<2xf32>
// R4-NEXT: [1, 10]
// R4-NEXT: rank 0 result 3: tensor<2xf32>
// R4-NEXT: [2.5, 11.5]
// R4: rank 3 result 3: tensor<2xf32>
// R4-NEXT: [2.5, 11.5]
func.func @forward() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %s = tensor.splat %rf : tensor<2xf32>
  %base = arith.constant dense<[1.0, 10.0]> : tensor<2xf32>
  %x = arith.addf %base, %s : tensor<2xf32>
  %sum = braid.all_reduce sum %x : tensor<2xf32>
  %max = braid.all_reduce max %x : tensor<2xf32>
  %min = braid.all_reduce min %x : tensor<2xf32>
  %avg = braid.all_reduce avg %x : tensor<2xf32>
  return %sum, %max, %min, %avg : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
