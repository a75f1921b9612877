// RUN: braid-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{table type must be a statically shaped rank-2 tensor [rows, dim], got 'tensor<10xf32>'}}
braid.table @t : tensor<10xf32> pooling_factor = 1.0

// -----

// expected-error @+1 {{table type must be a statically shaped rank-2 tensor [rows, dim], got 'tensor<?x4xf32>'}}
braid.table @t : tensor<?x4xf32> pooling_factor = 1.0

// -----

// expected-error @+1 {{table element type must be f16, bf16, f32 or f64, got 'i32'}}
braid.table @t : tensor<10x4xi32> pooling_factor = 1.0

// -----

// expected-error @+1 {{table must have at least one row and one column, got 'tensor<0x4xf32>'}}
braid.table @t : tensor<0x4xf32> pooling_factor = 1.0

// -----

// expected-error @+1 {{pooling_factor must be finite, not negative and at most 1000000, got -1}}
braid.table @t : tensor<10x4xf32> pooling_factor = -1.0

// -----

// Row times dim plus column must be an int64 in every kernel.
// expected-error @+1 {{table may have at most 1099511627776 rows and 4611686018427387904 elements, got 'tensor<9007199254740992x4096xf32>'}}
braid.table @t : tensor<9007199254740992x4096xf32> pooling_factor = 1.0

// -----

// A factor that large overflowed the inputs generated for the table.
// expected-error @+1 {{pooling_factor must be finite, not negative and at most 1000000, got 1.000000e+300}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0e300

// -----

// expected-error @+1 {{unique_ratio must be in (0, 1], got 1.5}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 unique_ratio = 1.5

// -----

// expected-error @+1 {{unique_ratio must be in (0, 1], got 0}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 unique_ratio = 0.0

// -----

// expected-error @+1 {{placement: row_offsets must end at the table's rows (10), got 12}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 5, 12]>

// -----

// expected-error @+1 {{placement: col_offsets must end at the table's dim (4), got 8}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.column_wise<ranks = [0, 1], col_offsets = [0, 4, 8]>

// -----

// expected-error @+1 {{placement: row_offsets must end at the table's rows (10), got 9}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_row_wise<node = 0, ranks = [0, 1], row_offsets = [0, 5, 9]>

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  // expected-error @+1 {{placement uses rank 4 but the cluster has 4 ranks}}
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 4>
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  // expected-error @+1 {{table_row_wise node 2 is not a node of the cluster (2 nodes)}}
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_row_wise<node = 2, ranks = [0, 1], row_offsets = [0, 5, 10]>
}

// -----

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
  // expected-error @+1 {{table_row_wise rank 2 is on node 1, not on node 0}}
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_row_wise<node = 0, ranks = [1, 2], row_offsets = [0, 5, 10]>
}

// -----

func.func @f() {
  // expected-error @+1 {{'braid.table' op expects parent op 'builtin.module'}}
  braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
  return
}

// -----

// braid-run reads and writes a table as DIR/NAME.npy: a name that leaves the
// folder is refused.
// expected-error @+1 {{table name '../../escape' cannot name a file in a folder}}
braid.table @"../../escape" : tensor<10x4xf32> pooling_factor = 1.0
