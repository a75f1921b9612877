// braid-bucket-collectives fuses the uniform all_to_alls of a function (each
// rank sends every destination the same number of rows: the pooled rows a
// sharded lookup's owners send to every rank's bags) into one exchange of a
// flat buffer, started once the last member's input is ready and waited for
// where the first member's result is first read.
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=0" | FileCheck %s
// Exchanges are left alone when the pass buckets gradients only.
// RUN: braid-opt %s --braid-bucket-collectives="force exchanges=0" | FileCheck %s --check-prefix=GRADIENTS
// A cap below two members' received bytes keeps them apart.
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=0 bucket-mib=0.00001" | FileCheck %s --check-prefix=SMALL
// The rewrite is exact: every rank's results under the reference semantics
// are bit for bit those of the program before it, on random inputs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=0" -o %t/fused.mlir
// RUN: braid-run %s --reference --ranks 2 --seed 5 --dump %t/before > /dev/null
// RUN: braid-run %t/fused.mlir --reference --ranks 2 --seed 5 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after
// Likewise @started (braid-run runs the only public function).
// RUN: sed -e 's/func.func @pooled/func.func private @pooled/' -e 's/func.func private @started/func.func @started/' %s > %t/started.mlir
// RUN: braid-opt %t/started.mlir --braid-bucket-collectives="force gradients=0" -o %t/started_fused.mlir
// RUN: braid-run %t/started.mlir --reference --ranks 2 --seed 5 --dump %t/started_before > /dev/null
// RUN: braid-run %t/started_fused.mlir --reference --ranks 2 --seed 5 --dump %t/started_after > /dev/null
// RUN: diff -r %t/started_before %t/started_after

// Rank 0 owns %a's rows (one per destination), rank 1 owns %b's (two per
// destination, 2 wide); %c is sent by both ranks alike. The rows a rank
// sends are a slice whose size depends on the rank, as a sharded lookup's
// are: these three go by sender.

