// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK: braid.table @plain : tensor<100x16xf32> pooling_factor = 2.000000e+00{{$}}
braid.table @plain : tensor<100x16xf32> pooling_factor = 2.0
// CHECK: braid.table @stats : tensor<1000x64xbf16> pooling_factor = 2.050000e+01 unique_ratio = 3.500000e-01{{$}}
braid.table @stats : tensor<1000x64xbf16> pooling_factor = 20.5 unique_ratio = 0.35
// CHECK: braid.table @placed : tensor<10x8xf16> pooling_factor = 0.000000e+00 placement = #braid.table_wise<rank = 3>
braid.table @placed : tensor<10x8xf16> pooling_factor = 0.0 placement = #braid.table_wise<rank = 3>
