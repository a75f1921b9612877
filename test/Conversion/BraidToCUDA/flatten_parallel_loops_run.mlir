// REQUIRES: mlir-runner
// braid-flatten-parallel-loops keeps what a kernel computes: the same loop
// run on this machine before and after the pass (columns 1 and 3 of each
// row, bounds that need normalizing) writes the same elements.
// RUN: braid-opt %s --convert-scf-to-cf --expand-strided-metadata --lower-affine \
// RUN:   --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void > %t.before
// RUN: braid-opt %s --pass-pipeline='builtin.module(func.func(braid-flatten-parallel-loops))' \
// RUN:   | braid-opt --convert-scf-to-cf --expand-strided-metadata --lower-affine \
// RUN:     --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void > %t.after
// RUN: FileCheck %s --input-file=%t.before
// RUN: FileCheck %s --input-file=%t.after
// RUN: sed 1d %t.before > %t.before.data
// RUN: sed 1d %t.after > %t.after.data
// RUN: diff %t.before.data %t.after.data

// Element (i, j) is (5i + j) * 2 (5i + j) at odd j, 0 elsewhere.
// CHECK: sizes = [3, 5]
// CHECK-NEXT: [0,   2,   0,   18,   0],
// CHECK-NEXT: [0,   72,   0,   128,   0],
// CHECK-NEXT: [0,   242,   0,   338,   0]]

func.func private @printMemrefF32(memref<*xf32>)

func.func @kernel(%a: memref<?x5xf32>, %b: memref<?x5xf32>, %out: memref<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %rows = memref.dim %a, %c0 : memref<?x5xf32>
  scf.parallel (%i, %j) = (%c0, %c1) to (%rows, %c5) step (%c1, %c2) {
    %x = memref.load %a[%i, %j] : memref<?x5xf32>
    %y = memref.load %b[%i, %j] : memref<?x5xf32>
    %s = arith.mulf %x, %y : f32
    memref.store %s, %out[%i, %j] : memref<?x5xf32>
    scf.reduce
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc(%c3) : memref<?x5xf32>
  %b = memref.alloc(%c3) : memref<?x5xf32>
  %o = memref.alloc(%c3) : memref<?x5xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c5 step %c1 {
      %k = arith.muli %i, %c5 : index
      %l = arith.addi %k, %j : index
      %li = arith.index_cast %l : index to i64
      %f = arith.sitofp %li : i64 to f32
      memref.store %f, %a[%i, %j] : memref<?x5xf32>
      %g = arith.addf %f, %f : f32
      memref.store %g, %b[%i, %j] : memref<?x5xf32>
      memref.store %zero, %o[%i, %j] : memref<?x5xf32>
    }
  }
  call @kernel(%a, %b, %o) : (memref<?x5xf32>, memref<?x5xf32>, memref<?x5xf32>) -> ()
  %u = memref.cast %o : memref<?x5xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<?x5xf32>
  memref.dealloc %b : memref<?x5xf32>
  memref.dealloc %o : memref<?x5xf32>
  return
}
