// braid-bucket-collectives combines the all_reduces of one reduction, one
// set of replica groups and one element type into flat buckets, in the
// order their inputs become ready, each placed right after its last
// member's input.
// RUN: braid-opt %s --braid-bucket-collectives=force | FileCheck %s
// A small cap splits the members into several buckets.
// RUN: braid-opt %s --braid-bucket-collectives="force bucket-mib=0.00005" | FileCheck %s --check-prefix=SMALL
// Without force the simulator decides: on a DGX-H100 node, one latency
// saved per member outweighs the packing of a few hundred bytes.
// RUN: braid-opt %s --braid-bucket-collectives | FileCheck %s
// With no braid.cluster there is nothing to predict with, and nothing is
// bucketed unless forced.
// RUN: sed -e 's/attributes {braid.cluster = .*} {/{/' %s | braid-opt --braid-bucket-collectives | FileCheck %s --check-prefix=NOCLUSTER
// The rewrite is exact: every rank's results under the reference semantics
// are bit for bit those of the program before it, on random inputs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-bucket-collectives=force -o %t/bucketed.mlir
// RUN: braid-run %s --reference --ranks 4 --seed 3 --dump %t/before > /dev/null
// RUN: braid-run %t/bucketed.mlir --reference --ranks 4 --seed 3 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after
// RUN: braid-opt %s --braid-bucket-collectives="force bucket-mib=0.00005" -o %t/small.mlir
// RUN: braid-run %t/small.mlir --reference --ranks 4 --seed 3 --dump %t/small > /dev/null
// RUN: diff -r %t/before %t/small
// A bucket needs a positive size.
// RUN: not braid-opt %s --braid-bucket-collectives="bucket-mib=0" 2>&1 | FileCheck %s --check-prefix=BADCAP

// The f32 sums over all four ranks form one bucket, in the order their
// inputs are ready (%c and %d are arguments, then %xa, then %xb), after
// %xb is computed. The max, the sum over pairs and the f64 sum keep their
// own all_reduces.
// CHECK-LABEL: func.func @forward
// CHECK: %[[XA:.*]] = arith.mulf
// CHECK: %[[XB:.*]] = arith.addf
// CHECK-NEXT: %[[FC:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
// CHECK-NEXT: %[[FD:.*]] = tensor.expand_shape %arg3 [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK-NEXT: %[[FA:.*]] = tensor.collapse_shape %[[XA]] {{\[\[}}0, 1]] : tensor<4x3xf32> into tensor<12xf32>
// CHECK-NEXT: %[[CAT:.*]] = tensor.concat dim(0) %[[FC]], %[[FD]], %[[FA]], %[[XB]] : (tensor<8xf32>, tensor<1xf32>, tensor<12xf32>, tensor<5xf32>) -> tensor<26xf32>
// CHECK-NEXT: %[[R:.*]] = braid.all_reduce sum %[[CAT]] groups {{\[\[}}0, 1, 2, 3]] : tensor<26xf32>
// CHECK-NEXT: %[[SC:.*]] = tensor.extract_slice %[[R]][0] [8] [1] : tensor<26xf32> to tensor<8xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.expand_shape %[[SC]] {{\[\[}}0, 1, 2]] output_shape [2, 2, 2] : tensor<8xf32> into tensor<2x2x2xf32>
// CHECK-NEXT: %[[SD:.*]] = tensor.extract_slice %[[R]][8] [1] [1] : tensor<26xf32> to tensor<1xf32>
// CHECK-NEXT: %[[D:.*]] = tensor.collapse_shape %[[SD]] [] : tensor<1xf32> into tensor<f32>
// CHECK-NEXT: %[[SA:.*]] = tensor.extract_slice %[[R]][9] [12] [1] : tensor<26xf32> to tensor<12xf32>
// CHECK-NEXT: %[[A:.*]] = tensor.expand_shape %[[SA]] {{\[\[}}0, 1]] output_shape [4, 3] : tensor<12xf32> into tensor<4x3xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.extract_slice %[[R]][21] [5] [1] : tensor<26xf32> to tensor<5xf32>
// CHECK-NEXT: %[[M:.*]] = braid.all_reduce max %[[XB]] groups {{\[\[}}0, 1, 2, 3]] : tensor<5xf32>
// CHECK-NEXT: %[[P:.*]] = braid.all_reduce sum %[[XB]] groups {{\[\[}}0, 1], [2, 3]] : tensor<5xf32>
// CHECK-NEXT: %[[E:.*]] = braid.all_reduce sum %arg4 groups {{\[\[}}0, 1, 2, 3]] : tensor<6xf64>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[M]], %[[P]]
// An all_reduce whose result is read before another's input is ready
// cannot wait for it: both stay as they are.
// CHECK-LABEL: func.func private @read_early
// CHECK-NOT: tensor.concat
// CHECK-COUNT-2: braid.all_reduce sum
// CHECK-NOT: tensor.concat

