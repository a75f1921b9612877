// A fused exchange with a wire type moves its values as that type: each
// member receives what it would without it while every value fits, and a
// value that does not is a located error naming the rank, the member and
// the value, never a silently wrapped index.
// RUN: rm -rf %t
// RUN: %python %S/Inputs/write_npy.py %t/ok/rank0/x.npy "[-128, 1, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/ok/rank1/x.npy "[127, 11]" int64
// RUN: %python %S/Inputs/write_npy.py %t/bad/rank0/x.npy "[0, 1, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/bad/rank1/x.npy "[128, 11]" int64
// RUN: braid-run %s --reference --ranks 2 --inputs %t/ok --print-values | FileCheck %s --check-prefix=OK
// RUN: not braid-run %s --reference --ranks 2 --inputs %t/bad 2>&1 | FileCheck %s

// Rank 0 sends [-128] to itself and [1, 2] to rank 1; rank 1 sends [127]
// to rank 0 and [11] to itself. Member 1 sends the same values.
// OK: rank 0 result 0: tensor<2xi64>
// OK-NEXT: [-128, 127]
// OK-NEXT: rank 0 result 1: tensor<2xi64>
// OK-NEXT: [-128, 127]
// OK-NEXT: rank 1 result 0: tensor<3xi64>
// OK-NEXT: [1, 2, 11]
// CHECK: runtime_errors_wire_type.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: rank 1: member 0 sends 128, which does not fit the wire type 'i8'
func.func @forward(%x: tensor<?xi64> {braid.input = "x"}) -> (tensor<?xi64>, tensor<?xi64>) {
  %rank = braid.rank : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %rank, %c0 : index
  %counts0 = arith.constant dense<[1, 2]> : tensor<2xi64>
  %counts1 = arith.constant dense<[1, 1]> : tensor<2xi64>
  %counts = arith.select %first, %counts0, %counts1 : tensor<2xi64>
  %ta, %tb = braid.fused_all_to_all_v_start (%x, %x) counts(%counts, %counts) {wire_type = i8} : (tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
  %ra = braid.wait %ta : !braid.token<tensor<?xi64>>
  %rb = braid.wait %tb : !braid.token<tensor<?xi64>>
  return %ra, %rb : tensor<?xi64>, tensor<?xi64>
}
