// RUN: braid-opt %s --convert-braid-to-cpu=embedding-update-kernel --split-input-file | FileCheck %s

// convert-braid-to-cpu's embedding-update-kernel (what braid-lower-cuda and
// braid-compile --embedding-update-kernel use): the fused embedding updates
// of sum and mean lookups become the generated, row-parallel kernel.

// A fused update of a whole table (one rank): the table argument becomes
// writable (updated in place, step after step), the optimizer's state is a
// trailing argument named after the table. The runtime groups the lookup's
// entries by row (the bags' offsets: bounds_are_lengths 0); a generated
// kernel then owns one distinct row per forall iteration: it sums the row's
// gradient from its entries' bags in order (f32 for an f32 table) and, for
// row-wise Adagrad, first the row's mean square (an ordered reduction), the
// state's update and lr / (sqrt(state) + eps); then the row moves in f64
// and is rounded back once. No atomics, no runtime update. The forward
// lookup still reads the table read-only.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<10x4xf32> {braid.table = "t", bufferization.writable = true}
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<?xf32> {braid.table_state = "t", bufferization.writable = true}
// CHECK: call @__braid_train_step_embedding_bag_t({{.*}}, %[[T]])
// CHECK: %[[TB:.*]] = bufferization.to_buffer %[[T]] : tensor<10x4xf32> to memref<10x4xf32>
// CHECK: %[[SB:.*]] = bufferization.to_buffer %[[S]] : tensor<?xf32> to memref<?xf32>
// CHECK: %[[GB:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?x4xf32> to memref<?x4xf32>
// CHECK: %[[BAGS:.*]] = memref.alloc(%[[N:.*]]) : memref<?xi64>
// CHECK: %[[ROWS:.*]] = memref.alloc(%[[N]]) : memref<?xi64>
// CHECK: %[[STARTS:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK: %[[COUNT:.*]] = memref.alloc() : memref<1xi64>
// CHECK: %[[NOT_LENGTHS:.*]] = arith.constant 0 : i32
// CHECK: call @braidrt_segment_rows(%{{.*}}, %{{.*}}, %[[NOT_LENGTHS]], %{{.*}}) : (memref<*xi64>, memref<*xi64>, i32, i64, memref<*xi64>, memref<*xi64>, memref<*xi64>, memref<*xi64>) -> ()
// CHECK: %[[C:.*]] = memref.load %[[COUNT]]
// CHECK: %[[CI:.*]] = arith.index_cast %[[C]] : i64 to index
// CHECK: scf.forall (%[[U:.*]]) in (%[[CI]]) {
// CHECK: memref.load %[[STARTS]][%[[U]]]
// CHECK: %[[R:.*]] = memref.load %[[ROWS]][%[[U]]]
// CHECK: %[[ROW:.*]] = arith.index_cast %[[R]] : i64 to index
// CHECK: scf.for %[[K:[a-z0-9]+]] = {{.*}} -> (vector<4xf32>) {
// CHECK: memref.load %[[BAGS]][%[[K]]]
// CHECK: vector.transfer_read %[[GB]]{{.*}} : memref<?x4xf32>, vector<4xf32>
// CHECK: arith.addf %{{.*}} : vector<4xf32>
// CHECK: vector.reduction <add>, %{{.*}}, %{{.*}} : vector<4xf64> into f64
// CHECK: memref.store %{{.*}}, %[[SB]][%[[ROW]]] : memref<?xf32>
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: scf.for
// CHECK: vector.transfer_read %[[TB]][%[[ROW]], %{{.*}}]{{.*}} : memref<10x4xf32>, vector<4xf32>
// CHECK: arith.subf %{{.*}} : vector<4xf64>
// CHECK: %[[NEW:.*]] = arith.truncf %{{.*}} : vector<4xf64> to vector<4xf32>
// CHECK: vector.transfer_write %[[NEW]], %[[TB]][%[[ROW]], %{{.*}}] {in_bounds = [true]} : vector<4xf32>, memref<10x4xf32>
// CHECK-NOT: atomic_rmw
// CHECK-NOT: braidrt_bag_update
// CHECK: return
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
func.func @train_step(%idx: tensor<?xi64> {braid.input = "t.indices"},
                      %off: tensor<?xi64> {braid.input = "t.offsets"},
                      %g: tensor<?x4xf32> {braid.input = "g"}) -> tensor<?x4xf32> {
  %e = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
  braid.embedding_bag_update @t(%idx, %off, %g) sum optimizer = {eps = 1.0e-08 : f64, lr = 5.0e-02 : f64, type = "rowwise_adagrad"} : tensor<?xi64>, tensor<?xi64>, tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}

// -----

