// RUN: braid-opt %s --convert-braid-to-cpu="parallel-checks=1" | FileCheck %s
// RUN: braid-opt %s --convert-braid-to-cpu | FileCheck %s --check-prefix=SERIAL

// With parallel-checks, a lookup's indices are checked by a parallel loop
// of their own, and its offsets by another in which every entry checks
// itself: entry 0 against 0, the last against the number of indices, each
// other against the one before. Only the count of entries is checked on
// the host, from the tensor's size.
// CHECK-LABEL: func.func private @__braid_bags_embedding_bag_t(
// CHECK-SAME: %[[IDX:[a-z0-9]+]]: tensor<?xi64> {{.*}}, %[[OFF:[a-z0-9]+]]: tensor<?xi64>
// CHECK: %[[C40:.*]] = arith.constant 40 : index
// CHECK-NOT: scf.for
// CHECK: %[[N:.*]] = tensor.dim %[[IDX]]
// CHECK-NOT: scf.for
// CHECK: scf.forall (%[[I:.*]]) in (%[[N]]) {
// CHECK: %[[X:.*]] = tensor.extract %[[IDX]][%[[I]]]
// CHECK: %[[ROW:.*]] = arith.index_cast %[[X]] : i64 to index
// CHECK: arith.cmpi sge, %[[ROW]], %[[C40]] : index
// CHECK: func.call @braidrt_index_error
// CHECK: %[[E:.*]] = tensor.dim %[[OFF]]
// CHECK: %[[NONE:.*]] = arith.cmpi slt, %[[E]], %{{.*}} : index
// CHECK: scf.if %[[NONE]] {
// CHECK: func.call @braidrt_offsets_error
// CHECK: %[[LAST:.*]] = arith.subi %[[E]], %{{.*}} : index
// CHECK: %[[COUNT:.*]] = tensor.dim %[[IDX]]
// CHECK-NOT: scf.for
// CHECK: scf.forall (%[[J:.*]]) in (%[[E]]) {
// CHECK: %[[V:.*]] = tensor.extract %[[OFF]][%[[J]]]
// CHECK: %[[VI:.*]] = arith.index_cast %[[V]] : i64 to index
// CHECK: arith.cmpi eq, %[[J]], %{{.*}} : index
// CHECK: func.call @braidrt_offsets_error
// CHECK: arith.cmpi eq, %[[J]], %[[LAST]] : index
// CHECK: arith.cmpi ne, %[[VI]], %[[COUNT]] : index
// CHECK: func.call @braidrt_offsets_error
// CHECK: %[[LATER:.*]] = arith.cmpi sgt, %[[J]], %{{.*}} : index
// CHECK: scf.if %[[LATER]] {
// CHECK: %[[PREV:.*]] = arith.subi %[[J]], %{{.*}} : index
// CHECK: tensor.extract %[[OFF]][%[[PREV]]]
// CHECK: arith.cmpi slt, %[[VI]], %{{.*}} : index
// CHECK: func.call @braidrt_offsets_error
// The lookup itself follows, with no serial check loop before it.
// CHECK-NOT: scf.for
// CHECK: scf.forall {{.*}} shared_outs

// Without it, serial loops report the first bad entry.
// SERIAL-LABEL: func.func private @__braid_bags_embedding_bag_t(
// SERIAL: scf.for
// SERIAL: func.call @braidrt_index_error
// SERIAL: scf.for
// SERIAL: func.call @braidrt_offsets_error
// SERIAL: scf.forall {{.*}} shared_outs
braid.table @t : tensor<40x4xf32> pooling_factor = 2.0
func.func @bags(%idx: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4xf32> {
  %e = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}
