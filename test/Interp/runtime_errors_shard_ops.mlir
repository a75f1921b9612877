// Run-time errors of the partitioned-lookup ops are located and name the
// offending value or rank.
// RUN: rm -rf %t
// RUN: %python %S/Inputs/write_npy.py %t/bad_index/rank0/t.indices.npy "[0, 6]" int64
// RUN: %python %S/Inputs/write_npy.py %t/bad_index/rank0/t.offsets.npy "[0, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/bad_index/rank1/t.indices.npy "[]" int64
// RUN: %python %S/Inputs/write_npy.py %t/bad_index/rank1/t.offsets.npy "[0, 0]" int64
// RUN: %python %S/Inputs/write_npy.py %t/bad_index/rank2/t.indices.npy "[]" int64
// RUN: %python %S/Inputs/write_npy.py %t/bad_index/rank2/t.offsets.npy "[0, 0]" int64
// RUN: not braid-run %s --reference --ranks 2 --inputs %t/bad_index 2>&1 | FileCheck %s --check-prefix=CHECK-INDEX
// RUN: %python %S/Inputs/write_npy.py %t/many_bags/rank0/t.indices.npy "[0, 1, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/many_bags/rank0/t.offsets.npy "[0, 1, 2, 3]" int64
// RUN: %python %S/Inputs/write_npy.py %t/many_bags/rank1/t.indices.npy "[]" int64
// RUN: %python %S/Inputs/write_npy.py %t/many_bags/rank1/t.offsets.npy "[0, 0]" int64
// RUN: not braid-run %s --reference --ranks 2 --inputs %t/many_bags 2>&1 | FileCheck %s --check-prefix=CHECK-SLOTS
// RUN: not braid-run %s --reference --ranks 3 --inputs %t/bad_index 2>&1 | FileCheck %s --check-prefix=CHECK-WORLD
// RUN: not braid-run %S/Inputs/all_to_all_v_counts.mlir --reference --ranks 2 2>&1 | FileCheck %s --check-prefix=CHECK-COUNTS
// RUN: not braid-run %S/Inputs/shard_lookup_range.mlir --reference --ranks 2 2>&1 | FileCheck %s --check-prefix=CHECK-RANGE

// CHECK-INDEX: runtime_errors_shard_ops.mlir:[[# @LINE + 10]]:{{[0-9]+}}: error: rank 0: index 6 at position 1 is outside table 't' (6 rows)
// CHECK-SLOTS: error: there are 3 local bags but bags_per_rank is only 2
// CHECK-WORLD: error: send_counts has 2 entries but the program runs on 3 ranks
// CHECK-COUNTS: all_to_all_v_counts.mlir:{{[0-9]+}}:{{[0-9]+}}: error: rank 0 sends more to rank 0 than its input of 2 slices holds
// CHECK-RANGE: shard_lookup_range.mlir:{{[0-9]+}}:{{[0-9]+}}: error: rank 0: value 3 is outside its shard of table 't' (3 rows)

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<6x2xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 3, 6]>
  func.func @forward(%idx: tensor<?xi64> {braid.input = "t.indices"}, %off: tensor<?xi64> {braid.input = "t.offsets"})
      -> tensor<?xi64> {
    %len, %vals, %counts = braid.bucketize @t(%idx, %off) to [0, 1] bags_per_rank = 2
        : (tensor<?xi64>, tensor<?xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
    return %vals : tensor<?xi64>
  }
}
