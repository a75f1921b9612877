// braid-bucket-collectives on exchanges sent to owners (the pooled rows'
// gradients of two tables, one owned by each rank). Each exchange brings
// its owner 32 MiB (16,384 rows of 1 KiB from each of 2 ranks), more than a
// DDP-sized 25 MiB bucket holds, so a cap alone would keep them apart; but
// their owners differ, so fused each rank still receives 32 MiB, in one
// exchange instead of two one after the other.
//
// Without bucket-mib the simulator weighs one bucket per layout against the
// 25 MiB ones, and on a DGX-H100 node it fuses them.
// RUN: braid-opt %s --braid-bucket-collectives="gradients=0" | FileCheck %s
// A cap given is kept: 25 MiB holds neither.
// RUN: braid-opt %s --braid-bucket-collectives="gradients=0 bucket-mib=25" | FileCheck %s --check-prefix=CAPPED
// A bucket's size is the most any rank receives from it, not the sum of
// each member's most: 40 MiB holds both (32 MiB to each rank), where the
// members' maxima add up to 64.
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=0 bucket-mib=40" | FileCheck %s
// RUN: braid-opt %s --braid-bucket-collectives="force gradients=0 bucket-mib=31" | FileCheck %s --check-prefix=CAPPED
// The rewrite is exact: every rank's results under the reference semantics
// are bit for bit those of the program before it, on random inputs (4 rows
// a table in place of 16,384).
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed -e 's/16384/4/g' %s > %t/small.mlir
// RUN: braid-opt %t/small.mlir --braid-bucket-collectives="force gradients=0" -o %t/fused.mlir
// RUN: FileCheck %s --check-prefix=SMALL < %t/fused.mlir
// RUN: braid-run %t/small.mlir --reference --ranks 2 --seed 9 --dump %t/before > /dev/null
// RUN: braid-run %t/fused.mlir --reference --ranks 2 --seed 9 --dump %t/after > /dev/null
// RUN: diff -r %t/before %t/after

// Destination 0's rows (table a's, every row of it), then destination 1's
// (table b's), in one exchange that sends each destination its table's rows.
// CHECK-LABEL: func.func @gradients
// CHECK:      %[[CAT:.*]] = tensor.concat dim(0)
// CHECK-NEXT: %[[T:.*]] = braid.all_to_all_start %[[CAT]] split_dim = 0 concat_dim = 0 split_sizes = [4194304, 4194304, 4194304, 4194304] groups {{\[\[}}0, 1]]
// CHECK-NOT:  braid.all_to_all_start
// CHECK:      braid.wait %[[T]]
// CHECK-NOT:  braid.wait
// CHECK:      return

// CAPPED-LABEL: func.func @gradients
// CAPPED-NOT:   tensor.concat
// CAPPED-COUNT-2: braid.all_to_all_start %arg
// CAPPED-NOT:   tensor.concat

// SMALL: braid.all_to_all_start %{{.*}} split_sizes = [1024, 1024, 1024, 1024]
// SMALL-NOT: braid.all_to_all_start

module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @gradients(%ga: tensor<16384x256xf32> {braid.input = "ga"},
                       %gb: tensor<16384x256xf32> {braid.input = "gb"})
      -> (tensor<?x256xf32>, tensor<?x256xf32>) {
    %ta = braid.all_to_all_start %ga split_dim = 0 concat_dim = 0 split_sizes = [16384, 0, 16384, 0] groups [[0, 1]] : tensor<16384x256xf32> -> !braid.token<tensor<?x256xf32>>
    %tb = braid.all_to_all_start %gb split_dim = 0 concat_dim = 0 split_sizes = [0, 16384, 0, 16384] groups [[0, 1]] : tensor<16384x256xf32> -> !braid.token<tensor<?x256xf32>>
    %xa = braid.wait %ta : !braid.token<tensor<?x256xf32>>
    %xb = braid.wait %tb : !braid.token<tensor<?x256xf32>>
    return %xa, %xb : tensor<?x256xf32>, tensor<?x256xf32>
  }
}
