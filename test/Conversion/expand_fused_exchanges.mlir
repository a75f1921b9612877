// RUN: braid-opt %s -split-input-file --braid-expand-fused-exchanges -verify-diagnostics | FileCheck %s
// convert-braid-to-cpu expands it first: nothing of the fused op is left.
// RUN: braid-opt %s -split-input-file --convert-braid-to-cpu -verify-diagnostics 2>&1 | FileCheck %s --check-prefix=CPU

// Two members over 2 ranks: the values packed by destination (a's chunk for
// rank 0, b's for rank 0, a's for rank 1, b's for rank 1), the counts for
// each rank added up, one all_to_all of the 2 x 2 count matrix (row j what
// each member sends rank j), one all_to_all_v of the values, and at the
// first wait each member cut out of both senders' blocks.
// CHECK-LABEL: func.func @two_members
// CHECK-SAME: (%[[A:.*]]: tensor<?xi64>, %[[B:.*]]: tensor<?xi64>, %[[CA:.*]]: tensor<2xi64>, %[[CB:.*]]: tensor<2xi64>)
// CHECK: %[[A0:.*]] = tensor.extract %[[CA]][%{{.*}}] : tensor<2xi64>
// CHECK: %[[SA0:.*]] = tensor.extract_slice %[[A]][%{{.*}}] [%{{.*}}] [1]
// CHECK: %[[B0:.*]] = tensor.extract %[[CB]][%{{.*}}] : tensor<2xi64>
// CHECK: %[[T0:.*]] = arith.addi %[[A0]], %[[B0]] : i64
// CHECK: %[[SB0:.*]] = tensor.extract_slice %[[B]][%{{.*}}] [%{{.*}}] [1]
// CHECK: %[[A1:.*]] = tensor.extract %[[CA]][%{{.*}}] : tensor<2xi64>
// CHECK: %[[SA1:.*]] = tensor.extract_slice %[[A]][%{{.*}}] [%{{.*}}] [1]
// CHECK: %[[B1:.*]] = tensor.extract %[[CB]][%{{.*}}] : tensor<2xi64>
// CHECK: %[[T1:.*]] = arith.addi %[[A1]], %[[B1]] : i64
// CHECK: %[[SB1:.*]] = tensor.extract_slice %[[B]][%{{.*}}] [%{{.*}}] [1]
// CHECK: %[[PACKED:.*]] = tensor.concat dim(0) %[[SA0]], %[[SB0]], %[[SA1]], %[[SB1]]
// CHECK: %[[TOTAL:.*]] = tensor.from_elements %[[T0]], %[[T1]] : tensor<2xi64>
// CHECK: %[[MATRIX:.*]] = tensor.from_elements %[[A0]], %[[B0]], %[[A1]], %[[B1]] : tensor<4xi64>
// CHECK: %[[COUNTS:.*]] = braid.all_to_all_start %[[MATRIX]] split_dim = 0 concat_dim = 0 split_sizes = [2, 2, 2, 2] groups {{\[\[}}0, 1]] : tensor<4xi64> -> !braid.token<tensor<4xi64>>
// CHECK: %[[T:.*]] = braid.all_to_all_v_start %[[PACKED]], %[[TOTAL]]
// CHECK: arith.addf
// CHECK: %[[RECEIVED:.*]] = braid.wait %[[COUNTS]] : !braid.token<tensor<4xi64>>
// CHECK: %[[R:.*]] = braid.wait %[[T]] : !braid.token<tensor<?xi64>>
// CHECK: tensor.extract %[[RECEIVED]]
// CHECK: %[[RA0:.*]] = tensor.extract_slice %[[R]]
// CHECK: %[[RB0:.*]] = tensor.extract_slice %[[R]]
// CHECK: %[[RA1:.*]] = tensor.extract_slice %[[R]]
// CHECK: %[[RB1:.*]] = tensor.extract_slice %[[R]]
// CHECK: %[[MA:.*]] = tensor.concat dim(0) %[[RA0]], %[[RA1]]
// CHECK: %[[MB:.*]] = tensor.concat dim(0) %[[RB0]], %[[RB1]]
// CHECK-NOT: braid.wait
// CHECK-NOT: fused_all_to_all_v_start
// CHECK: return %[[MB]], %[[MA]], %{{.*}}
// Within convert-braid-to-cpu the packing and the unpacking are functions
// of their own, around the runtime's exchanges.
// CPU-LABEL: func.func @two_members
// CPU-NOT: fused_all_to_all_v_start
// CPU: call @__braid_two_members_pack_indices(
// CPU: call @braidrt_all_to_all_start_i64(
// CPU: call @braidrt_all_to_all_v_post_i64(
// CPU: call @braidrt_wait_all_to_all_v_i64(
// CPU: call @__braid_two_members_unpack_indices(
// CPU: func.func private @__braid_two_members_pack_indices({{.*}}) -> (tensor<?xi64>, tensor<2xi64>, tensor<4xi64>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CPU: tensor.concat
// CPU: func.func private @__braid_two_members_unpack_indices({{.*}}: tensor<4xi64> {{.*}}) -> (tensor<?xi64>, tensor<?xi64>)
func.func @two_members(%a: tensor<?xi64>, %b: tensor<?xi64>, %ca: tensor<2xi64>, %cb: tensor<2xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<4xf32>) {
  %ta, %tb = braid.fused_all_to_all_v_start (%a, %b) counts(%ca, %cb) : (tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %two = arith.addf %one, %one : tensor<4xf32>
  %rb = braid.wait %tb : !braid.token<tensor<?xi64>>
  %ra = braid.wait %ta : !braid.token<tensor<?xi64>>
  return %rb, %ra, %two : tensor<?xi64>, tensor<?xi64>, tensor<4xf32>
}

// -----

// With wire_type = i32 the packed buffer is narrowed before it moves and
// widened back (sign-extended) before each member is cut out of it; the
// count exchange is the same.
// CHECK-LABEL: func.func @narrowed
// CHECK: %[[PACKED:.*]] = tensor.concat dim(0)
// CHECK: %[[NARROW:.*]] = arith.trunci %[[PACKED]] : tensor<?xi64> to tensor<?xi32>
// CHECK: braid.all_to_all_start %{{.*}} : tensor<4xi64> -> !braid.token<tensor<4xi64>>
// CHECK: %[[T:.*]] = braid.all_to_all_v_start %[[NARROW]], %{{.*}} : (tensor<?xi32>, tensor<2xi64>) -> !braid.token<tensor<?xi32>>
// CHECK: %[[R:.*]] = braid.wait %[[T]] : !braid.token<tensor<?xi32>>
// CHECK: %[[WIDE:.*]] = arith.extsi %[[R]] : tensor<?xi32> to tensor<?xi64>
// CHECK-COUNT-4: tensor.extract_slice %[[WIDE]]
// CHECK: return
// CPU-LABEL: func.func @narrowed
// CPU: call @__braid_narrowed_pack_indices(
// CPU: call @braidrt_all_to_all_v_post_i32(
// CPU: call @__braid_narrowed_unpack_indices(
// CPU: func.func private @__braid_narrowed_pack_indices({{.*}}) -> (tensor<?xi32>, tensor<2xi64>, tensor<4xi64>)
// CPU: arith.trunci
// CPU: func.func private @__braid_narrowed_unpack_indices({{.*}}: tensor<?xi32> {{.*}}, {{.*}}: tensor<4xi64> {{.*}}) -> (tensor<?xi64>, tensor<?xi64>)
// CPU: arith.extsi
func.func @narrowed(%a: tensor<?xi64>, %b: tensor<?xi64>, %ca: tensor<2xi64>, %cb: tensor<2xi64>) -> (tensor<?xi64>, tensor<?xi64>) {
  %ta, %tb = braid.fused_all_to_all_v_start (%a, %b) counts(%ca, %cb) {wire_type = i32} : (tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
  %ra = braid.wait %ta : !braid.token<tensor<?xi64>>
  %rb = braid.wait %tb : !braid.token<tensor<?xi64>>
  return %ra, %rb : tensor<?xi64>, tensor<?xi64>
}

// -----

// A token read by anything but one wait is refused by the verifier (the
// expansion's own check, each token read by braid.wait ops in its block,
// stays for waits in other blocks).
func.func @escaping_token(%a: tensor<?xi64>, %ca: tensor<2xi64>) -> !braid.token<tensor<?xi64>> {
  // expected-error @+1 {{returns a token that must be waited for by exactly one braid.wait and used by nothing else; token 0 has 0 wait(s) and 1 other use(s)}}
  %t = braid.fused_all_to_all_v_start (%a) counts(%ca) : (tensor<?xi64>), (tensor<2xi64>) -> !braid.token<tensor<?xi64>>
  return %t : !braid.token<tensor<?xi64>>
}

// -----

// More chunks (ranks x members) than it is written out with.
func.func @too_many_chunks(%a: tensor<?xi64>, %b: tensor<?xi64>, %c: tensor<40000xi64>) {
  // expected-error @+1 {{has 2 members over 40000 ranks: more than the 65536 chunks it is expanded with}}
  %ta, %tb = braid.fused_all_to_all_v_start (%a, %b) counts(%c, %c) : (tensor<?xi64>, tensor<?xi64>), (tensor<40000xi64>, tensor<40000xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
  %ra = braid.wait %ta : !braid.token<tensor<?xi64>>
  %rb = braid.wait %tb : !braid.token<tensor<?xi64>>
  return
}
