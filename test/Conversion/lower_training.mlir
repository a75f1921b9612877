// RUN: braid-opt %s --convert-braid-to-cpu --split-input-file | FileCheck %s

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

// Max pooling's gradient goes to the row holding each column's maximum,
// which the update itself changes: the runtime's update (rows summed in
// order of first use, then updated). SGD keeps no state: no state argument;
// the table's own buffer stands in for it (the runtime does not read it).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<?x?xf32> {braid.table = "t", bufferization.writable = true})
// CHECK: %[[TB:.*]] = bufferization.to_buffer %[[T]] : tensor<?x?xf32> to memref<?x?xf32>
// CHECK: %[[TU:.*]] = memref.cast %[[TB]]
// CHECK: call @braidrt_bag_update_f32(%[[TU]], %[[TU]],
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 1>
func.func @train_step(%vals: tensor<?xi64> {braid.input = "v"},
                      %lens: tensor<8xi64> {braid.input = "l"},
                      %g: tensor<8x4xf32> {braid.input = "g"}) {
  braid.shard_embedding_bag_update @t(%vals, %lens, %g) max optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<8xi64>, tensor<8x4xf32>
  return
}

// -----

// A replicated table on two ranks: its whole-table gradient (read-only
// table), summed over the ranks by the runtime's all_reduce (the groups
// tile the cluster: member is a constant), then the update.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<10x4xf32> {braid.table = "t", bufferization.writable = true}
// CHECK: %[[GRAD:.*]] = memref.alloc() : memref<10x4xf32>
// CHECK: call @braidrt_bag_grad_f32({{.*}}) : (memref<*xf32>, memref<*xi64>, memref<*xi64>, memref<*xf32>, memref<*xf32>, i32) -> ()
// CHECK: %[[SUM:.*]] = memref.alloc() : memref<10x4xf32>
// CHECK: %[[MEMBER:.*]] = arith.extui %true : i1 to i32
// CHECK: call @braidrt_all_reduce_f32(%{{.*}}, %{{.*}}, %c2_i64, %c1_i64, %[[MEMBER]], %c0_i32{{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i64, i32, i32) -> ()
// CHECK: call @braidrt_table_update_f32({{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i32, f64, f64) -> ()
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1]>
func.func @train_step(%idx: tensor<?xi64> {braid.input = "t.indices"},
                      %off: tensor<?xi64> {braid.input = "t.offsets"},
                      %g: tensor<?x4xf32> {braid.input = "g"}) {
  %tg = braid.embedding_bag_grad @t(%idx, %off, %g) mean : (tensor<?xi64>, tensor<?xi64>, tensor<?x4xf32>) -> tensor<10x4xf32>
  %sum = braid.all_reduce sum %tg groups [[0, 1]] : tensor<10x4xf32>
  braid.table_update @t(%sum) optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<10x4xf32>
  return
}
}

// -----

// The loss, a layer's backward and the dense optimizer: runtime calls into
// fresh buffers; Adam reads both moments and its step number.
// CHECK-LABEL: func.func @dense
// CHECK: call @braidrt_bce_with_logits({{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, f64) -> ()
// CHECK: call @braidrt_linear_grad_f32({{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32) -> ()
// CHECK: %[[STEP:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK: %[[ADAM:.*]] = arith.constant 3 : i32
// CHECK: call @braidrt_dense_update_f32({{.*}}, %[[STEP]], %[[ADAM]], {{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i32, f64, f64, f64, f64) -> ()
func.func @dense(%x: tensor<?x3xf32>, %w: tensor<1x3xf32>, %z: tensor<?x1xf32>,
                 %y: tensor<?xf32>, %t: tensor<i64>, %m: tensor<1x3xf32>,
                 %v: tensor<1x3xf32>) -> (tensor<f32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>) {
  %loss, %dz = braid.bce_with_logits %z, %y scale = 0.25 : tensor<?x1xf32>, tensor<?xf32> -> tensor<f32>, tensor<?x1xf32>
  %dx, %dw, %db = braid.linear_grad %x, %w, %z, %dz none : (tensor<?x3xf32>, tensor<1x3xf32>, tensor<?x1xf32>, tensor<?x1xf32>) -> (tensor<?x3xf32>, tensor<1x3xf32>, tensor<1xf32>)
  %w2, %m2, %v2 = braid.dense_update %w, %dw step %t state(%m, %v) optimizer = {beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, eps = 1.0e-08 : f64, lr = 1.0e-03 : f64, type = "adam"} : (tensor<1x3xf32>, tensor<1x3xf32>, tensor<i64>, tensor<1x3xf32>, tensor<1x3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>)
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>
}

