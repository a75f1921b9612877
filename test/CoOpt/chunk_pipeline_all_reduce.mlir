// braid-chunk-pipeline splits a tensor-parallel block whose partial sums
// are all-reduced and of which each rank keeps its own rows (the form
// braid-reorder-collectives leaves where an NVLS all_reduce beats a
// reduce_scatter): chunk j gathers rows [2 j, +2) of each rank, runs both
// layers on them, starts an all_reduce of its partial sums and keeps rows
// [rank * 2, +2) of it; a concat at the first use puts the rows back
// together.
// RUN: braid-opt %s --braid-chunk-pipeline=force | FileCheck %s
// The same values on every rank, bit for bit.
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-chunk-pipeline=force -o %t/chunked.mlir
// RUN: braid-run %s --reference --ranks 4 --seed 7 --dump %t/before > /dev/null
// RUN: braid-run %t/chunked.mlir --reference --ranks 4 --seed 7 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after
// Chunked once, the chunks are not chunked again.
// RUN: braid-opt %t/chunked.mlir --braid-chunk-pipeline=force | FileCheck %s --check-prefix=AGAIN

// CHECK-LABEL: func.func @forward
// CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
// CHECK-NEXT: %[[G0:.*]] = braid.all_gather_start %[[X0]] dim = 0 groups {{\[\[}}0, 1, 2, 3]] : tensor<2x8xf32> -> !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[X1:.*]] = tensor.extract_slice %arg0[2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
// CHECK-NEXT: %[[G1:.*]] = braid.all_gather_start %[[X1]] dim = 0 groups {{\[\[}}0, 1, 2, 3]] : tensor<2x8xf32> -> !braid.token<tensor<8x8xf32>>
// CHECK: %[[A0:.*]] = braid.wait %[[G0]] : !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[H0:.*]] = braid.linear %[[A0]], {{.*}} relu {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: %[[P0:.*]] = braid.linear %[[H0]], {{.*}} none {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: %[[S0:.*]] = braid.all_reduce_start sum %[[P0]] groups {{\[\[}}0, 1, 2, 3]] : tensor<8x8xf32> -> !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[A1:.*]] = braid.wait %[[G1]] : !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[H1:.*]] = braid.linear %[[A1]], {{.*}} relu
// CHECK-NEXT: %[[P1:.*]] = braid.linear %[[H1]], {{.*}} none
// CHECK-NEXT: %[[S1:.*]] = braid.all_reduce_start sum %[[P1]]
// CHECK-DAG: %[[RANK:.*]] = braid.rank : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[RANK]], %[[C2]] : index
// CHECK-NEXT: %[[R0:.*]] = braid.wait %[[S0]] : !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[K0:.*]] = tensor.extract_slice %[[R0]][%[[OFF]], 0] [2, 8] [1, 1] : tensor<8x8xf32> to tensor<2x8xf32>
// CHECK-NEXT: %[[R1:.*]] = braid.wait %[[S1]] : !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[K1:.*]] = tensor.extract_slice %[[R1]][%[[OFF]], 0] [2, 8] [1, 1] : tensor<8x8xf32> to tensor<2x8xf32>
// CHECK-NEXT: %[[Y:.*]] = tensor.concat dim(0) %[[K0]], %[[K1]] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: arith.addf %[[Y]], %arg0 : tensor<4x8xf32>
// CHECK-NOT: braid.all_gather %
// CHECK-NOT: braid.all_reduce sum

// AGAIN-COUNT-2: braid.all_reduce_start
// AGAIN-NOT: braid.all_reduce_start

module attributes {braid.batch_split = array<i64: 4, 4, 4, 4>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @forward(%x: tensor<4x8xf32> {braid.input = "dense"}, %w1: tensor<32x8xf32> {braid.param = "up.weight"}, %b1: tensor<32xf32> {braid.param = "up.bias"}, %w2: tensor<8x32xf32> {braid.param = "down.weight"}, %b2: tensor<8xf32> {braid.param = "down.bias"}) -> tensor<4x8xf32> {
    %zeros = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %all = braid.all_gather %x dim = 0 groups [[0, 1, 2, 3]] : tensor<4x8xf32> -> tensor<16x8xf32>
    %r = braid.rank : index
    %o = arith.muli %r, %c8 : index
    %w1r = tensor.extract_slice %w1[%o, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
    %b1r = tensor.extract_slice %b1[%o] [8] [1] : tensor<32xf32> to tensor<8xf32>
    %h = braid.linear %all, %w1r, %b1r relu {placement = #braid.dense_placement<column, ranks = [0, 1, 2, 3]>} : tensor<16x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<16x8xf32>
    %w2c = tensor.extract_slice %w2[0, %o] [8, 8] [1, 1] : tensor<8x32xf32> to tensor<8x8xf32>
    %first = arith.cmpi eq, %r, %c0 : index
    %b2r = arith.select %first, %b2, %zeros : tensor<8xf32>
    %p = braid.linear %h, %w2c, %b2r none {placement = #braid.dense_placement<row, ranks = [0, 1, 2, 3]>} : tensor<16x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<16x8xf32>
    %sum = braid.all_reduce sum %p groups [[0, 1, 2, 3]] : tensor<16x8xf32>
    %ro = arith.muli %r, %c4 : index
    %s = tensor.extract_slice %sum[%ro, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
    %res = arith.addf %s, %x : tensor<4x8xf32>
    return %res : tensor<4x8xf32>
  }
}
