// braid-defer-weight-gradients splits a dense layer's gradient whose input
// gradient leads to a started exchange: the input part stays, the weight
// and bias part goes after the exchange's start, and what reads it (the
// weight gradient's all_reduce start) follows it.
// RUN: braid-opt %s --braid-defer-weight-gradients=force | FileCheck %s
// Without force the simulator decides: on a DGX-H100 node the 1 MiB
// exchange runs behind the weight gradient's GEMM instead of after it.
// RUN: braid-opt %s --braid-defer-weight-gradients | FileCheck %s
// With no braid.cluster there is nothing to predict with: nothing moves.
// RUN: sed -e 's/attributes {braid.cluster = .*} {/{/' %s | braid-opt --braid-defer-weight-gradients | FileCheck %s --check-prefix=NOCLUSTER
// The rewrite is exact: every rank's results under the reference semantics
// are bit for bit those of the program before it, on random inputs (16
// bags of 4 features into 6 in place of 4096, 256 and 512).
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed -e 's/4097/17/g' -e 's/4096/16/g' -e 's/512/6/g' -e 's/256/4/g' %s > %t/small.mlir
// RUN: braid-opt %t/small.mlir --braid-defer-weight-gradients=force -o %t/deferred.mlir
// RUN: FileCheck %s < %t/deferred.mlir
// RUN: braid-run %t/small.mlir --reference --ranks 2 --seed 4 --dump %t/before > /dev/null
// RUN: braid-run %t/deferred.mlir --reference --ranks 2 --seed 4 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after
// The split parts lower to the CPU target, each GEMM alone.
// RUN: braid-opt %t/deferred.mlir --convert-braid-to-cpu | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: func.func @backward
// CHECK:      %[[DX:.*]], %{{.*}}, %{{.*}} = braid.linear_grad %arg0, %arg1, %arg2, %arg3 relu {braid.grad_part = "input"}
// CHECK-NEXT: %[[G:.*]] = braid.combine_shards_grad @t(%[[DX]], %arg5)
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start %[[G]]
// CHECK-NEXT: %{{.*}}, %[[DW:.*]], %[[DB:.*]] = braid.linear_grad %arg0, %arg1, %arg2, %arg3 relu {braid.grad_part = "params"}
// CHECK-NEXT: %[[S:.*]] = braid.all_reduce_start sum %[[DW]]
// CHECK-NEXT: braid.wait %[[T]]
// CHECK-NEXT: braid.wait %[[S]]
// CHECK-NEXT: braid.all_reduce sum %[[DB]]
// A layer whose input gradient leads to no exchange of pooled gradients
// stays whole.
// CHECK-LABEL: func.func private @not_pooled
// CHECK:      braid.linear_grad
// CHECK-NOT:  braid.grad_part
// CHECK-NOT:  braid.linear_grad
// CHECK-LABEL: func.func private @no_exchange
// CHECK:      braid.linear_grad
// CHECK-NOT:  braid.grad_part
// CHECK-NOT:  braid.linear_grad

// NOCLUSTER-NOT: braid.grad_part

// The input part calls the runtime for dx alone (parts = 1), the weight
// part for dw alone (2); neither allocates the other's buffer, and only the
// weight part sums the bias gradient (an scf.forall): the input part's one
// kernel is relu's mask.
// LOWERED-LABEL: func.func @backward
// LOWERED: linalg.generic
// LOWERED-NOT: scf.forall
// LOWERED: %[[ONE:.*]] = arith.constant 1 : i32
// LOWERED: call @braidrt_linear_grad_gemms_f32({{.*}}, %[[ONE]])
// LOWERED: scf.forall
// LOWERED: %[[TWO:.*]] = arith.constant 2 : i32
// LOWERED: call @braidrt_linear_grad_gemms_f32({{.*}}, %[[TWO]])
// LOWERED-NOT: call @braidrt_linear_grad_gemms_f32
// A whole layer computes both (parts = 3).
// LOWERED-LABEL: func.func private @not_pooled
// LOWERED-LABEL: func.func private @no_exchange
// LOWERED: %[[BOTH:.*]] = arith.constant 3 : i32
// LOWERED: call @braidrt_linear_grad_gemms_f32({{.*}}, %[[BOTH]])

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  braid.table @t : tensor<100x256xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 0>
  func.func @backward(%x: tensor<4096x256xf32> {braid.input = "x"},
                      %w: tensor<512x256xf32> {braid.input = "w"},
                      %y: tensor<4096x512xf32> {braid.input = "y"},
                      %dy: tensor<4096x512xf32> {braid.input = "dy"},
                      %ids: tensor<4096xi64> {braid.input = "t.indices"},
                      %off: tensor<4097xi64> {braid.input = "t.offsets"})
      -> (tensor<?x256xf32>, tensor<512x256xf32>, tensor<512xf32>) {
    %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy relu : (tensor<4096x256xf32>, tensor<512x256xf32>, tensor<4096x512xf32>, tensor<4096x512xf32>) -> (tensor<4096x256xf32>, tensor<512x256xf32>, tensor<512xf32>)
    %s = braid.all_reduce_start sum %dw groups [[0, 1]] : tensor<512x256xf32> -> !braid.token<tensor<512x256xf32>>
    %g = braid.combine_shards_grad @t(%dx, %off) sum bags_per_rank = 4096 : (tensor<4096x256xf32>, tensor<4097xi64>) -> tensor<4096x256xf32>
    %t = braid.all_to_all_start %g split_dim = 0 concat_dim = 0 split_sizes = [4096, 0, 4096, 0] groups [[0, 1]] : tensor<4096x256xf32> -> !braid.token<tensor<?x256xf32>>
    %rows = braid.wait %t : !braid.token<tensor<?x256xf32>>
    %gw = braid.wait %s : !braid.token<tensor<512x256xf32>>
    %gb = braid.all_reduce sum %db groups [[0, 1]] : tensor<512xf32>
    return %rows, %gw, %gb : tensor<?x256xf32>, tensor<512x256xf32>, tensor<512xf32>
  }

  // The same layer whose input gradient is sent as it is, not as pooled
  // rows' gradients: nothing to wait behind.
  func.func private @not_pooled(%x: tensor<8x4xf32>, %w: tensor<2x4xf32>, %y: tensor<8x2xf32>, %dy: tensor<8x2xf32>)
      -> (tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf32>) {
    %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy none : (tensor<8x4xf32>, tensor<2x4xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<8x4xf32>, tensor<2x4xf32>, tensor<2xf32>)
    %t = braid.all_to_all_start %dx split_dim = 0 concat_dim = 0 split_sizes = [8, 0, 8, 0] groups [[0, 1]] : tensor<8x4xf32> -> !braid.token<tensor<?x4xf32>>
    %r = braid.wait %t : !braid.token<tensor<?x4xf32>>
    return %r, %dw, %db : tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf32>
  }

  func.func private @no_exchange(%x: tensor<8x4xf32>, %w: tensor<2x4xf32>, %y: tensor<8x2xf32>, %dy: tensor<8x2xf32>)
      -> (tensor<8x4xf32>, tensor<2x4xf32>, tensor<2xf32>) {
    %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy none : (tensor<8x4xf32>, tensor<2x4xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> (tensor<8x4xf32>, tensor<2x4xf32>, tensor<2xf32>)
    return %dx, %dw, %db : tensor<8x4xf32>, tensor<2x4xf32>, tensor<2xf32>
  }
}
