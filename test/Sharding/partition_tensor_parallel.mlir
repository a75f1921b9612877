// RUN: braid-opt %s --braid-partition | FileCheck %s
// RUN: braid-opt %s --braid-partition | braid-opt | FileCheck %s

// A column-parallel layer, a row-parallel layer, a residual and a
// data-parallel head on 2 ranks, batch 16: the column layer reads the
// whole batch (an all_gather of the 8 local rows) and rank r's 16 output
// features (weight rows [16 r, +16)); the row layer reads that block as it
// is, multiplies it by columns [16 r, +16) of its weight and adds the bias
// on rank 0 only; the residual reads this rank's rows of the all_reduced
// partial sums.
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  // CHECK-LABEL: func.func @forward
  // CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32> {braid.input = "dense"}, %[[W1:[^:]*]]: tensor<32x8xf32> {braid.param = "up.weight"}, %[[B1:[^:]*]]: tensor<32xf32> {braid.param = "up.bias"}, %[[W2:[^:]*]]: tensor<8x32xf32> {braid.param = "down.weight"}, %[[B2:[^:]*]]: tensor<8xf32> {braid.param = "down.bias"}
  // CHECK-SAME: -> tensor<?x1xf32>
  // CHECK: %[[XS:.*]] = tensor.cast %[[X]] : tensor<?x8xf32> to tensor<8x8xf32>
  // CHECK-NEXT: %[[XA:.*]] = braid.all_gather %[[XS]] dim = 0 groups {{\[\[}}0, 1]] : tensor<8x8xf32> -> tensor<16x8xf32>
  // CHECK-NEXT: %[[R:.*]] = braid.rank : index
  // CHECK-NEXT: %[[C16:.*]] = arith.constant 16 : index
  // CHECK-NEXT: %[[O:.*]] = arith.muli %[[R]], %[[C16]] : index
  // CHECK-NEXT: %[[W1R:.*]] = tensor.extract_slice %[[W1]][%[[O]], 0] [16, 8] [1, 1] : tensor<32x8xf32> to tensor<16x8xf32>
  // CHECK-NEXT: %[[B1R:.*]] = tensor.extract_slice %[[B1]][%[[O]]] [16] [1] : tensor<32xf32> to tensor<16xf32>
  // CHECK-NEXT: %[[H:.*]] = braid.linear %[[XA]], %[[W1R]], %[[B1R]] relu {placement = #braid.dense_placement<column, ranks = [0, 1]>} : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<16x16xf32>
  // CHECK: %[[W2C:.*]] = tensor.extract_slice %[[W2]][0, %{{.*}}] [8, 16] [1, 1] : tensor<8x32xf32> to tensor<8x16xf32>
  // CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
  // CHECK-NEXT: %[[B2R:.*]] = arith.select %[[FIRST]], %[[B2]], %[[ZERO]] : tensor<8xf32>
  // CHECK-NEXT: %[[P:.*]] = braid.linear %[[H]], %[[W2C]], %[[B2R]] none {placement = #braid.dense_placement<row, ranks = [0, 1]>} : tensor<16x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<16x8xf32>
  // CHECK-NEXT: %[[S:.*]] = braid.all_reduce sum %[[P]] groups {{\[\[}}0, 1]] : tensor<16x8xf32>
  // CHECK-NEXT: %[[R2:.*]] = braid.rank : index
  // CHECK-NEXT: %[[C8:.*]] = arith.constant 8 : index
  // CHECK-NEXT: %[[O2:.*]] = arith.muli %[[R2]], %[[C8]] : index
  // CHECK-NEXT: %[[MINE:.*]] = tensor.extract_slice %[[S]][%[[O2]], 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  // CHECK-NEXT: %[[LOCAL:.*]] = tensor.cast %[[MINE]] : tensor<8x8xf32> to tensor<?x8xf32>
  // CHECK-NEXT: %[[RES:.*]] = arith.addf %[[LOCAL]], %[[X]] : tensor<?x8xf32>
  // CHECK-NEXT: braid.linear %[[RES]], %{{.*}}, %{{.*}} sigmoid : tensor<?x8xf32>, tensor<1x8xf32>, tensor<1xf32> -> tensor<?x1xf32>
  func.func @forward(%x: tensor<16x8xf32> {braid.input = "dense"},
                     %w1: tensor<32x8xf32> {braid.param = "up.weight"},
                     %b1: tensor<32xf32> {braid.param = "up.bias"},
                     %w2: tensor<8x32xf32> {braid.param = "down.weight"},
                     %b2: tensor<8xf32> {braid.param = "down.bias"},
                     %wh: tensor<1x8xf32> {braid.param = "head.weight"},
                     %bh: tensor<1xf32> {braid.param = "head.bias"}) -> tensor<16x1xf32> {
    %h = braid.linear %x, %w1, %b1 relu {placement = #braid.dense_placement<column, ranks = [0, 1]>}
        : tensor<16x8xf32>, tensor<32x8xf32>, tensor<32xf32> -> tensor<16x32xf32>
    %y = braid.linear %h, %w2, %b2 none {placement = #braid.dense_placement<row, ranks = [0, 1]>}
        : tensor<16x32xf32>, tensor<8x32xf32>, tensor<8xf32> -> tensor<16x8xf32>
    %r = arith.addf %y, %x : tensor<16x8xf32>
    %p = braid.linear %r, %wh, %bh sigmoid
        : tensor<16x8xf32>, tensor<1x8xf32>, tensor<1xf32> -> tensor<16x1xf32>
    return %p : tensor<16x1xf32>
  }

  // A column layer read by an op other than a row layer: its block takes its
  // place among zeros, and the all_reduce of those makes it whole. A row
  // layer on a local input slices its columns of the gathered batch.
  // CHECK-LABEL: func.func @alone
  // CHECK: %[[XA:.*]] = braid.all_gather %{{.*}} dim = 0 groups {{\[\[}}0, 1]] : tensor<8x8xf32> -> tensor<16x8xf32>
  // CHECK: %[[H:.*]] = braid.linear %[[XA]], {{.*}} {placement = #braid.dense_placement<column, ranks = [0, 1]>} : tensor<16x8xf32>, tensor<2x8xf32>, tensor<2xf32> -> tensor<16x2xf32>
  // CHECK: %[[XC:.*]] = tensor.extract_slice %[[XA]][0, %{{.*}}] [16, 4] [1, 1] : tensor<16x8xf32> to tensor<16x4xf32>
  // CHECK: braid.linear %[[XC]], %{{.*}} none {placement = #braid.dense_placement<row, ranks = [0, 1]>} : tensor<16x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<16x4xf32>
  // CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<16x4xf32>
  // CHECK: %[[O:.*]] = arith.muli %{{.*}}, %{{.*}} : index
  // CHECK-NEXT: %[[PAD:.*]] = tensor.insert_slice %[[H]] into %[[Z]][0, %[[O]]] [16, 2] [1, 1] : tensor<16x2xf32> into tensor<16x4xf32>
  // CHECK-NEXT: %[[WHOLE:.*]] = braid.all_reduce sum %[[PAD]] groups {{\[\[}}0, 1]] : tensor<16x4xf32>
  // CHECK: tensor.extract_slice %[[WHOLE]][%{{.*}}, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  func.func @alone(%x: tensor<16x8xf32> {braid.input = "dense"},
                   %w1: tensor<4x8xf32> {braid.param = "w1"}, %b1: tensor<4xf32> {braid.param = "b1"},
                   %w2: tensor<4x8xf32> {braid.param = "w2"}, %b2: tensor<4xf32> {braid.param = "b2"})
      -> (tensor<16x4xf32>, tensor<16x4xf32>) {
    %h = braid.linear %x, %w1, %b1 relu {placement = #braid.dense_placement<column, ranks = [0, 1]>}
        : tensor<16x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<16x4xf32>
    %y = braid.linear %x, %w2, %b2 none {placement = #braid.dense_placement<row, ranks = [0, 1]>}
        : tensor<16x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<16x4xf32>
    return %h, %y : tensor<16x4xf32>, tensor<16x4xf32>
  }
}
