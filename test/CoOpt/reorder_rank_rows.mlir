// braid-reorder-collectives moves a slice of this rank's rows across the
// collective before it: the rows of a sum all_reduce are a reduce_scatter
// (@rows_of_all_reduce), the rows of an all_gather are its input
// (@rows_of_all_gather), and an all_reduce of a rank's rows inserted among
// zeros is an all_gather (@all_reduce_of_rows). Slices of other rows, of
// other groups and of max reductions stay (@kept).
// RUN: braid-opt %s --braid-reorder-collectives=force | FileCheck %s
// Without force, the simulator takes each one that is predicted faster on
// the DGX-A100 of the module: the reduce_scatter and the all_gather move
// half the bytes of a ring all_reduce; the gather's rows cost nothing.
// RUN: braid-opt %s --braid-reorder-collectives | FileCheck %s --check-prefix=SIMULATED

// CHECK-LABEL: func.func @rows_of_all_reduce
// CHECK: %[[RS:.*]] = braid.reduce_scatter sum %arg0 dim = 0 : tensor<64x16xf32> -> tensor<16x16xf32>
// CHECK-NOT: braid.all_reduce
// CHECK: return %[[RS]]
// SIMULATED-LABEL: func.func @rows_of_all_reduce
// SIMULATED: braid.reduce_scatter sum %arg0 dim = 0
// SIMULATED-NOT: braid.all_reduce

// CHECK-LABEL: func.func @rows_of_all_gather
// CHECK-NOT: braid.all_gather
// CHECK: return %arg0
// SIMULATED-LABEL: func.func @rows_of_all_gather
// SIMULATED-NOT: braid.all_gather

// CHECK-LABEL: func.func @all_reduce_of_rows
// CHECK: %[[AG:.*]] = braid.all_gather %arg0 dim = 0 groups {{\[\[}}0, 1], [2, 3]] : tensor<32x8xf32> -> tensor<64x8xf32>
// CHECK-NOT: braid.all_reduce
// CHECK: return %[[AG]]
// SIMULATED-LABEL: func.func @all_reduce_of_rows
// SIMULATED: braid.all_gather %arg0

// CHECK-LABEL: func.func @kept
// CHECK: braid.all_reduce max
// CHECK: tensor.extract_slice
// CHECK: braid.all_reduce sum %arg0 groups {{\[\[}}0, 2], [1, 3]]
// CHECK: tensor.extract_slice
// CHECK: braid.all_reduce sum %arg0 :
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [8, 16]
// CHECK: braid.all_reduce sum %arg0 : tensor<64x16xf32>
// CHECK: tensor.extract_slice
// CHECK: braid.all_reduce sum %{{.*}} : tensor<64x16xf32>
// CHECK-NOT: braid.reduce_scatter


module attributes {braid.cluster = #braid.cluster<hardware = "dgx-a100", nodes = 1, ranks_per_node = 4>} {
  func.func @rows_of_all_reduce(%p: tensor<64x16xf32>) -> tensor<16x16xf32> {
    %s = braid.all_reduce sum %p : tensor<64x16xf32>
    %r = braid.rank : index
    %c16 = arith.constant 16 : index
    %o = arith.muli %r, %c16 : index
    %mine = tensor.extract_slice %s[%o, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
    return %mine : tensor<16x16xf32>
  }

  func.func @rows_of_all_gather(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
    %all = braid.all_gather %x dim = 0 : tensor<16x16xf32> -> tensor<64x16xf32>
    %r = braid.rank : index
    %c16 = arith.constant 16 : index
    %o = arith.muli %c16, %r : index
    %mine = tensor.extract_slice %all[%o, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
    return %mine : tensor<16x16xf32>
  }

  // Blocks of two ranks: the position is rank mod 2.
  func.func @all_reduce_of_rows(%g: tensor<32x8xf32>) -> tensor<64x8xf32> {
    %zeros = arith.constant dense<0.0> : tensor<64x8xf32>
    %r = braid.rank : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %p = arith.remui %r, %c2 : index
    %o = arith.muli %p, %c32 : index
    %in = tensor.insert_slice %g into %zeros[%o, 0] [32, 8] [1, 1] : tensor<32x8xf32> into tensor<64x8xf32>
    %s = braid.all_reduce sum %in groups [[0, 1], [2, 3]] : tensor<64x8xf32>
    return %s : tensor<64x8xf32>
  }

  // A max, groups that are not blocks of consecutive ranks, rows that are
  // not a quarter of the source, and an insert among ones.
  func.func @kept(%p: tensor<64x16xf32>, %g: tensor<16x16xf32>)
      -> (tensor<16x16xf32>, tensor<32x16xf32>, tensor<8x16xf32>, tensor<64x16xf32>,
          tensor<16x16xf32>, tensor<64x16xf32>) {
    %r = braid.rank : index
    %c16 = arith.constant 16 : index
    %c8 = arith.constant 8 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %o = arith.muli %r, %c16 : index
    %m = braid.all_reduce max %p : tensor<64x16xf32>
    %a = tensor.extract_slice %m[%o, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
    %q = arith.remui %r, %c2 : index
    %o2 = arith.muli %q, %c32 : index
    %s = braid.all_reduce sum %p groups [[0, 2], [1, 3]] : tensor<64x16xf32>
    %b = tensor.extract_slice %s[%o2, 0] [32, 16] [1, 1] : tensor<64x16xf32> to tensor<32x16xf32>
    %o3 = arith.muli %r, %c8 : index
    %t = braid.all_reduce sum %p : tensor<64x16xf32>
    %c = tensor.extract_slice %t[%o3, 0] [8, 16] [1, 1] : tensor<64x16xf32> to tensor<8x16xf32>
    %u = braid.all_reduce sum %p : tensor<64x16xf32>
    %e = tensor.extract_slice %u[%o, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
    %ones = arith.constant dense<1.0> : tensor<64x16xf32>
    %in = tensor.insert_slice %g into %ones[%o, 0] [16, 16] [1, 1] : tensor<16x16xf32> into tensor<64x16xf32>
    %d = braid.all_reduce sum %in : tensor<64x16xf32>
    return %a, %b, %c, %d, %e, %u : tensor<16x16xf32>, tensor<32x16xf32>, tensor<8x16xf32>, tensor<64x16xf32>, tensor<16x16xf32>, tensor<64x16xf32>
  }
}
