// RUN: braid-opt %s --convert-braid-to-cpu=pooling-lanes=4 | FileCheck %s
// RUN: braid-opt %s --convert-braid-to-cpu | FileCheck %s --check-prefix=WHOLE
// RUN: not braid-opt %s --convert-braid-to-cpu=pooling-lanes=-4 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// pooling-lanes=4 (the CUDA target's form): the lookup's forall runs over
// (bag, column group) pairs, a bag's 32 / 4 = 8 groups consecutive; an
// iteration takes its bag and first column from its index, pools 4
// columns over the bag's rows (read as vector<4xf32>) and writes them once.
// CHECK-LABEL: func.func @bags
// CHECK: %[[GROUPS:.*]] = arith.constant 8 : index
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %[[GROUPS]] : index
// CHECK: scf.forall (%[[I:.*]]) in (%[[N]]) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x32xf32>)
// CHECK: %[[BAG:.*]] = arith.divui %[[I]], %[[GROUPS]] : index
// CHECK: %[[GROUP:.*]] = arith.remui %[[I]], %[[GROUPS]] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[GROUP]], %[[LANES:c4[_0-9]*]] : index
// CHECK: %[[PART:.*]] = tensor.extract_slice %[[OUT]][%[[BAG]], %[[FIRST]]] [1, 4] [1, 1]
// CHECK: scf.for {{.*}} -> (vector<4xf32>)
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}, %[[FIRST]]]{{.*}} : tensor<40x32xf32>, vector<4xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[PART]][%{{c0[_0-9]*}}, %{{c0[_0-9]*}}] {in_bounds = [true]} : vector<4xf32>, tensor<1x4xf32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[BAG]], %[[FIRST]]] [1, 4] [1, 1]

// The default: an iteration per bag, its whole row one vector.
// WHOLE: scf.forall (%{{.*}}) in (%{{.*}}) shared_outs
// WHOLE-NOT: arith.remui
// WHOLE: vector<32xf32>

// NEGATIVE: convert-braid-to-cpu: pooling-lanes must not be negative, got -4
braid.table @t : tensor<40x32xf32> pooling_factor = 2.0
func.func @bags(%idx: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x32xf32> {
  %e = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x32xf32>
  return %e : tensor<?x32xf32>
}
