// braid-split-feature-gemm splits f32 layers only: in bf16 each of the two
// GEMMs would be rounded to bf16 before their sum (about one bf16 ulp from
// the single GEMM), where in f32 they differ by the order of additions.
// RUN: braid-opt %s --braid-split-feature-gemm=force | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK: braid.interaction cat
// CHECK-NEXT: braid.linear
// CHECK-NOT: braid.linear
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward(%d: tensor<64x64xbf16> {braid.input = "dense"}, %e: tensor<64x64xbf16> {braid.input = "emb"},
                     %w: tensor<64x128xbf16> {braid.param = "w"}, %b: tensor<64xbf16> {braid.param = "b"}) -> tensor<64x64xbf16> {
    %t = braid.all_reduce_start sum %e groups [[0, 1]] : tensor<64x64xbf16> -> !braid.token<tensor<64x64xbf16>>
    %r = braid.wait %t : !braid.token<tensor<64x64xbf16>>
    %x = braid.interaction cat %d, %r : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x128xbf16>
    %y = braid.linear %x, %w, %b none : tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64xbf16> -> tensor<64x64xbf16>
    return %y : tensor<64x64xbf16>
  }
}
