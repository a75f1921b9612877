// RUN: braid-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{table_wise rank must not be negative, got -1}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = -1>

// -----

// expected-error @+1 {{row_offsets must have one more entry than ranks (3), got 2}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 10]>

// -----

// expected-error @+1 {{row_offsets must start at 0, got 1}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [1, 5, 10]>

// -----

// expected-error @+1 {{row_offsets must be non-decreasing, but entry 2 is 4 after 5}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1, 2], row_offsets = [0, 5, 4, 10]>

// -----

// expected-error @+1 {{col_offsets must be increasing, but entry 2 is 2 after 2}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.column_wise<ranks = [0, 1, 2], col_offsets = [0, 2, 2, 4]>

// -----

// expected-error @+1 {{placement lists rank 1 twice}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [1, 1], row_offsets = [0, 5, 10]>

// -----

// expected-error @+1 {{placement has a negative rank -2}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, -2]>

// -----

// expected-error @+2 {{expected integer value}}
// expected-error @+1 {{failed to parse Braid_DataParallelAttr parameter 'ranks'}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = []>

// -----

// expected-error @+1 {{table_row_wise node must not be negative, got -1}}
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_row_wise<node = -1, ranks = [0], row_offsets = [0, 10]>

// -----

// expected-error @+1 {{tensor-parallel 'column' placement needs at least two ranks, got 0}}
module attributes {a.b = #braid.dense_placement<column>} {}

// -----

// expected-error @+1 {{placement lists rank 0 twice}}
module attributes {a.b = #braid.dense_placement<data_parallel, ranks = [0, 0]>} {}
