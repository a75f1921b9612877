// braid-decompose-collectives splits an all_reduce over every rank of 2
// nodes x 2 ranks hierarchically (reduce_scatter inside each node,
// all_reduce between the nodes, all_gather inside each node) and one over
// blocks of ranks flat (reduce_scatter, then all_gather, over the same
// groups). Shapes whose first dimension does not divide stay as they are.
// RUN: braid-opt %s --braid-decompose-collectives=force | FileCheck %s
// Without force the simulator decides; with no braid.cluster nothing
// changes.
// RUN: sed -e 's/attributes {braid.cluster = .*} {/{/' %s | braid-opt --braid-decompose-collectives | FileCheck %s --check-prefix=NOCLUSTER
// RUN: braid-opt %s --braid-decompose-collectives | FileCheck %s --check-prefix=SIMULATED
// The rewrite is exact on integer-valued random inputs (sums of small
// integers do not round, in any order), on the 4 simulated ranks.
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-decompose-collectives=force -o %t/decomposed.mlir
// RUN: braid-run %s --reference --ranks 4 --seed 11 --dump %t/before > /dev/null
// RUN: braid-run %t/decomposed.mlir --reference --ranks 4 --seed 11 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after

// CHECK-LABEL: func.func @forward
// CHECK: %[[X:.*]] = arith.sitofp %{{.*}} : tensor<8x4xi32> to tensor<8x4xf32>
// CHECK-NEXT: %[[S:.*]] = braid.reduce_scatter sum %[[X]] dim = 0 groups {{\[\[}}0, 1], [2, 3]] : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[A:.*]] = braid.all_reduce sum %[[S]] groups {{\[\[}}0, 2], [1, 3]] : tensor<4x4xf32>
// CHECK-NEXT: %[[H:.*]] = braid.all_gather %[[A]] dim = 0 groups {{\[\[}}0, 1], [2, 3]] : tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT: %[[PS:.*]] = braid.reduce_scatter max %[[X]] dim = 0 groups {{\[\[}}0, 1], [2, 3]] : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[P:.*]] = braid.all_gather %[[PS]] dim = 0 groups {{\[\[}}0, 1], [2, 3]] : tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT: %[[O:.*]] = braid.all_reduce sum %{{.*}} : tensor<3x4xf32>
// CHECK-NEXT: %[[Z:.*]] = braid.all_reduce sum %{{.*}} : tensor<f32>
// CHECK-NEXT: return %[[H]], %[[P]], %[[O]], %[[Z]]

// NOCLUSTER-NOT: braid.reduce_scatter
// With a few hundred bytes per all_reduce on a DGX-H100, latency decides
// and the single all_reduces stay.
// SIMULATED-NOT: braid.reduce_scatter

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  func.func @forward(%a: tensor<8x4xf32> {braid.input = "a"}, %b: tensor<3x4xf32> {braid.input = "b"},
                     %c: tensor<f32> {braid.input = "c"})
      -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<3x4xf32>, tensor<f32>) {
    %r = braid.rank : index
    %ri = arith.index_cast %r : index to i64
    %rf = arith.sitofp %ri : i64 to f32
    %hundred = arith.constant dense<100.0> : tensor<8x4xf32>
    %sr = tensor.splat %rf : tensor<8x4xf32>
    %scaled = arith.mulf %a, %hundred : tensor<8x4xf32>
    %shifted = arith.addf %scaled, %sr : tensor<8x4xf32>
    %int = arith.fptosi %shifted : tensor<8x4xf32> to tensor<8x4xi32>
    %x = arith.sitofp %int : tensor<8x4xi32> to tensor<8x4xf32>
    %h = braid.all_reduce sum %x groups [[0, 1, 2, 3]] : tensor<8x4xf32>
    %p = braid.all_reduce max %x groups [[0, 1], [2, 3]] : tensor<8x4xf32>
    %o = braid.all_reduce sum %b : tensor<3x4xf32>
    %z = braid.all_reduce sum %c : tensor<f32>
    return %h, %p, %o, %z : tensor<8x4xf32>, tensor<8x4xf32>, tensor<3x4xf32>, tensor<f32>
  }
}