// A shard's update: the shard argument (dynamic rows and columns), an
// element-wise Adagrad state of the same shape, the routed values and the
// bags' lengths (bounds_are_lengths 1). The chunks follow the gradient's
// static width, masked to the shard's columns; an f16 row's gradient is
// summed in f64, the state updated and written back as f32, the row
// rounded to f16 once.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<?x?xf16> {braid.table = "t", bufferization.writable = true}
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<?x?xf32> {braid.table_state = "t", bufferization.writable = true}
// CHECK: %[[TB:.*]] = bufferization.to_buffer %[[T]] : tensor<?x?xf16> to memref<?x?xf16>
// CHECK: %[[SB:.*]] = bufferization.to_buffer %[[S]] : tensor<?x?xf32> to memref<?x?xf32>
// CHECK: %[[LENGTHS:.*]] = arith.constant 1 : i32
// CHECK: call @braidrt_segment_rows(%{{.*}}, %{{.*}}, %[[LENGTHS]],
// CHECK: scf.forall
// CHECK: %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<4xi1>
// CHECK: scf.for {{.*}} -> (vector<4xf64>) {
// CHECK: vector.transfer_read %{{.*}}, %[[MASK]] {in_bounds = [true]} : memref<8x4xf32>, vector<4xf32>
// CHECK: arith.extf %{{.*}} : vector<4xf32> to vector<4xf64>
// CHECK: %[[MASK2:.*]] = vector.create_mask %{{.*}} : vector<4xi1>
// CHECK: vector.transfer_read %[[TB]]{{.*}}, %[[MASK2]] {in_bounds = [true]} : memref<?x?xf16>, vector<4xf16>
// CHECK: vector.transfer_read %[[SB]]{{.*}}, %[[MASK2]] {in_bounds = [true]} : memref<?x?xf32>, vector<4xf32>
// CHECK: %[[SUM:.*]] = arith.truncf %{{.*}} : vector<4xf64> to vector<4xf32>
// CHECK: vector.transfer_write %[[SUM]], %[[SB]]{{.*}}, %[[MASK2]] {in_bounds = [true]} : vector<4xf32>, memref<?x?xf32>
// CHECK: math.sqrt %{{.*}} : vector<4xf64>
// CHECK: %[[W:.*]] = arith.truncf %{{.*}} : vector<4xf64> to vector<4xf16>
// CHECK: vector.transfer_write %[[W]], %[[TB]]{{.*}}, %[[MASK2]] {in_bounds = [true]} : vector<4xf16>, memref<?x?xf16>
braid.table @t : tensor<10x4xf16> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 5, 10]>
func.func @train_step(%vals: tensor<?xi64> {braid.input = "v"},
                      %lens: tensor<8xi64> {braid.input = "l"},
                      %g: tensor<8x4xf32> {braid.input = "g"}) {
  braid.shard_embedding_bag_update @t(%vals, %lens, %g) sum optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : tensor<?xi64>, tensor<8xi64>, tensor<8x4xf32>
  return
}

// -----

// Mean pooling of a bf16 table with SGD (no state): 40 columns go in chunks
// of 16, 16 and 8; each entry's gradient is scaled by 1 / its bag's size
// (from the offsets), and the moved row is rounded through f32 to bf16 as
// the runtime rounds.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<10x40xbf16> {braid.table = "t", bufferization.writable = true})
// CHECK: %[[OFF:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?xi64> to memref<?xi64>
// CHECK: scf.forall
// CHECK: scf.for {{.*}} -> (vector<16xf64>) {
// CHECK: %[[BEGIN:.*]] = memref.load %[[OFF]]
// CHECK: %[[END:.*]] = memref.load %[[OFF]]
// CHECK: %[[SIZE:.*]] = arith.subi %[[END]], %[[BEGIN]] : i64
// CHECK: %[[F:.*]] = arith.sitofp %[[SIZE]] : i64 to f64
// CHECK: arith.divf %{{.*}}, %[[F]] : f64
// CHECK: arith.truncf %{{.*}} : vector<16xf64> to vector<16xf32>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.transfer_write {{.*}} : vector<16xbf16>, memref<10x40xbf16>
// CHECK: vector.transfer_write {{.*}} : vector<16xbf16>, memref<10x40xbf16>
// CHECK: scf.for {{.*}} -> (vector<8xf64>) {
// CHECK: vector.transfer_write {{.*}} : vector<8xbf16>, memref<10x40xbf16>
braid.table @t : tensor<10x40xbf16> pooling_factor = 1.0
func.func @train_step(%idx: tensor<?xi64> {braid.input = "t.indices"},
                      %off: tensor<?xi64> {braid.input = "t.offsets"},
                      %g: tensor<?x40xf32> {braid.input = "g"}) {
  braid.embedding_bag_update @t(%idx, %off, %g) mean optimizer = {lr = 5.0e-02 : f64, type = "sgd"} : tensor<?xi64>, tensor<?xi64>, tensor<?x40xf32>
  return
}

// -----

// Max pooling keeps the runtime's update: its gradient goes to the row
// holding each column's maximum, read before any row moves.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: braidrt_segment_rows
// CHECK-NOT: scf.forall
// CHECK: call @braidrt_bag_update_f32(
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 1>
func.func @train_step(%vals: tensor<?xi64> {braid.input = "v"},
                      %lens: tensor<8xi64> {braid.input = "l"},
                      %g: tensor<8x4xf32> {braid.input = "g"}) {
  braid.shard_embedding_bag_update @t(%vals, %lens, %g) max optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<8xi64>, tensor<8x4xf32>
  return
}
