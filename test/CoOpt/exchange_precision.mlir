// braid-exchange-precision moves the f32 all_to_alls (the pooled rows, in a
// training step also their gradients) as bf16 or f16: rounded before the
// exchange, widened after it (after the wait of a started one), so every
// other op keeps its types. The lengths' i64 exchanges and the routed
// indices' all_to_all_v stay as they are.
// RUN: braid-opt %s --braid-partition | braid-opt --braid-exchange-precision=force | FileCheck %s
// RUN: braid-opt %s --braid-partition | braid-opt --pass-pipeline='builtin.module(func.func(braid-async-exchanges), braid-exchange-precision{force precision=f16})' | FileCheck %s --check-prefix=STARTED
// The simulator keeps f32 where the rounding kernels cost more than the
// halved exchange saves (two rows of 8 floats over NVLink).
// RUN: braid-opt %s --braid-partition | braid-opt --braid-exchange-precision | FileCheck %s --check-prefix=KEPT
// A wire type other than bf16 and f16 is an error.
// RUN: braid-opt %s --braid-partition | not braid-opt --braid-exchange-precision="precision=f8" 2>&1 | FileCheck %s --check-prefix=BAD
// The rewrite rounds the exchanged values and nothing else: under the
// reference semantics the program stays within bf16's rounding of the
// global program, and is not equal to it.
// RUN: rm -rf %t && mkdir -p %t/bf16 %t/f16
// RUN: cp %s %t/bf16/model.mlir && cp %s %t/f16/model.mlir
// RUN: braid-opt %s --braid-partition | braid-opt --braid-exchange-precision=force -o %t/bf16/program.mlir
// RUN: braid-opt %s --braid-partition | braid-opt --braid-exchange-precision="force precision=f16" -o %t/f16/program.mlir
// RUN: braid-run %t/bf16 --reference --check --tolerance 1e-2 --seed 3 | FileCheck %s --check-prefix=ROUNDED
// RUN: braid-run %t/f16 --reference --check --tolerance 1e-3 --seed 3 | FileCheck %s --check-prefix=ROUNDED
// RUN: not braid-run %t/bf16 --reference --check --tolerance 1e-6 --seed 3

// CHECK-LABEL: func.func @forward
// CHECK: braid.all_to_all %{{.*}} : tensor<2xi64> -> tensor<?xi64>
// CHECK: braid.all_to_all_v %{{.*}} : (tensor<?xi64>, tensor<2xi64>) -> tensor<?xi64>
// CHECK: %[[A:.*]] = braid.shard_embedding_bag @a
// CHECK-NEXT: %[[AH:.*]] = arith.truncf %[[A]] : tensor<?x8xf32> to tensor<?x8xbf16>
// CHECK-NEXT: %[[AX:.*]] = braid.all_to_all %[[AH]] {{.*}} : tensor<?x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT: %[[AW:.*]] = arith.extf %[[AX]] : tensor<2x8xbf16> to tensor<2x8xf32>
// CHECK-NEXT: braid.combine_shards @a(%[[AW]], %{{.*}}) sum bags_per_rank = 2 : (tensor<2x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
// CHECK: arith.truncf %{{.*}} : tensor<?x8xf32> to tensor<?x8xbf16>
// CHECK: arith.extf %{{.*}} : tensor<2x8xbf16> to tensor<2x8xf32>
// CHECK-NEXT: braid.combine_shards @c

// STARTED-LABEL: func.func @forward
// STARTED: %[[AH:.*]] = arith.truncf %{{.*}} : tensor<?x8xf32> to tensor<?x8xf16>
// STARTED-NEXT: %[[T:.*]] = braid.all_to_all_start %[[AH]] {{.*}} : tensor<?x8xf16> -> !braid.token<tensor<2x8xf16>>
// STARTED: %[[W:.*]] = braid.wait %[[T]] : !braid.token<tensor<2x8xf16>>
// STARTED-NEXT: %[[AW:.*]] = arith.extf %[[W]] : tensor<2x8xf16> to tensor<2x8xf32>
// STARTED-NEXT: braid.combine_shards @a(%[[AW]]

// KEPT-LABEL: func.func @forward
// KEPT-NOT: truncf
// KEPT-NOT: bf16

// BAD: error: braid-exchange-precision: precision must be bf16 or f16, got 'f8'

// ROUNDED: check against the global program: max relative error {{(0\.00[0-9]+|[1-9][.0-9]*e-0[5-7])}} (tolerance {{.*}}): ok
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @a : tensor<50x8xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
  braid.table @c : tensor<60x8xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 0>
  func.func @forward(%x: tensor<4x4xf32> {braid.input = "dense"},
                     %ai: tensor<?xi64> {braid.input = "a.indices"}, %ao: tensor<5xi64> {braid.input = "a.offsets"},
                     %ci: tensor<?xi64> {braid.input = "c.indices"}, %co: tensor<5xi64> {braid.input = "c.offsets"}) -> tensor<4x20xf32> {
    %ea = braid.embedding_bag @a(%ai, %ao) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %ec = braid.embedding_bag @c(%ci, %co) sum : (tensor<?xi64>, tensor<5xi64>) -> tensor<4x8xf32>
    %z = braid.interaction cat %x, %ea, %ec : (tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x20xf32>
    return %z : tensor<4x20xf32>
  }
}
