// braid-fill-waits moves a lookup above a wait only when no op it passes
// writes its table's rows: @b's lookup moves, @a's stays below @a's update,
// and the update, which writes memory, stays too. A wait followed only by
// work the simulator prices at nothing (index arithmetic, a view) is left
// as it is, even forced. An op that may write a table without naming it (a
// call, a region holding an update) holds every lookup below it; a
// max-pooled bag's gradient reads the rows and stays below the table's
// update, where a sum-pooled one, which reads no rows, moves; and the scan
// stops at an op holding a collective.
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

// CHECK-LABEL: func.func @call
// CHECK: braid.wait
// CHECK-NEXT: call @update_a
// CHECK-NEXT: braid.embedding_bag @a

// CHECK-LABEL: func.func @nested_update
// CHECK: braid.wait
// CHECK-NEXT: scf.if
// CHECK-NEXT: braid.embedding_bag_update @a
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT: braid.embedding_bag @a

// CHECK-LABEL: func.func @max_grad
// CHECK: braid.all_reduce_start
// CHECK-NEXT: braid.embedding_bag_grad @a({{.*}}) sum
// CHECK-NEXT: braid.wait
// CHECK-NEXT: braid.table_update @a
// CHECK-NEXT: braid.embedding_bag_grad @a({{.*}}) max

// CHECK-LABEL: func.func @nested_collective
// CHECK: braid.wait
// CHECK-NEXT: scf.execute_region
// CHECK-NEXT: braid.all_reduce
// CHECK: braid.linear

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
  func.func private @update_a(%i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x4xf32>) {
    braid.embedding_bag_update @a(%i, %o, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>
    return
  }
  func.func @call(%x: tensor<8x4xf32>, %i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x4xf32>)
      -> (tensor<8x4xf32>, tensor<2x4xf32>) {
    %t = braid.all_to_all_start %x split_dim = 0 concat_dim = 0 split_sizes = [4, 4, 4, 4] groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
    %r = braid.wait %t : !braid.token<tensor<8x4xf32>>
    func.call @update_a(%i, %o, %g) : (tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>) -> ()
    %ea = braid.embedding_bag @a(%i, %o) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x4xf32>
    return %r, %ea : tensor<8x4xf32>, tensor<2x4xf32>
  }
  func.func @nested_update(%x: tensor<8x4xf32>, %i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x4xf32>, %p: i1)
      -> (tensor<8x4xf32>, tensor<2x4xf32>) {
    %t = braid.all_to_all_start %x split_dim = 0 concat_dim = 0 split_sizes = [4, 4, 4, 4] groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
    %r = braid.wait %t : !braid.token<tensor<8x4xf32>>
    scf.if %p {
      braid.embedding_bag_update @a(%i, %o, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>
    }
    %ea = braid.embedding_bag @a(%i, %o) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x4xf32>
    return %r, %ea : tensor<8x4xf32>, tensor<2x4xf32>
  }
  func.func @max_grad(%x: tensor<8x4xf32>, %i: tensor<?xi64>, %o: tensor<3xi64>, %dp: tensor<2x4xf32>, %tg: tensor<10x4xf32>)
      -> (tensor<8x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>) {
    %t = braid.all_reduce_start sum %x : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
    %r = braid.wait %t : !braid.token<tensor<8x4xf32>>
    braid.table_update @a(%tg) optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<10x4xf32>
    %gm = braid.embedding_bag_grad @a(%i, %o, %dp) max : (tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>) -> tensor<10x4xf32>
    %gs = braid.embedding_bag_grad @a(%i, %o, %dp) sum : (tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>) -> tensor<10x4xf32>
    return %r, %gm, %gs : tensor<8x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>
  }
  func.func @nested_collective(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>)
      -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %t = braid.all_reduce_start sum %x : tensor<8x4xf32> -> !braid.token<tensor<8x4xf32>>
    %r = braid.wait %t : !braid.token<tensor<8x4xf32>>
    %s = scf.execute_region -> tensor<8x4xf32> {
      %u = braid.all_reduce sum %y : tensor<8x4xf32>
      scf.yield %u : tensor<8x4xf32>
    }
    %h = braid.linear %y, %w, %b relu : tensor<8x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
    return %r, %s, %h : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
}
