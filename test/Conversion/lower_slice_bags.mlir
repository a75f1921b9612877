// RUN: braid-opt %s --convert-braid-to-cpu | FileCheck %s
// RUN: braid-opt %s --braid-lower-cpu | FileCheck %s --check-prefix=LLVM

// A range of bags: the batch's offsets are checked as a lookup checks them
// (the runtime aborts on offsets that do not start at 0, end at the number
// of indices or decrease); the range is clamped to the bags there are; its
// indices are a slice of the batch's, and its offsets a slice less the
// range's first offset.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[IDX:[a-z0-9]+]]: tensor<?xi64> {bufferization.writable = false}, %[[OFF:[a-z0-9]+]]: tensor<?xi64> {bufferization.writable = false})
// CHECK: func.call @braidrt_offsets_error
// CHECK: scf.for
// CHECK: func.call @braidrt_offsets_error
// CHECK: %[[N:.*]] = tensor.dim %[[OFF]]
// CHECK: %[[B:.*]] = arith.subi %[[N]], %c1
// CHECK: %[[FIRST:.*]] = arith.minui %c4, %[[B]] : index
// CHECK: %[[LAST:.*]] = arith.minui %c6, %[[B]] : index
// CHECK: %[[BASE:.*]] = tensor.extract %[[OFF]][%[[FIRST]]] : tensor<?xi64>
// CHECK: %[[BEGIN:.*]] = arith.index_cast %[[BASE]] : i64 to index
// CHECK: %[[ENDV:.*]] = tensor.extract %[[OFF]][%[[LAST]]] : tensor<?xi64>
// CHECK: %[[END:.*]] = arith.index_cast %[[ENDV]] : i64 to index
// CHECK: %[[COUNT:.*]] = arith.subi %[[END]], %[[BEGIN]] : index
// CHECK: %[[RIDX:.*]] = tensor.extract_slice %[[IDX]][%[[BEGIN]]] [%[[COUNT]]] [%{{.*}}] : tensor<?xi64> to tensor<?xi64>
// CHECK: %[[BAGS:.*]] = arith.subi %[[LAST]], %[[FIRST]] : index
// CHECK: %[[ENTRIES:.*]] = arith.addi %[[BAGS]], %{{.*}} : index
// CHECK: %[[ROFF:.*]] = tensor.extract_slice %[[OFF]][%[[FIRST]]] [%[[ENTRIES]]] [%{{.*}}] : tensor<?xi64> to tensor<?xi64>
// CHECK: %[[BASES:.*]] = tensor.splat %[[BASE]][%[[ENTRIES]]] : tensor<?xi64>
// CHECK: %[[REBASED:.*]] = arith.subi %[[ROFF]], %[[BASES]] : tensor<?xi64>
// CHECK: return %[[RIDX]], %[[REBASED]]
// The whole CPU pipeline lowers it to LLVM.
// LLVM: llvm.func @forward
// LLVM-NOT: braid.
func.func @forward(%idx: tensor<?xi64>, %off: tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>) {
  %i, %o = braid.slice_bags %idx, %off bags [4, 2] : (tensor<?xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>)
  return %i, %o : tensor<?xi64>, tensor<?xi64>
}
