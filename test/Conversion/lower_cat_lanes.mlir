// RUN: braid-opt %s --convert-braid-to-cpu="cat-lanes=4" --split-input-file | FileCheck %s
// RUN: braid-opt %s --convert-braid-to-cpu --split-input-file | FileCheck %s --check-prefix=WHOLE
// RUN: not braid-opt %s --convert-braid-to-cpu="cat-lanes=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// With cat-lanes, a cat (and its gradient, below) is one 2-D loop per feature over (sample, group of
// 4 columns): each iteration reads 4 columns of its feature's row and
// writes them at the feature's offset in the result (the GPU's flattening
// then puts consecutive groups of a row on consecutive threads).
// CHECK-LABEL: func.func @cat
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x24xf32>
// CHECK: %[[BD:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK: %[[B0:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK: %[[B1:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK: %[[G2:.*]] = arith.constant 2 : index
// CHECK: scf.forall (%[[ROW:.*]], %[[G:.*]]) in (%{{.*}}, %[[G2]])
// CHECK: %[[FIRST:.*]] = arith.muli %[[G]], %{{.*}} : index
// CHECK: %[[SRC:.*]] = arith.addi %[[FIRST]], %c0{{.*}} : index
// CHECK: %[[V:.*]] = vector.transfer_read %[[BD]][%[[ROW]], %[[SRC]]], %{{.*}} {in_bounds = [true]} : memref<?x8xf32>, vector<4xf32>
// CHECK: %[[AT:.*]] = arith.addi %[[FIRST]], %c0{{.*}} : index
// CHECK: vector.transfer_write %[[V]], %[[OUT]][%[[ROW]], %[[AT]]] {in_bounds = [true]} : vector<4xf32>, memref<?x24xf32>
// CHECK: %[[G3:.*]] = arith.constant 3 : index
// CHECK: scf.forall (%[[ROW0:.*]], %[[GG:.*]]) in (%{{.*}}, %[[G3]])
// CHECK: vector.transfer_read %[[B0]]{{.*}} : memref<?x12xf32>, vector<4xf32>
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: arith.addi %{{.*}}, %[[C8]] : index
// CHECK: %[[G1:.*]] = arith.constant 1 : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %[[G1]])
// CHECK: vector.transfer_read %[[B1]]{{.*}} : memref<?x4xf32>, vector<4xf32>
// CHECK: %[[C20:.*]] = arith.constant 20 : index
// CHECK: arith.addi %{{.*}}, %[[C20]] : index
// CHECK-NOT: scf.forall
// CHECK: return
// Without it, one loop over the samples copies each feature's whole row.
// WHOLE-LABEL: func.func @cat
// WHOLE: scf.forall (%[[ROW:[a-z0-9]+]]) in
// WHOLE: vector.transfer_read {{.*}} : memref<?x8xf32>, vector<8xf32>
// WHOLE: vector.transfer_read {{.*}} : memref<?x12xf32>, vector<12xf32>
// WHOLE: vector.transfer_read {{.*}} : memref<?x4xf32>, vector<4xf32>
// NEGATIVE: error: convert-braid-to-cpu: cat-lanes must be in [0, 1024], got -1
func.func @cat(%d: tensor<?x8xf32>, %e0: tensor<?x12xf32>, %e1: tensor<?x4xf32>) -> tensor<?x24xf32> {
  %c = braid.interaction cat %d, %e0, %e1 : (tensor<?x8xf32>, tensor<?x12xf32>, tensor<?x4xf32>) -> tensor<?x24xf32>
  return %c : tensor<?x24xf32>
}

// -----

// A feature whose width 4 does not divide keeps the whole cat in one loop
// over the samples; dot interactions are not cat's.
// CHECK-LABEL: func.func @ragged
// CHECK: scf.forall (%[[ROW:[a-z0-9]+]]) in
// CHECK: vector.transfer_read {{.*}} : memref<?x8xf32>, vector<8xf32>
// CHECK: vector.transfer_read {{.*}} : memref<?x6xf32>, vector<6xf32>
// CHECK-LABEL: func.func @dot
// CHECK: scf.forall (%[[ROW:[a-z0-9]+]]) in
// CHECK: vector.reduction <add>
func.func @ragged(%d: tensor<?x8xf32>, %e0: tensor<?x6xf32>) -> tensor<?x14xf32> {
  %c = braid.interaction cat %d, %e0 : (tensor<?x8xf32>, tensor<?x6xf32>) -> tensor<?x14xf32>
  return %c : tensor<?x14xf32>
}
func.func @dot(%d: tensor<?x4xf32>, %e0: tensor<?x4xf32>) -> tensor<?x5xf32> {
  %z = braid.interaction dot %d, %e0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x5xf32>
  return %z : tensor<?x5xf32>
}

// -----

// The cat's gradient the same way: each feature's gradient is a 2-D loop
// over (sample, group of 4 columns) reading the result's gradient at the
// feature's offset.
// CHECK-LABEL: func.func @cat_grad
// CHECK: %[[DY:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?x12xf32>
// CHECK: %[[GA:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: %[[GB:.*]] = memref.alloc(%{{.*}}) : memref<?x8xf32>
// CHECK: scf.forall (%[[ROW:.*]], %[[G:.*]]) in (%{{.*}}, %c1{{.*}})
// CHECK: vector.transfer_read %[[DY]]{{.*}} : memref<?x12xf32>, vector<4xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[GA]]{{.*}} : vector<4xf32>, memref<?x4xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %c2{{.*}})
// CHECK: %[[FIRST:.*]] = arith.muli
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[SRC:.*]] = arith.addi %[[FIRST]], %[[C4]] : index
// CHECK: vector.transfer_read %[[DY]][%{{.*}}, %[[SRC]]]{{.*}} : memref<?x12xf32>, vector<4xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[GB]]{{.*}} : vector<4xf32>, memref<?x8xf32>
// WHOLE-LABEL: func.func @cat_grad
// WHOLE: scf.forall (%[[ROW:[a-z0-9]+]]) in
// WHOLE: vector.transfer_read {{.*}} : memref<?x12xf32>, vector<4xf32>
// WHOLE: vector.transfer_read {{.*}} : memref<?x12xf32>, vector<8xf32>
func.func @cat_grad(%dy: tensor<?x12xf32>, %a: tensor<?x4xf32>, %b: tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>) {
  %ga, %gb = braid.interaction_grad cat %dy, %a, %b : (tensor<?x12xf32>, tensor<?x4xf32>, tensor<?x8xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>)
  return %ga, %gb : tensor<?x4xf32>, tensor<?x8xf32>
}