// CHECK-LABEL: func.func @pooled
// CHECK-SAME:   (%[[AIN:[a-z0-9]+]]: tensor<2x4xf32>, %[[BIN:[a-z0-9]+]]: tensor<4x2xf32>, %[[C:[a-z0-9]+]]: tensor<2x3xf32>, %[[D:[a-z0-9]+]]: tensor<1xf32>, %[[E:[a-z0-9]+]]: tensor<2x2xf32>)
// %d and %e go by destination: every rank sends %d's row to rank 1 and
// %e's two rows to rank 0. A sender's runs are static (destination 0's
// first); they are ready at the start, and so is their fused exchange.
// CHECK-NEXT: %[[E0:.*]] = tensor.extract_slice %[[E]][0, 0] [2, 2] [1, 1] : tensor<2x2xf32> to tensor<2x2xf32>
// CHECK-NEXT: %[[FE0:.*]] = tensor.collapse_shape %[[E0]] {{\[\[}}0, 1]] : tensor<2x2xf32> into tensor<4xf32>
// CHECK-NEXT: %[[D1:.*]] = tensor.extract_slice %[[D]][0] [1] [1] : tensor<1xf32> to tensor<1xf32>
// CHECK-NEXT: %[[DCAT:.*]] = tensor.concat dim(0) %[[FE0]], %[[D1]] : (tensor<4xf32>, tensor<1xf32>) -> tensor<5xf32>
// CHECK-NEXT: %[[DT:.*]] = braid.all_to_all_start %[[DCAT]] split_dim = 0 concat_dim = 0 split_sizes = [4, 1, 4, 1] groups {{\[\[}}0, 1]] : tensor<5xf32> -> !braid.token<tensor<?xf32>>
// CHECK:      %[[A:.*]] = tensor.extract_slice %[[AIN]]
// CHECK:      %[[B:.*]] = tensor.extract_slice %[[BIN]]
// Members in the order their inputs are ready: %c (an argument), %a, %b;
// each sends its input's G-th to each destination.
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[G:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[RC:.*]] = tensor.dim %[[C]], %[[ZERO]]
// CHECK-NEXT: %[[PC:.*]] = arith.divui %[[RC]], %[[G]]
// CHECK-NEXT: %[[RA:.*]] = tensor.dim %[[A]], %[[ZERO]]
// CHECK-NEXT: %[[PA:.*]] = arith.divui %[[RA]], %[[G]]
// CHECK-NEXT: %[[RB:.*]] = tensor.dim %[[B]], %[[ZERO]]
// CHECK-NEXT: %[[PB:.*]] = arith.divui %[[RB]], %[[G]]
// Destination 0's rows of each member, then destination 1's.
// CHECK-NEXT: %[[C0:.*]] = tensor.extract_slice %[[C]][0, 0] [%[[PC]], 3] [1, 1] : tensor<2x3xf32> to tensor<?x3xf32>
// CHECK-NEXT: %[[FC0:.*]] = tensor.collapse_shape %[[C0]] {{\[\[}}0, 1]] : tensor<?x3xf32> into tensor<?xf32>
// CHECK-NEXT: %[[A0:.*]] = tensor.extract_slice %[[A]][0, 0] [%[[PA]], 4] [1, 1]
// CHECK-NEXT: %[[FA0:.*]] = tensor.collapse_shape %[[A0]]
// CHECK-NEXT: %[[B0:.*]] = tensor.extract_slice %[[B]][0, 0] [%[[PB]], 2] [1, 1]
// CHECK-NEXT: %[[FB0:.*]] = tensor.collapse_shape %[[B0]]
// CHECK-NEXT: %[[C1:.*]] = tensor.extract_slice %[[C]][%[[PC]], 0] [%[[PC]], 3] [1, 1]
// CHECK-NEXT: %[[FC1:.*]] = tensor.collapse_shape %[[C1]]
// CHECK-NEXT: %[[A1:.*]] = tensor.extract_slice %[[A]][%[[PA]], 0] [%[[PA]], 4] [1, 1]
// CHECK-NEXT: %[[FA1:.*]] = tensor.collapse_shape %[[A1]]
// CHECK-NEXT: %[[B1:.*]] = tensor.extract_slice %[[B]][%[[PB]], 0] [%[[PB]], 2] [1, 1]
// CHECK-NEXT: %[[FB1:.*]] = tensor.collapse_shape %[[B1]]
// CHECK-NEXT: %[[CAT:.*]] = tensor.concat dim(0) %[[FC0]], %[[FA0]], %[[FB0]], %[[FC1]], %[[FA1]], %[[FB1]] : {{.*}} -> tensor<?xf32>
// Rank 0 sends 1 x 3 + 1 x 4 elements to each rank, rank 1 1 x 3 + 2 x 2;
// every rank receives 7 + 7.
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start %[[CAT]] split_dim = 0 concat_dim = 0 split_sizes = [7, 7, 7, 7] groups {{\[\[}}0, 1]] : tensor<?xf32> -> !braid.token<tensor<14xf32>>
// A receiver's runs are its column of each member's split_sizes, chosen by
// its rank: %d's row from each sender on rank 1, %e's two rows on rank 0.
// CHECK-NEXT: %[[DR:.*]] = braid.wait %[[DT]] : !braid.token<tensor<?xf32>>
// CHECK-NEXT: %[[RANK:.*]] = braid.rank : index
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[IS1:.*]] = arith.cmpi eq, %[[RANK]], %[[ONE]] : index
// CHECK-NEXT: %[[ND:.*]] = arith.select %[[IS1]], %[[ONE]], %[[Z]] : index
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[IS0:.*]] = arith.cmpi eq, %[[RANK]], %[[Z]] : index
// CHECK-NEXT: %[[NE:.*]] = arith.select %[[IS0]], %[[TWO]], %[[Z]] : index
// CHECK-NEXT: %[[LE:.*]] = arith.muli %[[NE]], %[[TWO]] : index
// CHECK-NEXT: %[[W:.*]] = arith.addi %[[ND]], %[[LE]] : index
// From sender 0, then sender 1 (at %[[W]]): %d's run, then %e's.
// CHECK-NEXT: %[[SD0:.*]] = tensor.extract_slice %[[DR]][%[[Z]]] [%[[ND]]] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK:      %[[SE0:.*]] = tensor.extract_slice %[[DR]][%[[ND]]] [%{{.*}}] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK-NEXT: %[[XE0:.*]] = tensor.expand_shape %[[SE0]] {{\[\[}}0, 1]] output_shape [%[[NE]], 2] : tensor<?xf32> into tensor<?x2xf32>
// CHECK-NEXT: %[[SD1:.*]] = tensor.extract_slice %[[DR]][%[[W]]] [%[[ND]]] [1]
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[W]], %[[ND]] : index
// CHECK:      %[[SE1:.*]] = tensor.extract_slice %[[DR]][%[[AT]]]
// CHECK-NEXT: %[[XE1:.*]] = tensor.expand_shape %[[SE1]]
// CHECK-NEXT: %[[XD:.*]] = tensor.concat dim(0) %[[SD0]], %[[SD1]] : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT: %[[XE:.*]] = tensor.concat dim(0) %[[XE0]], %[[XE1]] : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK-NEXT: %[[R:.*]] = braid.wait %[[T]] : !braid.token<tensor<14xf32>>
// From rank 0: its row of %c, then %a's row; from rank 1: its row of %c,
// then %b's rows.
// CHECK-NEXT: %[[SC0:.*]] = tensor.extract_slice %[[R]][0] [3] [1] : tensor<14xf32> to tensor<3xf32>
// CHECK-NEXT: %[[XC0:.*]] = tensor.expand_shape %[[SC0]] {{\[\[}}0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
// CHECK-NEXT: %[[SA:.*]] = tensor.extract_slice %[[R]][3] [4] [1]
// CHECK-NEXT: %[[XA:.*]] = tensor.expand_shape %[[SA]] {{.*}} output_shape [1, 4]
// CHECK-NEXT: %[[SC1:.*]] = tensor.extract_slice %[[R]][7] [3] [1]
// CHECK-NEXT: %[[XC1:.*]] = tensor.expand_shape %[[SC1]] {{.*}} output_shape [1, 3]
// CHECK-NEXT: %[[SB:.*]] = tensor.extract_slice %[[R]][10] [4] [1]
// CHECK-NEXT: %[[XB:.*]] = tensor.expand_shape %[[SB]] {{.*}} output_shape [2, 2]
// CHECK-NEXT: %[[XC:.*]] = tensor.concat dim(0) %[[XC0]], %[[XC1]] : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[CA:.*]] = tensor.cast %[[XA]] : tensor<1x4xf32> to tensor<?x4xf32>
// CHECK-NEXT: return %[[CA]], %[[XB]], %[[XC]], %[[XD]], %[[XE]] :

