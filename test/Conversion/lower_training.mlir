

// -----

// A layer's backward with relu: its derivative (the result's mask) is one
// elementwise linalg.generic over the [B, out] elements as one dimension;
// the bias gradient an scf.forall over blocks of adjacent columns (here the
// layer's 4, in bounds), each summing g's rows down the batch as one vector
// of f64 accumulators and rounding once; the runtime then runs the two
// GEMMs on g. Nothing of it is a runtime loop over the activations.
// CHECK-LABEL: func.func @relu_grad
// CHECK: %[[FG:.*]] = tensor.collapse_shape %arg3 {{\[}}[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
// CHECK: %[[FY:.*]] = tensor.collapse_shape %arg2 {{\[}}[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[FG]], %[[FY]] : tensor<?xf32>, tensor<?xf32>)
// CHECK: ^bb0(%[[DY:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[Y]], %{{.*}} : f32
// CHECK: arith.select %[[POS]], %[[DY]], %{{.*}} : f32
// CHECK: %[[G:.*]] = tensor.expand_shape %[[MASKED]] {{\[}}[0, 1]] output_shape [%{{.*}}, 4] : tensor<?xf32> into tensor<?x4xf32>
// CHECK: %[[GB:.*]] = bufferization.to_buffer %[[G]] read_only : tensor<?x4xf32> to memref<?x4xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4xf32>
// CHECK: scf.forall (%[[BLOCK:.*]]) in (%{{.*}}) {
// CHECK: %[[COL:.*]] = arith.muli %[[BLOCK]], %{{.*}} : index
// CHECK: %[[SUM:.*]] = scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<4xf64>) {
// CHECK: %[[E:.*]] = vector.transfer_read %[[GB]][%[[ROW]], %[[COL]]], %{{.*}} {in_bounds = [true]} : memref<?x4xf32>, vector<4xf32>
// CHECK: %[[WIDE:.*]] = arith.extf %[[E]] : vector<4xf32> to vector<4xf64>
// CHECK: arith.addf %[[ACC]], %[[WIDE]] : vector<4xf64>
// CHECK: %[[NARROW:.*]] = arith.truncf %[[SUM]] : vector<4xf64> to vector<4xf32>
// CHECK: vector.transfer_write %[[NARROW]], %[[OUT]][%[[COL]]] {in_bounds = [true]} : vector<4xf32>, memref<4xf32>
// CHECK: %[[DB:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: bufferization.to_buffer %[[G]] read_only
// CHECK: call @braidrt_linear_grad_gemms_f32(
// CHECK: return %{{.*}}, %{{.*}}, %[[DB]] :
func.func @relu_grad(%x: tensor<?x3xf32>, %w: tensor<4x3xf32>, %y: tensor<?x4xf32>, %dy: tensor<?x4xf32>) -> (tensor<?x3xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy relu : (tensor<?x3xf32>, tensor<4x3xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x3xf32>, tensor<4x3xf32>, tensor<4xf32>)
  return %dx, %dw, %db : tensor<?x3xf32>, tensor<4x3xf32>, tensor<4xf32>
}

// -----

// Sigmoid's derivative from its output, as the reference computes it:
// (dy * y) * (1 - y) in f64, rounded once.
// CHECK-LABEL: func.func @sigmoid_grad
// CHECK: linalg.generic
// CHECK: ^bb0(%[[DY:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[WDY:.*]] = arith.extf %[[DY]] : f32 to f64
// CHECK: %[[WY:.*]] = arith.extf %[[Y]] : f32 to f64
// CHECK: %[[P:.*]] = arith.mulf %[[WDY]], %[[WY]] : f64
// CHECK: %[[C:.*]] = arith.subf %{{.*}}, %[[WY]] : f64
// CHECK: %[[S:.*]] = arith.mulf %[[P]], %[[C]] : f64
// CHECK: %[[N:.*]] = arith.truncf %[[S]] : f64 to f32
// CHECK: linalg.yield %[[N]] : f32
// CHECK: call @braidrt_linear_grad_gemms_f32(
func.func @sigmoid_grad(%x: tensor<8x3xf32>, %w: tensor<1x3xf32>, %y: tensor<8x1xf32>, %dy: tensor<8x1xf32>) -> (tensor<8x3xf32>, tensor<1x3xf32>, tensor<1xf32>) {
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy sigmoid : (tensor<8x3xf32>, tensor<1x3xf32>, tensor<8x1xf32>, tensor<8x1xf32>) -> (tensor<8x3xf32>, tensor<1x3xf32>, tensor<1xf32>)
  return %dx, %dw, %db : tensor<8x3xf32>, tensor<1x3xf32>, tensor<1xf32>
}

