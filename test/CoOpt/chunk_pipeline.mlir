// braid-chunk-pipeline splits a tensor-parallel block's forward pass (an
// all_gather of the batch, a column-parallel and a row-parallel layer, a
// reduce_scatter back to the ranks' rows) into chunks of every rank's rows:
// chunk j gathers rows [2 j, +2) of each rank, runs both layers on them
// and reduce-scatters its partial sums; its gathers start where the whole
// one stood, its reduce_scatter right after it, and a concat at the first
// use puts the rows back together.
// RUN: braid-opt %s --braid-chunk-pipeline=force | FileCheck %s
// The same values on every rank, bit for bit.
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-chunk-pipeline=force -o %t/chunked.mlir
// RUN: braid-run %s --reference --ranks 4 --seed 7 --dump %t/before > /dev/null
// RUN: braid-run %t/chunked.mlir --reference --ranks 4 --seed 7 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after
// Without force the simulator decides: on 16 rows each chunk's collective
// latency costs more than the overlap hides, so the block stays whole.
// RUN: braid-opt %s --braid-chunk-pipeline | FileCheck %s --check-prefix=SIMULATED
// The pipeline runs it last at level 2.
// RUN: braid-opt %s --braid-co-optimize="opt-level=2 force-co-optimization=true" | FileCheck %s --check-prefix=PIPELINE

// CHECK-LABEL: func.func @forward
// CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
// CHECK-NEXT: %[[G0:.*]] = braid.all_gather_start %[[X0]] dim = 0 groups {{\[\[}}0, 1, 2, 3]] : tensor<2x8xf32> -> !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[X1:.*]] = tensor.extract_slice %arg0[2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
// CHECK-NEXT: %[[G1:.*]] = braid.all_gather_start %[[X1]] dim = 0 groups {{\[\[}}0, 1, 2, 3]] : tensor<2x8xf32> -> !braid.token<tensor<8x8xf32>>
// CHECK: %[[A0:.*]] = braid.wait %[[G0]] : !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[H0:.*]] = braid.linear %[[A0]], {{.*}} relu {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: %[[P0:.*]] = braid.linear %[[H0]], {{.*}} none {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: %[[S0:.*]] = braid.reduce_scatter_start sum %[[P0]] dim = 0 groups {{\[\[}}0, 1, 2, 3]] : tensor<8x8xf32> -> !braid.token<tensor<2x8xf32>>
// CHECK-NEXT: %[[A1:.*]] = braid.wait %[[G1]] : !braid.token<tensor<8x8xf32>>
// CHECK-NEXT: %[[H1:.*]] = braid.linear %[[A1]], {{.*}} relu
// CHECK-NEXT: %[[P1:.*]] = braid.linear %[[H1]], {{.*}} none
// CHECK-NEXT: %[[S1:.*]] = braid.reduce_scatter_start sum %[[P1]] dim = 0
// CHECK-NEXT: %[[R0:.*]] = braid.wait %[[S0]] : !braid.token<tensor<2x8xf32>>
// CHECK-NEXT: %[[R1:.*]] = braid.wait %[[S1]] : !braid.token<tensor<2x8xf32>>
// CHECK-NEXT: %[[Y:.*]] = tensor.concat dim(0) %[[R0]], %[[R1]] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: arith.addf %[[Y]], %arg0 : tensor<4x8xf32>
// CHECK-NOT: braid.all_gather %
// CHECK-NOT: braid.reduce_scatter sum

// SIMULATED-LABEL: func.func @forward
// SIMULATED: braid.all_gather %{{.*}} : tensor<4x8xf32> -> tensor<16x8xf32>
// SIMULATED-NOT: tensor.concat

// PIPELINE: braid.all_gather_start %{{.*}} : tensor<2x8xf32>
// PIPELINE: braid.reduce_scatter_start sum %{{.*}} : tensor<8x8xf32> -> !braid.token<tensor<2x8xf32>>
// PIPELINE: tensor.concat

module attributes {braid.batch_split = array<i64: 4, 4, 4, 4>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @forward(%x: tensor<4x8xf32> {braid.input = "dense"}, %w1: tensor<32x8xf32> {braid.param = "up.weight"}, %b1: tensor<32xf32> {braid.param = "up.bias"}, %w2: tensor<8x32xf32> {braid.param = "down.weight"}, %b2: tensor<8xf32> {braid.param = "down.bias"}) -> tensor<4x8xf32> {
    %zeros = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %c0 = arith.constant 0 : index
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
    %s = braid.reduce_scatter sum %p dim = 0 groups [[0, 1, 2, 3]] : tensor<16x8xf32> -> tensor<4x8xf32>
    %res = arith.addf %s, %x : tensor<4x8xf32>
    return %res : tensor<4x8xf32>
  }
}
