// braid-overlap does not sink an op whose regions read a table's rows (an
// scf.for holding a lookup of @a) past a later update of @a: the collective
// it reads is started, and the loop stays above the update.
// RUN: braid-opt %s --braid-overlap=force | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK: braid.wait
// CHECK-NEXT: scf.for
// CHECK: braid.embedding_bag @a
// CHECK: braid.embedding_bag_update @a
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1]>
  func.func @step(%x: tensor<2x4xf32> {braid.input = "dense"}, %g: tensor<2x4xf32> {braid.input = "grad"})
      -> tensor<2x4xf32> {
    %i = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
    %o = arith.constant dense<[0, 2, 4]> : tensor<3xi64>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = braid.all_reduce sum %x : tensor<2x4xf32>
    %s = scf.for %k = %c0 to %c1 step %c1 iter_args(%acc = %r) -> (tensor<2x4xf32>) {
      %e = braid.embedding_bag @a(%i, %o) sum : (tensor<4xi64>, tensor<3xi64>) -> tensor<2x4xf32>
      %n = arith.addf %acc, %e : tensor<2x4xf32>
      scf.yield %n : tensor<2x4xf32>
    }
    braid.embedding_bag_update @a(%i, %o, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<4xi64>, tensor<3xi64>, tensor<2x4xf32>
    return %s : tensor<2x4xf32>
  }
}
