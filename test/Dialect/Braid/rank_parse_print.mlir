// RUN: braid-opt %s | braid-opt | FileCheck %s

// CHECK-LABEL: func.func @ranks
func.func @ranks() -> (index, index) {
  // CHECK: %[[R:.*]] = braid.rank : index
  %r = braid.rank : index
  // CHECK: %[[N:.*]] = braid.world_size : index
  %n = braid.world_size : index
  // CHECK: return %[[R]], %[[N]] : index, index
  return %r, %n : index, index
}
