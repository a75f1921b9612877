// reduce_scatter over blocks of consecutive ranks: a rank whose block is no
// group of the op passes member 0 to the runtime and keeps its input, so
// it reads the rank; groups that tile the cluster make membership a
// constant.
// RUN: not braid-opt %s --split-input-file --convert-braid-to-cpu 2>/dev/null | FileCheck %s
// RUN: not braid-opt %s --split-input-file --convert-braid-to-cpu 2>&1 >/dev/null | FileCheck %s --check-prefix=CHECK-ERR

// CHECK-LABEL: func.func @owner_node_only
// CHECK: %[[RANK:.*]] = call @braidrt_rank() : () -> i64
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]]
// CHECK: %[[B:.*]] = arith.divui %[[R]], %c2
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]], %c2
// CHECK: %[[IS:.*]] = arith.cmpi eq, %[[FIRST]], %c2
// CHECK: %[[MEMBER:.*]] = arith.ori %false, %[[IS]]
// CHECK: %[[ROWS:.*]] = tensor.dim
// CHECK: %[[SHARE:.*]] = arith.divui %[[ROWS]], %c2
// CHECK: arith.select %[[MEMBER]], %[[SHARE]], %[[ROWS]]
// CHECK: %[[FLAG:.*]] = arith.extui %[[MEMBER]] : i1 to i32
// CHECK: call @braidrt_reduce_scatter_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[FLAG]], %{{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i32, i32) -> ()
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  func.func @owner_node_only(%x: tensor<?x8xf32> {braid.input = "x"}) -> tensor<?x8xf32> {
    %s = braid.reduce_scatter sum %x dim = 0 groups [[2, 3]] : tensor<?x8xf32> -> tensor<?x8xf32>
    return %s : tensor<?x8xf32>
  }
}

// -----

// CHECK-LABEL: func.func @every_node
// CHECK-NOT: braidrt_rank
// CHECK: %[[ROWS:.*]] = tensor.dim
// CHECK: %[[SHARE:.*]] = arith.divui %[[ROWS]], %c2
// CHECK: arith.select %true, %[[SHARE]], %[[ROWS]]
// CHECK: call @braidrt_reduce_scatter_f32
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  func.func @every_node(%x: tensor<?x8xf32> {braid.input = "x"}) -> tensor<?x8xf32> {
    %s = braid.reduce_scatter sum %x dim = 0 groups [[0, 1], [2, 3]] : tensor<?x8xf32> -> tensor<?x8xf32>
    return %s : tensor<?x8xf32>
  }
}

// -----

// A group that is not an aligned block of consecutive ranks is an error.
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  func.func @unaligned(%x: tensor<?x8xf32> {braid.input = "x"}) -> tensor<?x8xf32> {
    // CHECK-ERR: lower_reduce_scatter_groups.mlir:[[@LINE+1]]:10: error: the CPU backend lowers reduce_scatter over blocks of consecutive ranks
    %s = braid.reduce_scatter sum %x dim = 0 groups [[1, 2]] : tensor<?x8xf32> -> tensor<?x8xf32>
    return %s : tensor<?x8xf32>
  }
}
