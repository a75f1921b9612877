// RUN: braid-run %s --reference --json | FileCheck %s
// RUN: braid-run %s --reference --json > %t.first
// RUN: braid-run %s --reference --json > %t.second
// RUN: diff %t.first %t.second
// RUN: braid-run %s --reference --json --seed 1 > %t.seed1
// RUN: not diff %t.first %t.seed1

// A 40M x 128 table (20 GB in f32) is never materialized: the reference
// semantics generates each row it reads from (seed, table, row, column).
// Rows are uniform in +-1/sqrt(rows), so pooled values stay tiny.
braid.table @huge : tensor<40000000x128xf32> pooling_factor = 100.0

// CHECK: {"function":"forward","outputs":[{"index":0,"max":{{[0-9.e-]+}},"min":-{{[0-9.e-]+}},"rank":0,"sum":[[SUM:[-0-9.e]+]],"type":"tensor<4x128xf32>"}],"ranks":1,"seed":0}
// The same seed gives the same run; another seed gives other data.
func.func @forward(%idx: tensor<?xi64> {braid.input = "huge.indices"},
                   %off: tensor<5xi64> {braid.input = "huge.offsets"}) -> tensor<4x128xf32> {
  %e = braid.embedding_bag @huge(%idx, %off) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x128xf32>
  return %e : tensor<4x128xf32>
}