// -----

// The interactions' backward, generated like their forward: a forall over
// the samples. cat copies each feature's columns of the result's gradient
// row; dot reads the sample's features once, accumulates each pair's
// gradient times the other feature in f64 (the reference semantics' sums,
// rounded once) and writes each gradient row once. No concatenated copy
// of the features.
// CHECK-LABEL: func.func @interactions
// CHECK: %[[DCAT:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[GA:.*]] = memref.alloc(%{{.*}}) : memref<?x3xf32>
// CHECK: %[[GB:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: scf.forall (%[[S:.*]]) in
// CHECK: %[[A:.*]] = vector.transfer_read %[[DCAT]][%[[S]], %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<?x7xf32>, vector<3xf32>
// CHECK: vector.transfer_write %[[A]], %[[GA]][%[[S]], %{{.*}}]
// CHECK: vector.transfer_read %[[DCAT]][%[[S]], %c3]{{.*}} : memref<?x7xf32>, vector<4xf32>
// CHECK: scf.forall
// CHECK-COUNT-4: arith.extf %{{.*}} : vector<4xf32> to vector<4xf64>
// CHECK-COUNT-6: vector.fma %{{.*}} : vector<4xf64>
// CHECK-COUNT-3: arith.truncf %{{.*}} : vector<4xf64> to vector<4xf32>
// CHECK-NOT: tensor.concat
// CHECK: return
func.func @interactions(%dcat: tensor<?x7xf32>, %a: tensor<?x3xf32>, %b: tensor<?x4xf32>,
                        %ddot: tensor<?x7xf32>, %d: tensor<?x4xf32>, %e: tensor<?x4xf32>,
                        %f: tensor<?x4xf32>) -> (tensor<?x3xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %ga, %gb = braid.interaction_grad cat %dcat, %a, %b : (tensor<?x7xf32>, tensor<?x3xf32>, tensor<?x4xf32>) -> (tensor<?x3xf32>, tensor<?x4xf32>)
  %gd, %ge, %gf = braid.interaction_grad dot %ddot, %d, %e, %f : (tensor<?x7xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  return %ga, %gb, %gd, %ge, %gf : tensor<?x3xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// combine_shards' backward of a column-wise table: the parts are the
// column shards in rank order, (offset, columns) pairs.
// CHECK-LABEL: func.func @combine
// CHECK: memref.alloc() : memref<8x3xf32>
// CHECK: arith.constant dense<[0, 1, 1, 3]> : tensor<4xi64>
// CHECK: call @braidrt_combine_shards_grad({{.*}}, %c1_i32, %c4_i64) : (memref<*xf32>, memref<*xi64>, memref<*xf32>, memref<*xi64>, i32, i64) -> ()
braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.column_wise<ranks = [0, 1], col_offsets = [0, 1, 4]>
func.func @combine(%de: tensor<?x4xf32>, %off: tensor<?xi64>) -> tensor<8x3xf32> {
  %dr = braid.combine_shards_grad @t(%de, %off) mean bags_per_rank = 4 : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<8x3xf32>
  return %dr : tensor<8x3xf32>
}

// -----

// A row-wise partial's gradient gathered back inside a group that does not
// tile the cluster: whether this rank gathers is computed from its rank,
// and so is its row count (a rank in no group keeps its own rows).
// CHECK-LABEL: func.func @gather
// CHECK: call @braidrt_rank() : () -> i64
// CHECK: %[[MEMBER:.*]] = arith.ori
// CHECK: %[[ROWS:.*]] = arith.select %[[MEMBER]]
// CHECK: memref.alloc(%[[ROWS]]) : memref<?x4xf32>
// CHECK: call @braidrt_all_gather_f32({{.*}}, %c2_i64, {{.*}}) : (memref<*xf32>, memref<*xf32>, i64, i32) -> ()
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 2, ranks_per_node = 2>} {
func.func @gather(%p: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %g = braid.all_gather %p dim = 0 groups [[2, 3]] : tensor<?x4xf32> -> tensor<?x4xf32>
  return %g : tensor<?x4xf32>
}
}
