// RUN: not braid-run %s --reference 2>&1 | FileCheck %s

// Received rows narrower than the table's shard are an error, located at the
// op (they were read past their end).
// CHECK: runtime_errors_combine_width.mlir:12:10: error: received rows are 1 wide, but part 0 of 't' has 4 columns
module {
  braid.table @t : tensor<6x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0], row_offsets = [0, 6]>
  func.func @forward() -> tensor<?x4xf32> {
    %r = arith.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
    %rd = tensor.cast %r : tensor<2x1xf32> to tensor<?x?xf32>
    %off = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
    %e = braid.combine_shards @t(%rd, %off) sum bags_per_rank = 2 : (tensor<?x?xf32>, tensor<3xi64>) -> tensor<?x4xf32>
    return %e : tensor<?x4xf32>
  }
}
