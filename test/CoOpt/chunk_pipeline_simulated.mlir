// The simulator chunks a tensor-parallel block where that pays: examples/
// tp_mlp.mlir's forward on 8 DGX-H100 GPUs with its partial sums
// reduce-scattered (braid-reorder-collectives forced). Each chunk's
// GEMMs keep the SMs as busy as the whole batch's (256 and 512 tiles of
// 128 x 128 on 132 SMs: one wave or two), so the overlap is a gain:
// 1.225 ms whole, 1.184 ms in 2 chunks.
// RUN: braid-opt %s --braid-chunk-pipeline -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// The chunked program shows communication beside computation in its
// simulated trace; the whole one starts nothing.
// RUN: braid-sim %t.mlir --expect-overlap | FileCheck %s --check-prefix=SIM
// CHECK-COUNT-2: braid.all_gather_start %{{.*}} : tensor<256x2048xf32> -> !braid.token<tensor<2048x2048xf32>>
// CHECK-COUNT-2: braid.reduce_scatter_start sum
// CHECK: tensor.concat dim(0)
// SIM: @forward on 8 ranks of dgx-h100: 1.18{{[0-9]}} ms per iteration
// SIM: hidden behind compute 0.{{[1-9][0-9]*}} ms
module attributes {braid.batch_split = array<i64: 512, 512, 512, 512, 512, 512, 512, 512>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 8>} {
  func.func @forward(%arg0: tensor<?x2048xf32> {braid.input = "dense"}, %arg1: tensor<8192x2048xf32> {braid.param = "mlp.up.weight"}, %arg2: tensor<8192xf32> {braid.param = "mlp.up.bias"}, %arg3: tensor<2048x8192xf32> {braid.param = "mlp.down.weight"}, %arg4: tensor<2048xf32> {braid.param = "mlp.down.bias"}, %arg5: tensor<1x2048xf32> {braid.param = "head.weight"}, %arg6: tensor<1xf32> {braid.param = "head.bias"}) -> tensor<?x1xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<2048xf32>
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %cast = tensor.cast %arg0 : tensor<?x2048xf32> to tensor<512x2048xf32>
    %0 = braid.all_gather %cast dim = 0 groups [[0, 1, 2, 3, 4, 5, 6, 7]] : tensor<512x2048xf32> -> tensor<4096x2048xf32>
    %1 = braid.rank : index
    %2 = arith.muli %1, %c1024 : index
    %extracted_slice = tensor.extract_slice %arg1[%2, 0] [1024, 2048] [1, 1] : tensor<8192x2048xf32> to tensor<1024x2048xf32>
    %extracted_slice_0 = tensor.extract_slice %arg2[%2] [1024] [1] : tensor<8192xf32> to tensor<1024xf32>
    %3 = braid.linear %0, %extracted_slice, %extracted_slice_0 relu {placement = #braid.dense_placement<column, ranks = [0, 1, 2, 3, 4, 5, 6, 7]>} : tensor<4096x2048xf32>, tensor<1024x2048xf32>, tensor<1024xf32> -> tensor<4096x1024xf32>
    %extracted_slice_1 = tensor.extract_slice %arg3[0, %2] [2048, 1024] [1, 1] : tensor<2048x8192xf32> to tensor<2048x1024xf32>
    %4 = arith.cmpi eq, %1, %c0 : index
    %5 = arith.select %4, %arg4, %cst : tensor<2048xf32>
    %6 = braid.linear %3, %extracted_slice_1, %5 none {placement = #braid.dense_placement<row, ranks = [0, 1, 2, 3, 4, 5, 6, 7]>} : tensor<4096x1024xf32>, tensor<2048x1024xf32>, tensor<2048xf32> -> tensor<4096x2048xf32>
    %7 = braid.reduce_scatter sum %6 dim = 0 groups [[0, 1, 2, 3, 4, 5, 6, 7]] : tensor<4096x2048xf32> -> tensor<512x2048xf32>
    %cast_2 = tensor.cast %7 : tensor<512x2048xf32> to tensor<?x2048xf32>
    %8 = arith.addf %cast_2, %arg0 : tensor<?x2048xf32>
    %9 = braid.linear %8, %arg5, %arg6 sigmoid {placement = #braid.dense_placement<data_parallel>} : tensor<?x2048xf32>, tensor<1x2048xf32>, tensor<1xf32> -> tensor<?x1xf32>
    return %9 : tensor<?x1xf32>
  }
}

