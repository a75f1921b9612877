// braid-chunk-lookups on regions it must leave alone or treat with care:
// two tables whose bags share one offsets argument get a range of bags each
// (the indices differ); a pooled rows' wait read again inside a region op
// is not chunked; nor is a region whose rows feed a dense layer as its
// weight (the layer would mix the bags).
// RUN: braid-opt %s -split-input-file --braid-chunk-lookups=force | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK: braid.slice_bags %arg1, %arg2 bags [0, 2]
// CHECK: braid.slice_bags %arg7, %arg2 bags [0, 2]
// CHECK-NEXT: braid.bucketize @region(%result_indices
// CHECK: braid.slice_bags %arg7, %arg2 bags [2, 2]
module attributes {braid.batch_split = array<i64: 4, 4, 4, 4>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>, braid.model = "dlrm_small", braid.optimizer = {dense = {eps = 1.000000e-10 : f64, lr = 5.000000e-02 : f64, type = "adagrad"}, embedding = {eps = 1.000000e-08 : f64, lr = 5.000000e-02 : f64, type = "rowwise_adagrad"}}, braid.planner = "forced:table_wise"} {
  braid.table @user_id : tensor<1000x16xf32> pooling_factor = 1.000000e+00 unique_ratio = 9.000000e-01 placement = #braid.table_wise<rank = 0>
  braid.table @item_history : tensor<500x16xf32> pooling_factor = 8.000000e+00 unique_ratio = 4.000000e-01 placement = #braid.table_wise<rank = 1>
  braid.table @category : tensor<40x16xf32> pooling_factor = 3.000000e+00 placement = #braid.table_wise<rank = 2>
  braid.table @region : tensor<12x16xf16> pooling_factor = 1.000000e+00 placement = #braid.table_wise<rank = 3>
  func.func @forward(%arg0: tensor<?x13xf32> {braid.input = "dense"}, %arg1: tensor<?xi64> {braid.input = "user_id.indices"}, %arg2: tensor<?xi64> {braid.input = "user_id.offsets"}, %arg3: tensor<?xi64> {braid.input = "item_history.indices"}, %arg4: tensor<?xi64> {braid.input = "item_history.offsets"}, %arg5: tensor<?xi64> {braid.input = "category.indices"}, %arg6: tensor<?xi64> {braid.input = "category.offsets"}, %arg7: tensor<?xi64> {braid.input = "region.indices"}, %arg8: tensor<?xi64> {braid.input = "region.offsets"}, %arg9: tensor<32x13xf32> {braid.param = "bottom_mlp.0.weight"}, %arg10: tensor<32xf32> {braid.param = "bottom_mlp.0.bias"}, %arg11: tensor<16x32xf32> {braid.param = "bottom_mlp.1.weight"}, %arg12: tensor<16xf32> {braid.param = "bottom_mlp.1.bias"}, %arg13: tensor<32x26xf32> {braid.param = "top_mlp.0.weight"}, %arg14: tensor<32xf32> {braid.param = "top_mlp.0.bias"}, %arg15: tensor<16x32xf32> {braid.param = "top_mlp.1.weight"}, %arg16: tensor<16xf32> {braid.param = "top_mlp.1.bias"}, %arg17: tensor<1x16xf32> {braid.param = "top_mlp.2.weight"}, %arg18: tensor<1xf32> {braid.param = "top_mlp.2.bias"}) -> tensor<?x1xf32> {
    %0 = braid.linear %arg0, %arg9, %arg10 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<?x32xf32>
    %1 = braid.linear %0, %arg11, %arg12 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<?x16xf32>
    %lengths, %values, %send_counts = braid.bucketize @user_id(%arg1, %arg2) to [0] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %2 = braid.all_to_all %lengths split_dim = 0 concat_dim = 0 split_sizes = [4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %3 = braid.all_to_all_v %values, %send_counts : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %4 = braid.shard_embedding_bag @user_id(%3, %2) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %5 = braid.all_to_all %4 split_dim = 0 concat_dim = 0 split_sizes = [4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> tensor<4x16xf32>
    %6 = braid.combine_shards @user_id(%5, %arg2) sum bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %lengths_0, %values_1, %send_counts_2 = braid.bucketize @item_history(%arg3, %arg4) to [1] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %7 = braid.all_to_all %lengths_0 split_dim = 0 concat_dim = 0 split_sizes = [0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %8 = braid.all_to_all_v %values_1, %send_counts_2 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %9 = braid.shard_embedding_bag @item_history(%8, %7) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %10 = braid.all_to_all %9 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> tensor<4x16xf32>
    %11 = braid.combine_shards @item_history(%10, %arg4) mean bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %lengths_3, %values_4, %send_counts_5 = braid.bucketize @category(%arg5, %arg6) to [2] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %12 = braid.all_to_all %lengths_3 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %13 = braid.all_to_all_v %values_4, %send_counts_5 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %14 = braid.shard_embedding_bag @category(%13, %12) max : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %15 = braid.all_to_all %14 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> tensor<4x16xf32>
    %16 = braid.combine_shards @category(%15, %arg6) max bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %lengths_6, %values_7, %send_counts_8 = braid.bucketize @region(%arg7, %arg2) to [3] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %17 = braid.all_to_all %lengths_6 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %18 = braid.all_to_all_v %values_7, %send_counts_8 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %19 = braid.shard_embedding_bag @region(%18, %17) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %20 = braid.all_to_all %19 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> tensor<4x16xf32>
    %21 = braid.combine_shards @region(%20, %arg2) sum bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf16>
    %22 = arith.extf %21 : tensor<?x16xf16> to tensor<?x16xf32>
    %23 = braid.interaction dot %1, %6, %11, %16, %22 : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x26xf32>
    %24 = braid.linear %23, %arg13, %arg14 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x26xf32>, tensor<32x26xf32>, tensor<32xf32> -> tensor<?x32xf32>
    %25 = braid.linear %24, %arg15, %arg16 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<?x16xf32>
    %26 = braid.linear %25, %arg17, %arg18 sigmoid {placement = #braid.dense_placement<data_parallel>} : tensor<?x16xf32>, tensor<1x16xf32>, tensor<1xf32> -> tensor<?x1xf32>
    return %26 : tensor<?x1xf32>
  }
}


// -----

// CHECK-LABEL: func.func @forward
// CHECK-NOT: braid.slice_bags
// CHECK: scf.if
module attributes {braid.batch_split = array<i64: 4, 4, 4, 4>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>, braid.model = "dlrm_small", braid.optimizer = {dense = {eps = 1.000000e-10 : f64, lr = 5.000000e-02 : f64, type = "adagrad"}, embedding = {eps = 1.000000e-08 : f64, lr = 5.000000e-02 : f64, type = "rowwise_adagrad"}}, braid.planner = "forced:table_wise"} {
  braid.table @user_id : tensor<1000x16xf32> pooling_factor = 1.000000e+00 unique_ratio = 9.000000e-01 placement = #braid.table_wise<rank = 0>
  braid.table @item_history : tensor<500x16xf32> pooling_factor = 8.000000e+00 unique_ratio = 4.000000e-01 placement = #braid.table_wise<rank = 1>
  braid.table @category : tensor<40x16xf32> pooling_factor = 3.000000e+00 placement = #braid.table_wise<rank = 2>
  braid.table @region : tensor<12x16xf16> pooling_factor = 1.000000e+00 placement = #braid.table_wise<rank = 3>
  func.func @forward(%arg0: tensor<?x13xf32> {braid.input = "dense"}, %arg1: tensor<?xi64> {braid.input = "user_id.indices"}, %arg2: tensor<?xi64> {braid.input = "user_id.offsets"}, %arg3: tensor<?xi64> {braid.input = "item_history.indices"}, %arg4: tensor<?xi64> {braid.input = "item_history.offsets"}, %arg5: tensor<?xi64> {braid.input = "category.indices"}, %arg6: tensor<?xi64> {braid.input = "category.offsets"}, %arg7: tensor<?xi64> {braid.input = "region.indices"}, %arg8: tensor<?xi64> {braid.input = "region.offsets"}, %arg9: tensor<32x13xf32> {braid.param = "bottom_mlp.0.weight"}, %arg10: tensor<32xf32> {braid.param = "bottom_mlp.0.bias"}, %arg11: tensor<16x32xf32> {braid.param = "bottom_mlp.1.weight"}, %arg12: tensor<16xf32> {braid.param = "bottom_mlp.1.bias"}, %arg13: tensor<32x26xf32> {braid.param = "top_mlp.0.weight"}, %arg14: tensor<32xf32> {braid.param = "top_mlp.0.bias"}, %arg15: tensor<16x32xf32> {braid.param = "top_mlp.1.weight"}, %arg16: tensor<16xf32> {braid.param = "top_mlp.1.bias"}, %arg17: tensor<1x16xf32> {braid.param = "top_mlp.2.weight"}, %arg18: tensor<1xf32> {braid.param = "top_mlp.2.bias"}) -> tensor<?x1xf32> {
    %0 = braid.linear %arg0, %arg9, %arg10 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<?x32xf32>
    %1 = braid.linear %0, %arg11, %arg12 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<?x16xf32>
    %lengths, %values, %send_counts = braid.bucketize @user_id(%arg1, %arg2) to [0] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %2 = braid.all_to_all %lengths split_dim = 0 concat_dim = 0 split_sizes = [4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %3 = braid.all_to_all_v %values, %send_counts : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %4 = braid.shard_embedding_bag @user_id(%3, %2) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %5 = braid.all_to_all_start %4 split_dim = 0 concat_dim = 0 split_sizes = [4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> !braid.token<tensor<4x16xf32>>
    %lengths_0, %values_1, %send_counts_2 = braid.bucketize @item_history(%arg3, %arg4) to [1] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %6 = braid.all_to_all %lengths_0 split_dim = 0 concat_dim = 0 split_sizes = [0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %7 = braid.all_to_all_v %values_1, %send_counts_2 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %8 = braid.shard_embedding_bag @item_history(%7, %6) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %9 = braid.all_to_all_start %8 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> !braid.token<tensor<4x16xf32>>
    %lengths_3, %values_4, %send_counts_5 = braid.bucketize @category(%arg5, %arg6) to [2] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %10 = braid.all_to_all %lengths_3 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %11 = braid.all_to_all_v %values_4, %send_counts_5 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %12 = braid.shard_embedding_bag @category(%11, %10) max : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %13 = braid.all_to_all_start %12 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> !braid.token<tensor<4x16xf32>>
    %lengths_6, %values_7, %send_counts_8 = braid.bucketize @region(%arg7, %arg8) to [3] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %14 = braid.all_to_all %lengths_6 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %15 = braid.all_to_all_v %values_7, %send_counts_8 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %16 = braid.shard_embedding_bag @region(%15, %14) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %17 = braid.all_to_all_start %16 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> !braid.token<tensor<4x16xf32>>
    %18 = braid.wait %17 : !braid.token<tensor<4x16xf32>>
    %19 = braid.combine_shards @region(%18, %arg8) sum bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf16>
    %20 = arith.extf %19 : tensor<?x16xf16> to tensor<?x16xf32>
    %21 = braid.wait %5 : !braid.token<tensor<4x16xf32>>
    %22 = braid.combine_shards @user_id(%21, %arg2) sum bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %23 = braid.wait %9 : !braid.token<tensor<4x16xf32>>
    %24 = braid.combine_shards @item_history(%23, %arg4) mean bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %25 = braid.wait %13 : !braid.token<tensor<4x16xf32>>
    %u1 = arith.addf %21, %21 : tensor<4x16xf32>
    %true = arith.constant true
    scf.if %true {
      %u2 = arith.mulf %21, %21 : tensor<4x16xf32>
    }
    %26 = braid.combine_shards @category(%25, %arg6) max bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %27 = braid.interaction dot %1, %22, %24, %26, %20 : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x26xf32>
    %28 = braid.linear %27, %arg13, %arg14 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x26xf32>, tensor<32x26xf32>, tensor<32xf32> -> tensor<?x32xf32>
    %29 = braid.linear %28, %arg15, %arg16 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<?x16xf32>
    %30 = braid.linear %29, %arg17, %arg18 sigmoid {placement = #braid.dense_placement<data_parallel>} : tensor<?x16xf32>, tensor<1x16xf32>, tensor<1xf32> -> tensor<?x1xf32>
    return %30 : tensor<?x1xf32>
  }
}


// -----

// CHECK-LABEL: func.func @forward
// CHECK-NOT: braid.slice_bags
// CHECK: return
module attributes {braid.batch_split = array<i64: 4, 4, 4, 4>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>, braid.model = "dlrm_small", braid.optimizer = {dense = {eps = 1.000000e-10 : f64, lr = 5.000000e-02 : f64, type = "adagrad"}, embedding = {eps = 1.000000e-08 : f64, lr = 5.000000e-02 : f64, type = "rowwise_adagrad"}}, braid.planner = "forced:table_wise"} {
  braid.table @user_id : tensor<1000x16xf32> pooling_factor = 1.000000e+00 unique_ratio = 9.000000e-01 placement = #braid.table_wise<rank = 0>
  braid.table @item_history : tensor<500x16xf32> pooling_factor = 8.000000e+00 unique_ratio = 4.000000e-01 placement = #braid.table_wise<rank = 1>
  braid.table @category : tensor<40x16xf32> pooling_factor = 3.000000e+00 placement = #braid.table_wise<rank = 2>
  braid.table @region : tensor<12x16xf16> pooling_factor = 1.000000e+00 placement = #braid.table_wise<rank = 3>
  func.func @forward(%arg0: tensor<?x13xf32> {braid.input = "dense"}, %arg1: tensor<?xi64> {braid.input = "user_id.indices"}, %arg2: tensor<?xi64> {braid.input = "user_id.offsets"}, %arg3: tensor<?xi64> {braid.input = "item_history.indices"}, %arg4: tensor<?xi64> {braid.input = "item_history.offsets"}, %arg5: tensor<?xi64> {braid.input = "category.indices"}, %arg6: tensor<?xi64> {braid.input = "category.offsets"}, %arg7: tensor<?xi64> {braid.input = "region.indices"}, %arg8: tensor<?xi64> {braid.input = "region.offsets"}, %arg9: tensor<32x13xf32> {braid.param = "bottom_mlp.0.weight"}, %arg10: tensor<32xf32> {braid.param = "bottom_mlp.0.bias"}, %arg11: tensor<16x32xf32> {braid.param = "bottom_mlp.1.weight"}, %arg12: tensor<16xf32> {braid.param = "bottom_mlp.1.bias"}, %arg13: tensor<32x26xf32> {braid.param = "top_mlp.0.weight"}, %arg14: tensor<32xf32> {braid.param = "top_mlp.0.bias"}, %arg15: tensor<16x32xf32> {braid.param = "top_mlp.1.weight"}, %arg16: tensor<16xf32> {braid.param = "top_mlp.1.bias"}, %arg17: tensor<1x16xf32> {braid.param = "top_mlp.2.weight"}, %arg18: tensor<1xf32> {braid.param = "top_mlp.2.bias"}) -> tensor<?x1xf32> {
    %0 = braid.linear %arg0, %arg9, %arg10 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x13xf32>, tensor<32x13xf32>, tensor<32xf32> -> tensor<?x32xf32>
    %1 = braid.linear %0, %arg11, %arg12 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<?x16xf32>
    %c0w = arith.constant 0 : index
    %zf = arith.constant 0.0 : f32
    %lengths, %values, %send_counts = braid.bucketize @user_id(%arg1, %arg2) to [0] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %2 = braid.all_to_all %lengths split_dim = 0 concat_dim = 0 split_sizes = [4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %3 = braid.all_to_all_v %values, %send_counts : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %4 = braid.shard_embedding_bag @user_id(%3, %2) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %5 = braid.all_to_all %4 split_dim = 0 concat_dim = 0 split_sizes = [4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> tensor<4x16xf32>
    %6 = braid.combine_shards @user_id(%5, %arg2) sum bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %lengths_0, %values_1, %send_counts_2 = braid.bucketize @item_history(%arg3, %arg4) to [1] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %7 = braid.all_to_all %lengths_0 split_dim = 0 concat_dim = 0 split_sizes = [0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %8 = braid.all_to_all_v %values_1, %send_counts_2 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %9 = braid.shard_embedding_bag @item_history(%8, %7) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %10 = braid.all_to_all %9 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> tensor<4x16xf32>
    %11 = braid.combine_shards @item_history(%10, %arg4) mean bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %lengths_3, %values_4, %send_counts_5 = braid.bucketize @category(%arg5, %arg6) to [2] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %12 = braid.all_to_all %lengths_3 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %13 = braid.all_to_all_v %values_4, %send_counts_5 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %14 = braid.shard_embedding_bag @category(%13, %12) max : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %15 = braid.all_to_all %14 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> tensor<4x16xf32>
    %16 = braid.combine_shards @category(%15, %arg6) max bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
    %lengths_6, %values_7, %send_counts_8 = braid.bucketize @region(%arg7, %arg8) to [3] bags_per_rank = 4 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    %17 = braid.all_to_all %lengths_6 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4] groups [[0, 1, 2, 3]] : tensor<4xi64> -> tensor<?xi64>
    %18 = braid.all_to_all_v %values_7, %send_counts_8 : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    %19 = braid.shard_embedding_bag @region(%18, %17) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    %20 = braid.all_to_all %19 split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4] groups [[0, 1, 2, 3]] : tensor<?x16xf32> -> tensor<4x16xf32>
    %21 = braid.combine_shards @region(%20, %arg8) sum bags_per_rank = 4 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf16>
    %22 = arith.extf %21 : tensor<?x16xf16> to tensor<?x16xf32>
    %bz = tensor.dim %6, %c0w : tensor<?x16xf32>
    %bias = tensor.splat %zf[%bz] : tensor<?xf32>
    %lw = braid.linear %1, %6, %bias none : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32> -> tensor<?x?xf32>
    %23 = braid.interaction dot %1, %6, %11, %16, %22 : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x26xf32>
    %24 = braid.linear %23, %arg13, %arg14 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x26xf32>, tensor<32x26xf32>, tensor<32xf32> -> tensor<?x32xf32>
    %25 = braid.linear %24, %arg15, %arg16 relu {placement = #braid.dense_placement<data_parallel>} : tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<?x16xf32>
    %26 = braid.linear %25, %arg17, %arg18 sigmoid {placement = #braid.dense_placement<data_parallel>} : tensor<?x16xf32>, tensor<1x16xf32>, tensor<1xf32> -> tensor<?x1xf32>
    return %26 : tensor<?x1xf32>
  }
}

