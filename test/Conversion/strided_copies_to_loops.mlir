// braid-strided-copies-to-loops: a copy memcpy cannot do becomes loops, one
// memcpy can do is left alone.
// RUN: braid-opt %s --pass-pipeline='builtin.module(func.func(braid-strided-copies-to-loops))' | FileCheck %s
// And through the whole CPU backend, no copy reaches the C runner's
// element-at-a-time memrefCopy.
// RUN: braid-opt %s --pass-pipeline='builtin.module(func.func(braid-strided-copies-to-loops),finalize-memref-to-llvm,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM
// LLVM-NOT: memrefCopy

// A column block of a wider matrix (a concatenation's operand, a fused
// exchange's member): a parallel loop over the rows, a loop over the row.
// CHECK-LABEL: func.func @column_block(
// CHECK-SAME: %[[SRC:[^:]+]]: memref<4x8xf32>, %[[DST:[^:]+]]: memref<4x24xf32>)
// CHECK: %[[VIEW:.+]] = memref.subview %[[DST]]
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK: scf.parallel (%[[ROW:.+]]) = (%[[C0]]) to (%[[C4]]) step (%[[C1]])
// CHECK: scf.for %[[COL:.+]] = %[[C0]] to %[[C8]] step %[[C1]]
// CHECK: %[[X:.+]] = memref.load %[[SRC]][%[[ROW]], %[[COL]]]
// CHECK: memref.store %[[X]], %[[VIEW]][%[[ROW]], %[[COL]]]
// CHECK-NOT: memref.copy
// CHECK: return
func.func @column_block(%src: memref<4x8xf32>, %dst: memref<4x24xf32>) {
  %view = memref.subview %dst[0, 8] [4, 8] [1, 1]
      : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 8>>
  memref.copy %src, %view : memref<4x8xf32> to memref<4x8xf32, strided<[24, 1], offset: 8>>
  return
}

// A block of rows at a dynamic offset, of dynamic size: one loop, its bound
// the source's size.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME: %[[SRC:[^:]+]]: memref<?xi64>, %[[DST:[^:]+]]: memref<?xi64>, %[[AT:[^:]+]]: index)
// CHECK: %[[VIEW:.+]] = memref.subview
// CHECK: %[[N:.+]] = memref.dim %[[SRC]], %{{.+}}
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[N]]
// CHECK: memref.load %[[SRC]][%[[I]]]
// CHECK: memref.store %{{.+}}, %[[VIEW]][%[[I]]]
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @dynamic_rows(%src: memref<?xi64>, %dst: memref<?xi64>, %at: index) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %src, %c0 : memref<?xi64>
  %view = memref.subview %dst[%at] [%n] [1]
      : memref<?xi64> to memref<?xi64, strided<[1], offset: ?>>
  memref.copy %src, %view : memref<?xi64> to memref<?xi64, strided<[1], offset: ?>>
  return
}

// Both sides contiguous (identity layouts, or a static block of whole rows):
// left for memcpy.
// CHECK-LABEL: func.func @contiguous(
// CHECK: memref.copy %{{.+}}, %{{.+}} : memref<?x8xf32> to memref<?x8xf32>
// CHECK: memref.copy %{{.+}}, %{{.+}} : memref<2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
// CHECK-NOT: scf.
// CHECK: return
func.func @contiguous(%a: memref<?x8xf32>, %b: memref<?x8xf32>,
                      %c: memref<2x8xf32>, %d: memref<6x8xf32>) {
  memref.copy %a, %b : memref<?x8xf32> to memref<?x8xf32>
  %rows = memref.subview %d[2, 0] [2, 8] [1, 1]
      : memref<6x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  memref.copy %c, %rows : memref<2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  return
}

// Inside a kernel's parallel loop: sequential loops, no parallel region per
// iteration.
// CHECK-LABEL: func.func @inside_kernel(
// CHECK: scf.parallel
// CHECK: memref.subview
// CHECK-NEXT: memref.subview
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK-NOT: memref.copy
// CHECK: return
func.func @inside_kernel(%src: memref<4x2x8xf32>, %dst: memref<4x2x24xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %from = memref.subview %src[%i, 0, 0] [1, 2, 8] [1, 1, 1]
        : memref<4x2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
    %to = memref.subview %dst[%i, 0, 8] [1, 2, 8] [1, 1, 1]
        : memref<4x2x24xf32> to memref<2x8xf32, strided<[24, 1], offset: ?>>
    memref.copy %from, %to : memref<2x8xf32, strided<[8, 1], offset: ?>> to memref<2x8xf32, strided<[24, 1], offset: ?>>
    scf.reduce
  }
  return
}
