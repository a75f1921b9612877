// The simulator chunks a tensor-parallel block whose partial sums are
// all-reduced, each rank keeping its rows, where that pays: examples/
// tp_mlp.mlir's forward on 8 DGX-H100 GPUs as braid-compile's default
// pipeline left it before braid-chunk-pipeline (its all_gather started
// early; braid-reorder-collectives kept the NVLS all_reduce, until one
// node's NVLS got its own fitted rate and fill, 2026-11-29: the pipeline now
// takes a reduce_scatter there). Whole it takes 1.258 ms with
// 5 us of its communication hidden; in 2 chunks, 1.197 ms with 0.239 ms
// hidden, each chunk's all_reduce beside the next chunk's GEMMs.
// RUN: braid-opt %s --braid-chunk-pipeline -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: braid-sim %t.mlir --expect-overlap | FileCheck %s --check-prefix=SIM
// RUN: braid-sim %s | FileCheck %s --check-prefix=WHOLE
// CHECK-COUNT-2: braid.all_gather_start %{{.*}} : tensor<256x2048xf32> -> !braid.token<tensor<2048x2048xf32>>
// CHECK-COUNT-2: braid.all_reduce_start sum %{{.*}} : tensor<2048x2048xf32> -> !braid.token<tensor<2048x2048xf32>>
// CHECK-COUNT-2: tensor.extract_slice %{{.*}} [256, 2048] [1, 1] : tensor<2048x2048xf32> to tensor<256x2048xf32>
// CHECK: tensor.concat dim(0)
// CHECK-NOT: braid.all_reduce sum
// SIM: @forward on 8 ranks of dgx-h100: 1.197 ms per iteration
// SIM: hidden behind compute 0.239 ms
// WHOLE: @forward on 8 ranks of dgx-h100: 1.258 ms per iteration
// WHOLE: hidden behind compute 0.005 ms
module attributes {braid.batch_split = array<i64: 512, 512, 512, 512, 512, 512, 512, 512>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 8>, braid.optimizer = {dense = {lr = 5.000000e-02 : f64, type = "sgd"}, embedding = {lr = 5.000000e-02 : f64, type = "sgd"}}, braid.planner = "braid"} {
  func.func @forward(%arg0: tensor<?x2048xf32> {braid.input = "dense"}, %arg1: tensor<1024x2048xf32> {braid.param = "mlp.up.weight", braid.param_shard = #braid.replica_groups<[[0, 1, 2, 3, 4, 5, 6, 7]]>, braid.shard_dim = 0 : i64}, %arg2: tensor<1024xf32> {braid.param = "mlp.up.bias", braid.param_shard = #braid.replica_groups<[[0, 1, 2, 3, 4, 5, 6, 7]]>, braid.shard_dim = 0 : i64}, %arg3: tensor<2048x1024xf32> {braid.param = "mlp.down.weight", braid.param_shard = #braid.replica_groups<[[0, 1, 2, 3, 4, 5, 6, 7]]>, braid.shard_dim = 1 : i64}, %arg4: tensor<2048xf32> {braid.param = "mlp.down.bias"}, %arg5: tensor<1x2048xf32> {braid.param = "head.weight"}, %arg6: tensor<1xf32> {braid.param = "head.bias"}) -> tensor<?x1xf32> {
    %c512 = arith.constant 512 : index
    %cst = arith.constant dense<0.000000e+00> : tensor<2048xf32>
    %c0 = arith.constant 0 : index
    %cast = tensor.cast %arg0 : tensor<?x2048xf32> to tensor<512x2048xf32>
    %0 = braid.all_gather_start %cast dim = 0 groups [[0, 1, 2, 3, 4, 5, 6, 7]] : tensor<512x2048xf32> -> !braid.token<tensor<4096x2048xf32>>
    %1 = braid.rank : index
    %2 = arith.cmpi eq, %1, %c0 : index
    %3 = arith.select %2, %arg4, %cst : tensor<2048xf32>
    %4 = arith.muli %1, %c512 : index
    %5 = braid.wait %0 : !braid.token<tensor<4096x2048xf32>>
    %6 = braid.linear %5, %arg1, %arg2 relu {placement = #braid.dense_placement<column, ranks = [0, 1, 2, 3, 4, 5, 6, 7]>} : tensor<4096x2048xf32>, tensor<1024x2048xf32>, tensor<1024xf32> -> tensor<4096x1024xf32>
    %7 = braid.linear %6, %arg3, %3 none {placement = #braid.dense_placement<row, ranks = [0, 1, 2, 3, 4, 5, 6, 7]>} : tensor<4096x1024xf32>, tensor<2048x1024xf32>, tensor<2048xf32> -> tensor<4096x2048xf32>
    %8 = braid.all_reduce sum %7 groups [[0, 1, 2, 3, 4, 5, 6, 7]] : tensor<4096x2048xf32>
    %extracted_slice = tensor.extract_slice %8[%4, 0] [512, 2048] [1, 1] : tensor<4096x2048xf32> to tensor<512x2048xf32>
    %cast_0 = tensor.cast %extracted_slice : tensor<512x2048xf32> to tensor<?x2048xf32>
    %9 = arith.addf %cast_0, %arg0 : tensor<?x2048xf32>
    %10 = braid.linear %9, %arg5, %arg6 sigmoid {placement = #braid.dense_placement<data_parallel>} : tensor<?x2048xf32>, tensor<1x2048xf32>, tensor<1xf32> -> tensor<?x1xf32>
    return %10 : tensor<?x1xf32>
  }
}

