// RUN: braid-opt %s --braid-profile-ops --split-input-file | FileCheck %s

// Every Braid op of a public function is bracketed by its timer calls, in
// program order (the embedding bag is op 0, the linear op 1); arith ops
// are not timed; the return is the last timed op. The module names the
// ops as braid-sim's trace does.
// CHECK-LABEL: module attributes {braid.profiled_ops = ["embedding_bag @t", "linear", "return"]}
// CHECK: func.func @forward
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @braidrt_op_begin(%[[C0]]) : (i64) -> ()
// CHECK-NEXT: braid.embedding_bag @t
// CHECK-NEXT: call @braidrt_op_end(%[[C0]]) : (i64) -> ()
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @braidrt_op_begin(%[[C1]])
// CHECK-NEXT: braid.linear
// CHECK-NEXT: call @braidrt_op_end(%[[C1]])
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @braidrt_op_begin(%[[C2]])
// CHECK-NEXT: return
// A private function is not a program's entry: it is left alone.
// CHECK: func.func private @helper
// CHECK-NOT: braidrt_op
// CHECK: func.func private @braidrt_op_begin(i64)
// CHECK: func.func private @braidrt_op_end(i64)
braid.table @t : tensor<40x8xf32> pooling_factor = 2.0
func.func @forward(%idx: tensor<?xi64>, %off: tensor<?xi64>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %e = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x8xf32>
  %d = arith.addf %e, %e : tensor<?x8xf32>
  %y = braid.linear %d, %w, %b relu : tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
