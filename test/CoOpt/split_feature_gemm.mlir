// braid-split-feature-gemm splits a dense layer over a `cat` interaction
// by its features' arrival: the GEMM over the features computed on the
// rank (the dense input, a data-parallel table's lookup) goes before the
// wait of an exchange the others arrive in, the GEMM over those (with the
// bias) and the sum where the layer was.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-async-exchanges -o %t.part.mlir
// RUN: braid-opt %t.part.mlir --braid-split-feature-gemm=force | FileCheck %s
// On this toy the copies and the second launch cost more than the early
// GEMM hides: the simulator keeps the layer whole.
// RUN: braid-opt %t.part.mlir --braid-split-feature-gemm | FileCheck %s --check-prefix=WHOLE
//
// Exact up to the order of the additions: every rank's result under the
// reference semantics, split, matches the global program's.
// RUN: rm -rf %t && mkdir -p %t/whole %t/split
// RUN: cp %s %t/whole/model.mlir && cp %s %t/split/model.mlir
// RUN: cp %t.part.mlir %t/whole/program.mlir
// RUN: braid-opt %t.part.mlir --braid-split-feature-gemm=force -o %t/split/program.mlir
// RUN: braid-run %t/whole --reference --check --seed 6 | FileCheck %s --check-prefix=EXACT
// RUN: braid-run %t/split --reference --check --seed 6 | FileCheck %s --check-prefix=EXACT
//
// A layer with an activation (it applies to the sum) stays whole.
// RUN: sed 's/%b none :/%b relu :/' %s | braid-opt --braid-partition | braid-opt --braid-async-exchanges | braid-opt --braid-split-feature-gemm=force | FileCheck %s --check-prefix=WHOLE

// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>
// CHECK: %[[TA:.*]] = braid.reduce_scatter_start
// CHECK: %[[D:.*]] = braid.embedding_bag @d(
// CHECK: braid.all_to_all_start
// CHECK: %[[W0:.*]] = tensor.extract_slice %[[W:arg7]][0, 0] [6, 4] [1, 1] : tensor<6x28xf32> to tensor<6x4xf32>
// CHECK: %[[W1:.*]] = tensor.extract_slice %[[W]][0, 12] [6, 8] [1, 1] : tensor<6x28xf32> to tensor<6x8xf32>
// CHECK: %[[XE:.*]] = tensor.concat dim(1) %[[X]], %[[D]] : (tensor<?x4xf32>, tensor<?x8xf32>) -> tensor<?x12xf32>
// CHECK: %[[WE:.*]] = tensor.concat dim(1) %[[W0]], %[[W1]] : (tensor<6x4xf32>, tensor<6x8xf32>) -> tensor<6x12xf32>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<6xf32>
// CHECK: %[[YE:.*]] = braid.linear %[[XE]], %[[WE]], %[[ZERO]] none {braid.feature_part = "early"}
// CHECK-NEXT: braid.wait %[[TA]]
// CHECK: %[[W2:.*]] = tensor.extract_slice %[[W]][0, 4] [6, 8] [1, 1]
// CHECK: %[[W3:.*]] = tensor.extract_slice %[[W]][0, 20] [6, 8] [1, 1]
// CHECK: %[[XL:.*]] = tensor.concat dim(1)
// CHECK: %[[WL:.*]] = tensor.concat dim(1) %[[W2]], %[[W3]]
// CHECK: %[[YL:.*]] = braid.linear %[[XL]], %[[WL]], %arg8 none {braid.feature_part = "late"}
// CHECK: %[[Y:.*]] = arith.addf %[[YE]], %[[YL]] : tensor<?x6xf32>
// CHECK-NOT: braid.interaction
// CHECK: return %[[Y]]

// WHOLE-LABEL: func.func @forward
// WHOLE-NOT: feature_part
// WHOLE: braid.interaction cat
// WHOLE-NEXT: braid.linear
// WHOLE-NOT: feature_part

// EXACT: check against the global program: max relative error {{.*}}: ok

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 4.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 25, 50]>
  braid.table @d : tensor<30x8xf32> pooling_factor = 2.0 placement = #braid.data_parallel<ranks = [0, 1]>
  braid.table @c : tensor<40x8xf32> pooling_factor = 3.0 placement = #braid.table_wise<rank = 1>
  func.func @forward(%x: tensor<8x4xf32> {braid.input = "dense"},
                     %ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<9xi64> {braid.input = "a.offsets"},
                     %di: tensor<?xi64> {braid.input = "d.indices"}, %do: tensor<9xi64> {braid.input = "d.offsets"},
                     %ci: tensor<?xi64> {braid.input = "c.indices"}, %co: tensor<9xi64> {braid.input = "c.offsets"},
                     %w: tensor<6x28xf32> {braid.param = "proj.weight"}, %b: tensor<6xf32> {braid.param = "proj.bias"}) -> tensor<8x6xf32> {
    %ea = braid.embedding_bag @a(%ai, %ao) sum : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x8xf32>
    %ed = braid.embedding_bag @d(%di, %do) sum : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x8xf32>
    %ec = braid.embedding_bag @c(%ci, %co) sum : (tensor<?xi64>, tensor<9xi64>) -> tensor<8x8xf32>
    %z = braid.interaction cat %x, %ea, %ed, %ec : (tensor<8x4xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x28xf32>
    %y = braid.linear %z, %w, %b none : tensor<8x28xf32>, tensor<6x28xf32>, tensor<6xf32> -> tensor<8x6xf32>
    return %y : tensor<8x6xf32>
  }
}
