// braid-reorder-collectives runs a dense optimizer step on this rank's rows:
// the all_reduce of its gradient becomes a reduce_scatter, the step updates
// the rows of the parameter at (rank mod 4) * rows with the state's rows
// (the state argument and result shrink to them and carry
// braid.state_shard), and an all_gather rebuilds the parameter. A step
// whose rows do not divide by the group (%b), whose new state has another
// use (%v) or whose gradient is a max (%m) stays as it is.
// RUN: braid-opt %s --braid-reorder-collectives=force | FileCheck %s
// Without force the simulator decides: the 64 MiB parameter's Adagrad step
// is worth sharding on a DGX-H100 (a quarter of the optimizer's memory
// traffic, the same bytes on the wire), the 96-byte one is not.
// RUN: braid-opt %s --braid-reorder-collectives | FileCheck %s --check-prefix=SIMULATED
// With no braid.cluster nothing changes.
// RUN: sed -e 's/attributes {braid.cluster = .*} {/{/' %s | braid-opt --braid-reorder-collectives | FileCheck %s --check-prefix=NOCLUSTER
// The pass is part of braid-co-optimize at level 2 only.
// RUN: braid-opt %s --braid-co-optimize="opt-level=2 force-co-optimization=true" | FileCheck %s --check-prefix=PIPELINE
// RUN: braid-opt %s --braid-co-optimize="opt-level=1" | FileCheck %s --check-prefix=NOCLUSTER

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[SW:[^:]*]]: tensor<2x3xf32> {braid.state = "w.sum", braid.state_shard = #braid.replica_groups<{{\[\[}}0, 1, 2, 3]]>}
// CHECK-SAME: tensor<6xf32> {braid.state = "b.sum"}
// CHECK-SAME: -> (tensor<8x3xf32> {braid.param = "w"}, tensor<2x3xf32> {braid.state = "w.sum", braid.state_shard = #braid.replica_groups<{{\[\[}}0, 1, 2, 3]]>}
// CHECK: %[[G:.*]] = braid.reduce_scatter sum %arg1 dim = 0 : tensor<8x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[R:.*]] = braid.rank : index
// CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[P:.*]] = arith.remui %[[R]], %[[C4]] : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[O:.*]] = arith.muli %[[P]], %[[C2]] : index
// CHECK-NEXT: %[[WS:.*]] = tensor.extract_slice %arg0[%[[O]], 0] [2, 3] [1, 1] : tensor<8x3xf32> to tensor<2x3xf32>
// CHECK-NEXT: %[[NW:.*]], %[[NS:.*]] = braid.dense_update %[[WS]], %[[G]] step %arg{{[0-9]+}} state(%[[SW]]) {{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT: %[[W:.*]] = braid.all_gather %[[NW]] dim = 0 : tensor<2x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: braid.all_reduce sum %arg3 : tensor<6xf32>
// CHECK-NEXT: braid.dense_update %arg2
// CHECK-NEXT: braid.all_reduce sum %arg5 : tensor<4xf32>
// CHECK-NEXT: braid.dense_update %arg4
// CHECK-NEXT: braid.all_reduce max %arg7 groups {{\[\[}}0, 1], [2, 3]] : tensor<4xf32>
// CHECK-NEXT: braid.dense_update %arg6
// The large parameter, over blocks of two ranks: position rank mod 2.
// CHECK: braid.reduce_scatter sum %arg9 dim = 0 groups {{\[\[}}0, 1], [2, 3]] : tensor<4096x4096xf32> -> tensor<2048x4096xf32>
// CHECK: arith.constant 2 : index
// CHECK: tensor.extract_slice %arg8[%{{.*}}, 0] [2048, 4096] [1, 1]
// CHECK: braid.all_gather %{{.*}} dim = 0 groups {{\[\[}}0, 1], [2, 3]] : tensor<2048x4096xf32> -> tensor<4096x4096xf32>
// CHECK: return %[[W]], %[[NS]],

// SIMULATED-LABEL: func.func @train_step
// SIMULATED-SAME: tensor<8x3xf32> {braid.state = "w.sum"}
// SIMULATED-SAME: tensor<2048x4096xf32> {braid.state = "x.sum", braid.state_shard = #braid.replica_groups<{{\[\[}}0, 1], [2, 3]]>}
// SIMULATED: braid.all_reduce sum %arg1 : tensor<8x3xf32>
// SIMULATED: braid.reduce_scatter sum %arg9 dim = 0 groups {{\[\[}}0, 1], [2, 3]] : tensor<4096x4096xf32> -> tensor<2048x4096xf32>
// SIMULATED-NOT: braid.reduce_scatter

// NOCLUSTER-NOT: braid.reduce_scatter
// NOCLUSTER-NOT: braid.state_shard

// PIPELINE: braid.state_shard
// PIPELINE: braid.reduce_scatter_start sum %arg1
// PIPELINE: braid.all_gather_start

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @train_step(%w: tensor<8x3xf32> {braid.param = "w"}, %dw: tensor<8x3xf32> {braid.input = "dw"},
                        %b: tensor<6xf32> {braid.param = "b"}, %db: tensor<6xf32> {braid.input = "db"},
                        %v: tensor<4xf32> {braid.param = "v"}, %dv: tensor<4xf32> {braid.input = "dv"},
                        %m: tensor<4xf32> {braid.param = "m"}, %dm: tensor<4xf32> {braid.input = "dm"},
                        %x: tensor<4096x4096xf32> {braid.param = "x"}, %dx: tensor<4096x4096xf32> {braid.input = "dx"},
                        %step: tensor<i64> {braid.input = "step"},
                        %sw: tensor<8x3xf32> {braid.state = "w.sum"}, %sb: tensor<6xf32> {braid.state = "b.sum"},
                        %sv: tensor<4xf32> {braid.state = "v.sum"}, %sm: tensor<4xf32> {braid.state = "m.sum"},
                        %sx: tensor<4096x4096xf32> {braid.state = "x.sum"})
      -> (tensor<8x3xf32> {braid.param = "w"}, tensor<8x3xf32> {braid.state = "w.sum"},
          tensor<6xf32> {braid.param = "b"}, tensor<6xf32> {braid.state = "b.sum"},
          tensor<4xf32> {braid.param = "v"}, tensor<4xf32> {braid.state = "v.sum"}, tensor<4xf32>,
          tensor<4xf32> {braid.param = "m"}, tensor<4xf32> {braid.state = "m.sum"},
          tensor<4096x4096xf32> {braid.param = "x"}, tensor<4096x4096xf32> {braid.state = "x.sum"}) {
    %gw = braid.all_reduce sum %dw : tensor<8x3xf32>
    %w2, %sw2 = braid.dense_update %w, %gw step %step state(%sw) optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<i64>, tensor<8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>)
    %gb = braid.all_reduce sum %db : tensor<6xf32>
    %b2, %sb2 = braid.dense_update %b, %gb step %step state(%sb) optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"} : (tensor<6xf32>, tensor<6xf32>, tensor<i64>, tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>)
    %gv = braid.all_reduce sum %dv : tensor<4xf32>
    %v2, %sv2 = braid.dense_update %v, %gv step %step state(%sv) optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %gm = braid.all_reduce max %dm groups [[0, 1], [2, 3]] : tensor<4xf32>
    %m2, %sm2 = braid.dense_update %m, %gm step %step state(%sm) optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"} : (tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %gx = braid.all_reduce sum %dx groups [[0, 1], [2, 3]] : tensor<4096x4096xf32>
    %x2, %sx2 = braid.dense_update %x, %gx step %step state(%sx) optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"} : (tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<i64>, tensor<4096x4096xf32>) -> (tensor<4096x4096xf32>, tensor<4096x4096xf32>)
    return %w2, %sw2, %b2, %sb2, %v2, %sv2, %sv2, %m2, %sm2, %x2, %sx2 : tensor<8x3xf32>, tensor<8x3xf32>, tensor<6xf32>, tensor<6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4096x4096xf32>, tensor<4096x4096xf32>
  }
}
