// braid-chunk-pipeline keeps the rows of its all_reduce with an offset
// whose arithmetic reads one constant twice (rank mod 4, times 4): the
// offset's ops left dead by the rewrite are erased once each, and the
// chunked program gives the same values (under the sanitizers, the lit
// suite also shows no op is touched after it is erased).
// RUN: braid-opt %s --braid-chunk-pipeline=force | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-chunk-pipeline=force -o %t/chunked.mlir
// RUN: braid-run %s --reference --ranks 4 --seed 7 --dump %t/before > /dev/null
// RUN: braid-run %t/chunked.mlir --reference --ranks 4 --seed 7 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after

// CHECK-LABEL: func.func @forward
// CHECK-COUNT-2: braid.all_reduce_start
// CHECK-NOT: arith.remui
// CHECK: tensor.concat
// CHECK-NOT: arith.remui
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
    %pos = arith.remui %r, %c4 : index
    %ro = arith.muli %c4, %pos : index
    %s = tensor.extract_slice %sum[%ro, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
    %res = arith.addf %s, %x : tensor<4x8xf32>
    return %res : tensor<4x8xf32>
  }
}
