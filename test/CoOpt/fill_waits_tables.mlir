// braid-fill-waits moves a lookup above a wait only when no op it passes
// writes its table's rows: @b's lookup moves, @a's stays below @a's update,
// and the update, which writes memory, stays too. A wait followed only by
// work the simulator prices at nothing (index arithmetic, a view) is left
// as it is, even forced.
// RUN: braid-opt %s --braid-fill-waits=force | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start
// CHECK-NEXT: %[[EB:.*]] = braid.embedding_bag @b
// CHECK-NEXT: %[[R:.*]] = braid.wait %[[T]]
// CHECK-NEXT: braid.embedding_bag_update @a
// CHECK-NEXT: %[[EA:.*]] = braid.embedding_bag @a
// CHECK-NEXT: return %[[R]], %[[EA]], %[[EB]]

// CHECK-LABEL: func.func @free
// CHECK: braid.all_to_all_start
// CHECK-NEXT: braid.wait
// CHECK-NEXT: braid.rank
// CHECK-NEXT: arith.muli
// CHECK-NEXT: tensor.extract_slice

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1]>
  braid.table @b : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1]>
  func.func @step(%x: tensor<8x4xf32>, %i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x4xf32>)
      -> (tensor<8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
    %t = braid.all_to_all_start %x split_dim = 0 concat_dim = 0 split_sizes = [4, 4, 4, 4] groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
    %r = braid.wait %t : !braid.token<tensor<8x4xf32>>
    braid.embedding_bag_update @a(%i, %o, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>
    %ea = braid.embedding_bag @a(%i, %o) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x4xf32>
    %eb = braid.embedding_bag @b(%i, %o) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x4xf32>
    return %r, %ea, %eb : tensor<8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
  func.func @free(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<4x4xf32>) {
    %c4 = arith.constant 4 : index
    %t = braid.all_to_all_start %x split_dim = 0 concat_dim = 0 split_sizes = [4, 4, 4, 4] groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
    %r = braid.wait %t : !braid.token<tensor<8x4xf32>>
    %k = braid.rank : index
    %o = arith.muli %k, %c4 : index
    %s = tensor.extract_slice %y[%o, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
    return %r, %s : tensor<8x4xf32>, tensor<4x4xf32>
  }
}