// GRADIENTS-LABEL: func.func @pooled
// GRADIENTS-COUNT-5: braid.all_to_all %
// GRADIENTS-NOT: tensor.concat

// CHECK-LABEL: func.func private @started
// CHECK:      %[[M:.*]] = arith.mulf
// CHECK:      %[[CAT:.*]] = tensor.concat
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start %[[CAT]] split_dim = 0 concat_dim = 0 split_sizes = [6, 6, 6, 6] groups {{\[\[}}0, 1]] : tensor<?xf32> -> !braid.token<tensor<12xf32>>
// CHECK-NEXT: %[[N:.*]] = arith.addf
// CHECK-NEXT: %[[R:.*]] = braid.wait %[[T]]
// CHECK-NOT:  braid.wait
// CHECK:      return

// SMALL-LABEL: func.func @pooled
// SMALL-NOT: tensor.concat
// SMALL-COUNT-5: braid.all_to_all %
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @pooled(%a_all: tensor<2x4xf32>, %b_all: tensor<4x2xf32>,
                    %c: tensor<2x3xf32>, %d: tensor<1xf32>, %e: tensor<2x2xf32>)
      -> (tensor<?x4xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<?xf32>,
          tensor<?x2xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %rank = braid.rank : index
    // Rank 0 sends 2 rows of %a_all, rank 1 none.
    %not_rank = arith.subi %c1, %rank : index
    %a_rows = arith.muli %not_rank, %c2 : index
    %a = tensor.extract_slice %a_all[0, 0] [%a_rows, 4] [1, 1] : tensor<2x4xf32> to tensor<?x4xf32>
    // Rank 1 sends 4 rows of %b_all, rank 0 none.
    %b_rows = arith.muli %rank, %c4 : index
    %b = tensor.extract_slice %b_all[0, 0] [%b_rows, 2] [1, 1] : tensor<4x2xf32> to tensor<?x2xf32>
    %xa = braid.all_to_all %a split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 0, 0] groups [[0, 1]] : tensor<?x4xf32> -> tensor<?x4xf32>
    %xb = braid.all_to_all %b split_dim = 0 concat_dim = 0 split_sizes = [0, 0, 2, 2] groups [[0, 1]] : tensor<?x2xf32> -> tensor<2x2xf32>
    %xc = braid.all_to_all %c split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1] groups [[0, 1]] : tensor<2x3xf32> -> tensor<2x3xf32>
    %xd = braid.all_to_all %d split_dim = 0 concat_dim = 0 split_sizes = [0, 1, 0, 1] groups [[0, 1]] : tensor<1xf32> -> tensor<?xf32>
    %xe = braid.all_to_all %e split_dim = 0 concat_dim = 0 split_sizes = [2, 0, 2, 0] groups [[0, 1]] : tensor<2x2xf32> -> tensor<?x2xf32>
    return %xa, %xb, %xc, %xd, %xe : tensor<?x4xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<?xf32>, tensor<?x2xf32>
  }

  // Started exchanges (braid-overlap's form, in which the pipeline meets
  // them) are fused too: the fused one starts once %m is computed and is
  // waited for where the first of the members' waits was.
  func.func private @started(%a: tensor<2x4xf32>, %w: tensor<2x2xf32>)
      -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
    %ta = braid.all_to_all_start %a split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1] groups [[0, 1]] : tensor<2x4xf32> -> !braid.token<tensor<2x4xf32>>
    %m = arith.mulf %w, %w : tensor<2x2xf32>
    %tm = braid.all_to_all_start %m split_dim = 0 concat_dim = 0 split_sizes = [1, 1, 1, 1] groups [[0, 1]] : tensor<2x2xf32> -> !braid.token<tensor<2x2xf32>>
    %n = arith.addf %w, %w : tensor<2x2xf32>
    %xa = braid.wait %ta : !braid.token<tensor<2x4xf32>>
    %xm = braid.wait %tm : !braid.token<tensor<2x2xf32>>
    return %xa, %xm, %n : tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
  }
}
