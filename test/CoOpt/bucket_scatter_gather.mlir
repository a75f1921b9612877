// braid-bucket-collectives combines reduce_scatters (and all_gathers)
// along dimension 0 of one reduction, groups and element type: each
// member becomes a 4-row matrix whose row p is its chunk for rank p, the
// matrices are concatenated side by side, and one reduce_scatter of the
// rows gives each rank its chunk of every member (one all_gather of the
// ranks' chunks, every member's whole).
// RUN: braid-opt %s --braid-bucket-collectives=force | FileCheck %s
// The rewrite is exact on integer-valued random inputs (sums of small
// integers do not round, in any order; products of them neither), on the
// 4 simulated ranks.
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-bucket-collectives=force -o %t/bucketed.mlir
// RUN: braid-run %s --reference --ranks 4 --seed 7 --dump %t/before > /dev/null
// RUN: braid-run %t/bucketed.mlir --reference --ranks 4 --seed 7 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after

// CHECK-LABEL: func.func @forward
// CHECK: %[[FA:.*]] = tensor.collapse_shape %[[XA:.*]] {{\[\[}}0, 1]] : tensor<8x3xf32> into tensor<24xf32>
// CHECK-NEXT: %[[MA:.*]] = tensor.expand_shape %[[FA]] {{\[\[}}0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK-NEXT: %[[MB:.*]] = tensor.expand_shape %[[XB:.*]] {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK-NEXT: %[[CAT:.*]] = tensor.concat dim(1) %[[MA]], %[[MB]] : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x7xf32>
// CHECK-NEXT: %[[RS:.*]] = braid.reduce_scatter sum %[[CAT]] dim = 0 groups {{\[\[}}0, 1, 2, 3]] : tensor<4x7xf32> -> tensor<1x7xf32>
// CHECK-NEXT: %[[FLAT:.*]] = tensor.collapse_shape %[[RS]] {{\[\[}}0, 1]] : tensor<1x7xf32> into tensor<7xf32>
// CHECK-NEXT: %[[SA:.*]] = tensor.extract_slice %[[FLAT]][0] [6] [1] : tensor<7xf32> to tensor<6xf32>
// CHECK-NEXT: %[[A:.*]] = tensor.expand_shape %[[SA]] {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.extract_slice %[[FLAT]][6] [1] [1] : tensor<7xf32> to tensor<1xf32>
// The max keeps its own reduce_scatter.
// CHECK-NEXT: %[[MAX:.*]] = braid.reduce_scatter max
// The all_gathers of the scattered chunks (after %a's, the last input).
// CHECK: %[[GA:.*]] = tensor.collapse_shape %[[YA:.*]] {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK-NEXT: %[[CAT2:.*]] = tensor.concat dim(0) %{{.*}}, %[[GA]] : (tensor<1xf32>, tensor<6xf32>) -> tensor<7xf32>
// CHECK-NEXT: %[[ROW:.*]] = tensor.expand_shape %[[CAT2]] {{\[\[}}0, 1]] output_shape [1, 7] : tensor<7xf32> into tensor<1x7xf32>
// CHECK-NEXT: %[[AG:.*]] = braid.all_gather %[[ROW]] dim = 0 groups {{\[\[}}0, 1, 2, 3]] : tensor<1x7xf32> -> tensor<4x7xf32>
// CHECK-NEXT: %[[BANDB:.*]] = tensor.extract_slice %[[AG]][0, 0] [4, 1] [1, 1] : tensor<4x7xf32> to tensor<4x1xf32>
// CHECK-NEXT: %[[WB:.*]] = tensor.collapse_shape %[[BANDB]] {{\[\[}}0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK-NEXT: %[[BANDA:.*]] = tensor.extract_slice %[[AG]][0, 1] [4, 6] [1, 1] : tensor<4x7xf32> to tensor<4x6xf32>
// CHECK-NEXT: %[[FWA:.*]] = tensor.collapse_shape %[[BANDA]] {{\[\[}}0, 1]] : tensor<4x6xf32> into tensor<24xf32>
// CHECK-NEXT: %[[WA:.*]] = tensor.expand_shape %[[FWA]] {{\[\[}}0, 1]] output_shape [8, 3] : tensor<24xf32> into tensor<8x3xf32>
// CHECK-NEXT: return %[[WA]], %[[WB]], %[[MAX]]

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @forward(%fa: tensor<8x3xf32> {braid.input = "a"}, %fb: tensor<4xf32> {braid.input = "b"})
      -> (tensor<8x3xf32>, tensor<4xf32>, tensor<2x3xf32>) {
    %r = braid.rank : index
    %ri = arith.index_cast %r : index to i64
    %rf = arith.sitofp %ri : i64 to f32
    %ha = arith.constant dense<100.0> : tensor<8x3xf32>
    %hb = arith.constant dense<100.0> : tensor<4xf32>
    %fa100 = arith.mulf %fa, %ha : tensor<8x3xf32>
    %fb100 = arith.mulf %fb, %hb : tensor<4xf32>
    %a = arith.fptosi %fa100 : tensor<8x3xf32> to tensor<8x3xi32>
    %b = arith.fptosi %fb100 : tensor<4xf32> to tensor<4xi32>
    %xa0 = arith.sitofp %a : tensor<8x3xi32> to tensor<8x3xf32>
    %sa = tensor.splat %rf : tensor<8x3xf32>
    %xa = arith.addf %xa0, %sa : tensor<8x3xf32>
    %xb0 = arith.sitofp %b : tensor<4xi32> to tensor<4xf32>
    %sb = tensor.splat %rf : tensor<4xf32>
    %xb = arith.addf %xb0, %sb : tensor<4xf32>
    %ra = braid.reduce_scatter sum %xa dim = 0 groups [[0, 1, 2, 3]] : tensor<8x3xf32> -> tensor<2x3xf32>
    %rb = braid.reduce_scatter sum %xb dim = 0 groups [[0, 1, 2, 3]] : tensor<4xf32> -> tensor<1xf32>
    %ma = braid.reduce_scatter max %xa dim = 0 groups [[0, 1, 2, 3]] : tensor<8x3xf32> -> tensor<2x3xf32>
    %yb = arith.addf %rb, %rb : tensor<1xf32>
    %ya = arith.mulf %ra, %ra : tensor<2x3xf32>
    %wa = braid.all_gather %ya dim = 0 groups [[0, 1, 2, 3]] : tensor<2x3xf32> -> tensor<8x3xf32>
    %wb = braid.all_gather %yb dim = 0 groups [[0, 1, 2, 3]] : tensor<1xf32> -> tensor<4xf32>
    return %wa, %wb, %ma : tensor<8x3xf32>, tensor<4xf32>, tensor<2x3xf32>
  }
}
