// braid-flatten-parallel-loops: a kernel's loop over rows and columns
// becomes one loop over its elements, the columns varying fastest.
// RUN: braid-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(braid-flatten-parallel-loops))' \
// RUN:   | FileCheck %s

// Bounds that do not start at 0 or step by 1 are normalized first: rows
// 0..R, columns 1, 3 (two of them).
// CHECK-LABEL: func.func @strided
// CHECK: %[[ROWS:.*]] = memref.dim
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %[[C2:c2[_0-9]*]] : index
// CHECK: scf.parallel (%[[K:.*]]) = (%{{.*}}) to (%[[N]]) step (%{{.*}}) {
// CHECK:   %[[COL:.*]] = arith.remsi %[[K]], %[[C2]] : index
// CHECK:   %[[ROW:.*]] = arith.divsi %[[K]], %[[C2]] : index
// CHECK:   %[[J:.*]] = affine.apply #{{.*}}(%[[COL]])
// CHECK:   memref.load %{{.*}}[%[[ROW]], %[[J]]]
// CHECK-NOT: scf.parallel
func.func @strided(%a: memref<?x5xf32>, %out: memref<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %rows = memref.dim %a, %c0 : memref<?x5xf32>
  scf.parallel (%i, %j) = (%c0, %c1) to (%rows, %c5) step (%c1, %c2) {
    %x = memref.load %a[%i, %j] : memref<?x5xf32>
    memref.store %x, %out[%i, %j] : memref<?x5xf32>
    scf.reduce
  }
  return
}

// -----

// A loop of one dimension, a loop with a reduction and a loop inside
// another are left alone; the outer loop of the nest is flattened.
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) init (%{{.*}}) -> f32 {
// CHECK: scf.parallel (%[[OUTER:[^)]*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:   arith.remsi %[[OUTER]]
// CHECK:   scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
func.func @left_alone(%a: memref<4x8xf32>, %b: memref<4x8x2x2xf32>, %v: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %v[%i] : memref<8xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) init (%zero) -> f32 {
    %x = memref.load %a[%i, %j] : memref<4x8xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    scf.parallel (%k, %l) = (%c0, %c0) to (%c2, %c2) step (%c1, %c1) {
      memref.store %zero, %b[%i, %j, %k, %l] : memref<4x8x2x2xf32>
      scf.reduce
    }
    scf.reduce
  }
  return %sum : f32
}

