// RUN: braid-opt %s --braid-partition | FileCheck %s
// RUN: braid-opt %s --braid-partition --canonicalize | FileCheck %s --check-prefix=CHECK-CANON

// A global batch of 7 on 2 nodes x 2 ranks: ranks hold 2, 2, 2 and 1
// samples and every exchange gives each rank ceil(7 / 4) = 2 slots.
// CHECK: module attributes {braid.batch_split = array<i64: 2, 2, 2, 1>
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  // Uneven row ranges, one of them empty.
  braid.table @rw : tensor<50x8xf32> pooling_factor = 3.0 placement = #braid.row_wise<ranks = [2, 0, 3], row_offsets = [0, 7, 7, 50]>
  braid.table @cw : tensor<30x8xf32> pooling_factor = 3.0 placement = #braid.column_wise<ranks = [3, 1], col_offsets = [0, 5, 8]>
  braid.table @trw : tensor<40x8xf16> pooling_factor = 4.0 placement = #braid.table_row_wise<node = 1, ranks = [3, 2], row_offsets = [0, 13, 40]>
  braid.table @tw : tensor<20x8xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
  braid.table @dp : tensor<20x8xf32> pooling_factor = 2.0 placement = #braid.data_parallel<ranks = [0, 1, 2, 3]>

  // CHECK-LABEL: func.func @forward
  // CHECK-SAME: (%[[X:[a-zA-Z0-9_#]+]]: tensor<?x4xf32> {braid.input = "dense"}, %[[RWI:[a-zA-Z0-9_#]+]]: tensor<?xi64> {braid.input = "rw.indices"}, %[[RWO:[a-zA-Z0-9_#]+]]: tensor<?xi64> {braid.input = "rw.offsets"}
  // CHECK-SAME: %[[W:[a-zA-Z0-9_#]+]]: tensor<8x4xf32> {braid.param = "w"}
  // CHECK-SAME: -> tensor<?x8xf32>
  func.func @forward(%x: tensor<7x4xf32> {braid.input = "dense"},
                     %rwi: tensor<?xi64> {braid.input = "rw.indices"}, %rwo: tensor<8xi64> {braid.input = "rw.offsets"},
                     %cwi: tensor<?xi64> {braid.input = "cw.indices"}, %cwo: tensor<8xi64> {braid.input = "cw.offsets"},
                     %trwi: tensor<?xi64> {braid.input = "trw.indices"}, %trwo: tensor<8xi64> {braid.input = "trw.offsets"},
                     %twi: tensor<?xi64> {braid.input = "tw.indices"}, %two: tensor<8xi64> {braid.input = "tw.offsets"},
                     %dpi: tensor<?xi64> {braid.input = "dp.indices"}, %dpo: tensor<8xi64> {braid.input = "dp.offsets"},
                     %w: tensor<8x4xf32> {braid.param = "w"}, %b: tensor<8xf32> {braid.param = "b"}) -> tensor<7x8xf32> {
    // CHECK: %[[H:[a-zA-Z0-9_#]+]] = braid.linear %[[X]], %[[W]], %{{.*}} relu : tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<?x8xf32>
    %h = braid.linear %x, %w, %b relu : tensor<7x4xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<7x8xf32>

    // Row-wise: every rank gets bags (rank 1 holds no rows), partial max
    // pooling, then a reduce_scatter max over all ranks.
    // CHECK: %[[L:[a-zA-Z0-9_#]+]], %[[V:[a-zA-Z0-9_#]+]], %[[C:[a-zA-Z0-9_#]+]] = braid.bucketize @rw(%[[RWI]], %[[RWO]]) to [0, 1, 2, 3] bags_per_rank = 2 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<8xi64>, tensor<?xi64>, tensor<4xi64>)
    // CHECK: %[[RL:[a-zA-Z0-9_#]+]] = braid.all_to_all %[[L]] split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2] groups {{\[\[}}0, 1, 2, 3]] : tensor<8xi64> -> tensor<8xi64>
    // CHECK: %[[RV:[a-zA-Z0-9_#]+]] = braid.all_to_all_v %[[V]], %[[C]] : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    // CHECK: %[[P:[a-zA-Z0-9_#]+]] = braid.shard_embedding_bag @rw(%[[RV]], %[[RL]]) max : (tensor<?xi64>, tensor<8xi64>) -> tensor<8x8xf32>
    // CHECK: %[[S:[a-zA-Z0-9_#]+]] = braid.reduce_scatter max %[[P]] dim = 0 groups {{\[\[}}0, 1, 2, 3]] : tensor<8x8xf32> -> tensor<2x8xf32>
    // CHECK: %[[RWE:[a-zA-Z0-9_#]+]] = braid.combine_shards @rw(%[[S]], %[[RWO]]) max bags_per_rank = 2 : (tensor<2x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
    %e0 = braid.embedding_bag @rw(%rwi, %rwo) max : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>

    // Column-wise: bags to the owners 1 and 3, partial sums padded to the
    // widest shard (5 columns), the pooled rows back to every rank.
    // CHECK: braid.bucketize @cw({{.*}}) to [1, 3] bags_per_rank = 2 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<4xi64>)
    // CHECK: braid.all_to_all %{{.*}} split_sizes = [0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2] {{.*}} : tensor<4xi64> -> tensor<?xi64>
    // CHECK: braid.shard_embedding_bag @cw({{.*}}) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x5xf32>
    // CHECK: %[[CWR:[a-zA-Z0-9_#]+]] = braid.all_to_all %{{.*}} split_sizes = [0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0, 2, 2, 2, 2] {{.*}} : tensor<?x5xf32> -> tensor<4x5xf32>
    // CHECK: braid.combine_shards @cw(%[[CWR]], %{{.*}}) mean bags_per_rank = 2 : (tensor<4x5xf32>, tensor<?xi64>) -> tensor<?x8xf32>
    %e1 = braid.embedding_bag @cw(%cwi, %cwo) mean : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>

    // Table-row-wise on node 1: bags to ranks 2 and 3, partials in f32,
    // reduce_scatter inside node 1 alone (ranks 0 and 1 are in no group and
    // keep their empty partials), then node rank k sends the slots of
    // ranks 2k and 2k + 1.
    // CHECK: braid.bucketize @trw({{.*}}) to [2, 3] bags_per_rank = 2
    // CHECK: braid.shard_embedding_bag @trw({{.*}}) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x8xf32>
    // CHECK: %[[NS:[a-zA-Z0-9_#]+]] = braid.reduce_scatter sum %{{.*}} dim = 0 groups {{\[\[}}2, 3]] : tensor<?x8xf32> -> tensor<?x8xf32>
    // CHECK: %[[TR:[a-zA-Z0-9_#]+]] = braid.all_to_all %[[NS]] split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 2, 2] {{.*}} : tensor<?x8xf32> -> tensor<2x8xf32>
    // CHECK: braid.combine_shards @trw(%[[TR]], %{{.*}}) sum bags_per_rank = 2 : (tensor<2x8xf32>, tensor<?xi64>) -> tensor<?x8xf16>
    %e2 = braid.embedding_bag @trw(%trwi, %trwo) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf16>
    %e2f = arith.extf %e2 : tensor<7x8xf16> to tensor<7x8xf32>

    // Table-wise on rank 1.
    // CHECK: braid.bucketize @tw({{.*}}) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<4xi64>)
    // CHECK: braid.all_to_all %{{.*}} split_sizes = [0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0] {{.*}} : tensor<?x8xf32> -> tensor<2x8xf32>
    %e3 = braid.embedding_bag @tw(%twi, %two) sum : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>

    // Data-parallel: a local lookup.
    // CHECK: braid.embedding_bag @dp(%{{.*}}, %{{.*}}) mean : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x8xf32>
    %e4 = braid.embedding_bag @dp(%dpi, %dpo) mean : (tensor<?xi64>, tensor<8xi64>) -> tensor<7x8xf32>

    // CHECK: arith.addf %{{.*}} : tensor<?x8xf32>
    // CHECK: return %{{.*}} : tensor<?x8xf32>
    %s0 = arith.addf %h, %e0 : tensor<7x8xf32>
    %s1 = arith.addf %s0, %e1 : tensor<7x8xf32>
    %s2 = arith.addf %s1, %e2f : tensor<7x8xf32>
    %s3 = arith.addf %s2, %e3 : tensor<7x8xf32>
    %s4 = arith.addf %s3, %e4 : tensor<7x8xf32>
    return %s4 : tensor<7x8xf32>
  }
}

// Canonicalization keeps the exchanges: none of them is a group of one.
// CHECK-CANON: braid.bucketize @rw
// CHECK-CANON: braid.reduce_scatter max
// CHECK-CANON: braid.combine_shards @cw
// CHECK-CANON: braid.combine_shards @trw
// CHECK-CANON: braid.combine_shards @tw