// A 52-byte cap: %c and %d (36 bytes) share a bucket; %xa (48 bytes) and
// %xb (20 bytes) do not fit beside anything.
// SMALL-LABEL: func.func @forward
// SMALL: tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<1xf32>) -> tensor<9xf32>
// SMALL-NOT: tensor.concat
// SMALL: braid.all_reduce sum %{{.*}} groups {{\[\[}}0, 1, 2, 3]] : tensor<4x3xf32>
// SMALL: braid.all_reduce sum %{{.*}} groups {{\[\[}}0, 1, 2, 3]] : tensor<5xf32>

// NOCLUSTER-NOT: tensor.concat
// BADCAP: error: bucket-mib must be positive, not 0

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 4>} {
  func.func @forward(%a: tensor<4x3xf32> {braid.input = "a"}, %b: tensor<5xf32> {braid.input = "b"},
                     %c: tensor<2x2x2xf32> {braid.input = "c"}, %d: tensor<f32> {braid.input = "d"},
                     %e: tensor<6xf64> {braid.input = "e"})
      -> (tensor<4x3xf32>, tensor<5xf32>, tensor<2x2x2xf32>, tensor<f32>, tensor<6xf64>, tensor<5xf32>, tensor<5xf32>) {
    %r = braid.rank : index
    %ri = arith.index_cast %r : index to i64
    %rf = arith.sitofp %ri : i64 to f32
    %sa = tensor.splat %rf : tensor<4x3xf32>
    %xa = arith.mulf %a, %sa : tensor<4x3xf32>
    %ga = braid.all_reduce sum %xa groups [[0, 1, 2, 3]] : tensor<4x3xf32>
    %sb = tensor.splat %rf : tensor<5xf32>
    %xb = arith.addf %b, %sb : tensor<5xf32>
    %gb = braid.all_reduce sum %xb groups [[0, 1, 2, 3]] : tensor<5xf32>
    %mb = braid.all_reduce max %xb groups [[0, 1, 2, 3]] : tensor<5xf32>
    %pb = braid.all_reduce sum %xb groups [[0, 1], [2, 3]] : tensor<5xf32>
    %gc = braid.all_reduce sum %c groups [[0, 1, 2, 3]] : tensor<2x2x2xf32>
    %gd = braid.all_reduce sum %d groups [[0, 1, 2, 3]] : tensor<f32>
    %ge = braid.all_reduce sum %e groups [[0, 1, 2, 3]] : tensor<6xf64>
    return %ga, %gb, %gc, %gd, %ge, %mb, %pb
        : tensor<4x3xf32>, tensor<5xf32>, tensor<2x2x2xf32>, tensor<f32>, tensor<6xf64>, tensor<5xf32>, tensor<5xf32>
  }
  func.func private @read_early(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<5xf32> {
    %ga = braid.all_reduce sum %a : tensor<5xf32>
    %y = arith.mulf %ga, %ga : tensor<5xf32>
    %xb = arith.addf %b, %y : tensor<5xf32>
    %gb = braid.all_reduce sum %xb : tensor<5xf32>
    return %gb : tensor<5xf32>
  }
}