// RUN: braid-opt %s --convert-braid-to-cpu --split-input-file | FileCheck %s
// RUN: braid-opt %s --convert-braid-to-cpu=bias-grad-columns=1 --split-input-file | FileCheck %s --check-prefix=COLUMN
// RUN: not braid-opt %s --convert-braid-to-cpu=bias-grad-columns=0 --split-input-file 2>&1 | FileCheck %s --check-prefix=NO-COLUMNS
// RUN: not braid-opt %s --convert-braid-to-cpu=bias-grad-columns=257 --split-input-file 2>&1 | FileCheck %s --check-prefix=TOO-MANY-COLUMNS
// NO-COLUMNS: convert-braid-to-cpu: bias-grad-columns must be in [1, 256], got 0
// TOO-MANY-COLUMNS: convert-braid-to-cpu: bias-grad-columns must be in [1, 256], got 257

// A fused update of a whole table (one rank): the table argument becomes
// writable (the runtime updates it in place, step after step), the
// optimizer's state is a trailing argument named after the table, and the
// update is one runtime call with the bags' offsets (bounds_are_lengths 0)
// and the optimizer's number, lr and eps. The forward lookup still reads
// the table read-only.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<10x4xf32> {braid.table = "t", bufferization.writable = true}
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<?xf32> {braid.table_state = "t", bufferization.writable = true}
// CHECK: call @__braid_train_step_embedding_bag_t({{.*}}, %[[T]])
// CHECK-DAG: %[[TB:.*]] = bufferization.to_buffer %[[T]] : tensor<10x4xf32> to memref<10x4xf32>
// CHECK-DAG: %[[SB:.*]] = bufferization.to_buffer %[[S]] : tensor<?xf32> to memref<?xf32>
// CHECK-DAG: %[[NOT_LENGTHS:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ROWWISE:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[LR:.*]] = arith.constant 5.000000e-02 : f64
// CHECK: call @braidrt_bag_update_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NOT_LENGTHS]], %{{.*}}, %{{.*}}, %[[ROWWISE]], %[[LR]], %{{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i32, memref<*xf32>, i32, i32, f64, f64) -> ()
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
// bags' lengths (bounds_are_lengths 1), and the f16 kernel.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<?x?xf16> {braid.table = "t", bufferization.writable = true}
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<?x?xf32> {braid.table_state = "t", bufferization.writable = true}
// CHECK-DAG: %[[LENGTHS:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[ADAGRAD:.*]] = arith.constant 1 : i32
// CHECK: call @braidrt_bag_update_f16({{.*}}, %[[LENGTHS]], {{.*}}, %[[ADAGRAD]], {{.*}}) : (memref<*xf16>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i32, memref<*xf32>, i32, i32, f64, f64) -> ()
braid.table @t : tensor<10x4xf16> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 5, 10]>
func.func @train_step(%vals: tensor<?xi64> {braid.input = "v"},
                      %lens: tensor<8xi64> {braid.input = "l"},
                      %g: tensor<8x4xf32> {braid.input = "g"}) {
  braid.shard_embedding_bag_update @t(%vals, %lens, %g) sum optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : tensor<?xi64>, tensor<8xi64>, tensor<8x4xf32>
  return
}

// -----

// SGD keeps no state: no state argument; the table's own buffer stands in
// for it (the runtime does not read it).
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

