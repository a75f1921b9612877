// RUN: braid-opt %s | braid-opt | FileCheck %s

braid.table @rows : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 40, 100]>
braid.table @cols : tensor<100x16xf16> pooling_factor = 2.0 placement = #braid.column_wise<ranks = [1, 0], col_offsets = [0, 10, 16]>

// CHECK-LABEL: func.func @row_wise
func.func @row_wise(%idx: tensor<?xi64>, %off: tensor<3xi64>) -> tensor<?x16xf32> {
  // CHECK: %[[L:.*]], %[[V:.*]], %[[C:.*]] = braid.bucketize @rows(%{{.*}}, %{{.*}}) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
  %len, %vals, %counts = braid.bucketize @rows(%idx, %off) to [0, 1] bags_per_rank = 2
      : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
  // CHECK: braid.all_to_all_v %[[V]], %[[C]] : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
  %rvals = braid.all_to_all_v %vals, %counts : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
  %rlen = braid.all_to_all %len split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups [[0, 1]] : tensor<4xi64> -> tensor<4xi64>
  // CHECK: braid.shard_embedding_bag @rows(%{{.*}}, %{{.*}}) max : (tensor<?xi64>, tensor<4xi64>) -> tensor<4x16xf32>
  %part = braid.shard_embedding_bag @rows(%rvals, %rlen) max : (tensor<?xi64>, tensor<4xi64>) -> tensor<4x16xf32>
  %mine = braid.reduce_scatter max %part dim = 0 groups [[0, 1]] : tensor<4x16xf32> -> tensor<2x16xf32>
  // CHECK: braid.combine_shards @rows(%{{.*}}, %{{.*}}) max bags_per_rank = 2 : (tensor<2x16xf32>, tensor<3xi64>) -> tensor<?x16xf32>
  %e = braid.combine_shards @rows(%mine, %off) max bags_per_rank = 2 : (tensor<2x16xf32>, tensor<3xi64>) -> tensor<?x16xf32>
  return %e : tensor<?x16xf32>
}

// Column shards of a 16-bit table: partials in f32, padded to the widest
// shard (10 columns); the result is back in f16.
// CHECK-LABEL: func.func @column_wise
func.func @column_wise(%part: tensor<?x10xf32>, %off: tensor<?xi64>) -> tensor<?x16xf16> {
  // CHECK: braid.combine_shards @cols(%{{.*}}, %{{.*}}) mean bags_per_rank = 3 : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x16xf16>
  %e = braid.combine_shards @cols(%part, %off) mean bags_per_rank = 3 : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x16xf16>
  return %e : tensor<?x16xf16>
}

// CHECK-LABEL: func.func @all_to_all_v_start
// CHECK: %[[T:.*]] = braid.all_to_all_v_start %arg0, %arg1 : (tensor<?xi64>, tensor<4xi64>) -> !braid.token<tensor<?xi64>>
// CHECK-NEXT: braid.wait %[[T]] : !braid.token<tensor<?xi64>>
func.func @all_to_all_v_start(%v: tensor<?xi64>, %c: tensor<4xi64>) -> tensor<?xi64> {
  %t = braid.all_to_all_v_start %v, %c : (tensor<?xi64>, tensor<4xi64>) -> !braid.token<tensor<?xi64>>
  %r = braid.wait %t : !braid.token<tensor<?xi64>>
  return %r : tensor<?xi64>
}

// CHECK-LABEL: func.func @fused_all_to_all_v_start_narrowed
// CHECK: braid.fused_all_to_all_v_start(%arg0) counts(%arg1) {wire_type = i32} : (tensor<?xi64>), (tensor<4xi64>) -> !braid.token<tensor<?xi64>>
func.func @fused_all_to_all_v_start_narrowed(%a: tensor<?xi64>, %ca: tensor<4xi64>) -> tensor<?xi64> {
  %t = braid.fused_all_to_all_v_start (%a) counts(%ca) {wire_type = i32} : (tensor<?xi64>), (tensor<4xi64>) -> !braid.token<tensor<?xi64>>
  %r = braid.wait %t : !braid.token<tensor<?xi64>>
  return %r : tensor<?xi64>
}

// CHECK-LABEL: func.func @fused_all_to_all_v_start
// CHECK: %[[T:.*]]:2 = braid.fused_all_to_all_v_start(%arg0, %arg1) counts(%arg2, %arg3) : (tensor<?xi64>, tensor<?xi64>), (tensor<4xi64>, tensor<4xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
// CHECK-NEXT: braid.wait %[[T]]#1 : !braid.token<tensor<?xi64>>
// CHECK-NEXT: braid.wait %[[T]]#0 : !braid.token<tensor<?xi64>>
func.func @fused_all_to_all_v_start(%a: tensor<?xi64>, %b: tensor<?xi64>, %ca: tensor<4xi64>, %cb: tensor<4xi64>) -> (tensor<?xi64>, tensor<?xi64>) {
  %ta, %tb = braid.fused_all_to_all_v_start (%a, %b) counts(%ca, %cb) : (tensor<?xi64>, tensor<?xi64>), (tensor<4xi64>, tensor<4xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
  %rb = braid.wait %tb : !braid.token<tensor<?xi64>>
  %ra = braid.wait %ta : !braid.token<tensor<?xi64>>
  return %ra, %rb : tensor<?xi64>, tensor<?xi64>
}