// The loss and a layer's GEMMs: runtime calls into fresh buffers. The
// dense optimizer step is a generated kernel: Adam checks its step number
// on the host (the runtime's error below 1) and computes the bias
// corrections 1 - beta^step once; then one elementwise linalg.generic over
// the parameter's elements as one dimension (a GPU maps it onto blocks of
// threads) takes the parameter, gradient and both moments, computes in
// f64 and yields the new parameter and moments rounded to f32. No runtime
// optimizer call.
// CHECK-LABEL: func.func @dense
// CHECK: call @braidrt_bce_with_logits({{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, f64) -> ()
// Nothing reads the input's gradient here: an empty placeholder for dx,
// and the weight's GEMM alone (parts = 2, braidrt_grad_parts). Without an
// activation, g is the result's gradient itself, and nothing reads the
// bias gradient: no kernel at all, only the runtime's GEMM.
// CHECK: memref.alloc() : memref<0x0xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: scf.forall
// CHECK: %[[WEIGHT:.*]] = arith.constant 2 : i32
// CHECK: call @braidrt_linear_grad_gemms_f32({{.*}}, %[[WEIGHT]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32) -> ()
// CHECK: %[[STEP:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK: %[[BAD:.*]] = arith.cmpi slt, %[[STEP]], %{{.*}} : i64
// CHECK: scf.if %[[BAD]] {
// CHECK: func.call @braidrt_step_error(%[[STEP]]) : (i64) -> ()
// CHECK: %[[T:.*]] = arith.sitofp %[[STEP]] : i64 to f64
// CHECK: %[[P1:.*]] = math.powf %{{.*}}, %[[T]] : f64
// CHECK: %[[C1:.*]] = arith.subf %{{.*}}, %[[P1]] : f64
// CHECK: %[[P2:.*]] = math.powf %{{.*}}, %[[T]] : f64
// CHECK: %[[C2:.*]] = arith.subf %{{.*}}, %[[P2]] : f64
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(
// CHECK: %[[M:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: %[[V:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.divf %{{.*}}, %[[C1]] : f64
// CHECK: arith.divf %{{.*}}, %[[C2]] : f64
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: %[[W:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: linalg.yield %[[W]], %[[M]], %[[V]] : f32, f32, f32
// CHECK-COUNT-3: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
// CHECK-NOT: braidrt_dense_update
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
// dot: one feature's gradient at a time, a block of up to 16 columns at a
// time, the other features in ascending order (columns 4, 5, 6 are the
// pairs (1, 0), (2, 0), (2, 1), each read and widened once per sample),
// each feature read again where it is used.
// CHECK: %[[DDOT:.*]] = bufferization.to_buffer %arg3 read_only
// CHECK-DAG: %[[D:.*]] = bufferization.to_buffer %arg4 read_only
// CHECK-DAG: %[[E:.*]] = bufferization.to_buffer %arg5 read_only
// CHECK-DAG: %[[F:.*]] = bufferization.to_buffer %arg6 read_only
// CHECK-DAG: %[[GD:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK-DAG: %[[GE:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK-DAG: %[[GF:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: scf.forall (%[[T:.*]]) in
// CHECK: %[[OWN:.*]] = vector.transfer_read %[[DDOT]][%[[T]], %{{.*}}]{{.*}} vector<4xf32>
// CHECK: %[[OWN64:.*]] = arith.extf %[[OWN]] : vector<4xf32> to vector<4xf64>
// CHECK: %[[L4:.*]] = memref.load %[[DDOT]][%[[T]], %c4]
// CHECK: %[[P4:.*]] = arith.extf %[[L4]] : f32 to f64
// CHECK: vector.transfer_read %[[E]][%[[T]]
// CHECK: %[[D1:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[OWN64]] : vector<4xf64>
// CHECK: %[[L5:.*]] = memref.load %[[DDOT]][%[[T]], %c5]
// CHECK: %[[P5:.*]] = arith.extf %[[L5]] : f32 to f64
// CHECK: vector.transfer_read %[[F]][%[[T]]
// CHECK: %[[D2:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[D1]] : vector<4xf64>
// CHECK: %[[D32:.*]] = arith.truncf %[[D2]] : vector<4xf64> to vector<4xf32>
// CHECK: vector.transfer_write %[[D32]], %[[GD]][%[[T]]
// CHECK: %[[ZE:.*]] = arith.constant dense<0.000000e+00> : vector<4xf64>
// CHECK: %[[S4:.*]] = vector.broadcast %[[P4]] : f64 to vector<4xf64>
// CHECK: vector.transfer_read %[[D]][%[[T]]
// CHECK: %[[E1:.*]] = vector.fma %[[S4]], %{{.*}}, %[[ZE]] : vector<4xf64>
// CHECK: memref.load %[[DDOT]][%[[T]], %c6]
// CHECK: vector.transfer_read %[[F]][%[[T]]
// CHECK: %[[E2:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[E1]] : vector<4xf64>
// CHECK: vector.transfer_write %{{.*}}, %[[GE]][%[[T]]
// CHECK: %[[ZF:.*]] = arith.constant dense<0.000000e+00> : vector<4xf64>
// CHECK: %[[S5:.*]] = vector.broadcast %[[P5]] : f64 to vector<4xf64>
// CHECK: vector.transfer_read %[[D]][%[[T]]
// CHECK: %[[F1:.*]] = vector.fma %[[S5]], %{{.*}}, %[[ZF]] : vector<4xf64>
// CHECK-NOT: memref.load
// CHECK: vector.transfer_read %[[E]][%[[T]]
// CHECK: %[[F2:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[F1]] : vector<4xf64>
// CHECK: vector.transfer_write %{{.*}}, %[[GF]][%[[T]]
// CHECK: }
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

// combine_shards' backward of a column-wise table, a generated kernel: the
// parts are the column shards in rank order (offsets [0, 1], widths
// [1, 3]); a local bag count above bags_per_rank is the runtime's error;
// then a tensor.generate over the received layout [2 parts x 4 slots, 3]
// reads the result's gradient only for a bag's own columns of its part and
// scales it by 1 / the bag's size in f64 (zero for an empty mean bag, past
// the local bags and past the part's columns).
// CHECK-LABEL: func.func @combine
// CHECK-DAG: %[[OFFSETS:.*]] = arith.constant dense<[0, 1]> : tensor<2xindex>
// CHECK-DAG: %[[WIDTHS:.*]] = arith.constant dense<[1, 3]> : tensor<2xindex>
// CHECK: %[[BAGS:.*]] = arith.subi
// CHECK: %[[TOO_MANY:.*]] = arith.cmpi sgt, %[[BAGS]], %c4 : index
// CHECK: scf.if %[[TOO_MANY]] {
// CHECK: func.call @braidrt_bags_error(
// CHECK: tensor.generate
// CHECK: ^bb0(%[[ROW:.*]]: index, %[[COL:.*]]: index):
// CHECK: %[[PART:.*]] = arith.divui %[[ROW]], %{{.*}} : index
// CHECK: %[[BAG:.*]] = arith.remui %[[ROW]], %{{.*}} : index
// CHECK: tensor.extract %[[WIDTHS]][%[[PART]]]
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: %[[OFF:.*]] = tensor.extract %[[OFFSETS]][%[[PART]]]
// CHECK: %[[AT:.*]] = arith.addi %[[OFF]], %[[COL]] : index
// CHECK: tensor.extract %{{.*}}[%[[BAG]], %[[AT]]] : tensor<?x4xf32>
// CHECK: arith.mulf %{{.*}} : f64
// CHECK: arith.select
// CHECK: } else {
// CHECK: } : tensor<8x3xf32>
// CHECK-NOT: braidrt_combine_shards_grad
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

// -----

// A layer of 20 columns: blocks of 16, the last one past the end, so its
// reads give 0 there and its write stops at the end (transfers not in
// bounds). With bias-grad-columns=1 (the CUDA target's), a thread per column.
// CHECK-LABEL: func.func @wide_grad
// CHECK: scf.forall
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : memref<?x20xf32>, vector<16xf32>
// CHECK: vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}] : vector<16xf32>, memref<20xf32>
// COLUMN-LABEL: func.func @wide_grad
// COLUMN: vector.transfer_read %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<?x20xf32>, vector<1xf32>
// COLUMN: arith.addf %{{.*}}, %{{.*}} : vector<1xf64>
// COLUMN: vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}] {in_bounds = [true]} : vector<1xf32>, memref<20xf32>
func.func @wide_grad(%x: tensor<?x3xf32>, %w: tensor<20x3xf32>, %y: tensor<?x20xf32>, %dy: tensor<?x20xf32>) -> (tensor<?x3xf32>, tensor<20x3xf32>, tensor<20xf32>) {
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy none : (tensor<?x3xf32>, tensor<20x3xf32>, tensor<?x20xf32>, tensor<?x20xf32>) -> (tensor<?x3xf32>, tensor<20x3xf32>, tensor<20xf32>)
  return %dx, %dw, %db : tensor<?x3xf32>, tensor<20x3xf32>, tensor<20xf32>
}
