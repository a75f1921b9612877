// RUN: braid-opt %s --convert-braid-to-cpu --split-input-file | FileCheck %s

// Tables become trailing arguments and every argument is read-only to
// bufferization (the host calls the program again on the same buffers);
// every index is checked once (the runtime aborts on a row outside the
// table), and so are the offsets. Then a row-major kernel: a forall over the bags, a loop over the
// bag's indices that prefetches the row 16 entries ahead, reads the row as
// one vector, widens f16 to f32 and pools; an empty max bag gives 0; the
// pooled row is narrowed and written once.
// CHECK-LABEL: func.func @bags
// CHECK-SAME: (%[[IDX:[a-z0-9]+]]: tensor<?xi64> {bufferization.writable = false}, %[[OFF:[a-z0-9]+]]: tensor<?xi64> {bufferization.writable = false}, %[[T:[a-z0-9]+]]: tensor<40x4xf16> {braid.table = "t", bufferization.writable = false}) -> tensor<?x4xf16>
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: scf.for
// CHECK: func.call @braidrt_index_error
// The offsets start at 0, end at the number of indices and never decrease.
// CHECK: %[[FIRST:.*]] = arith.index_cast {{.*}} : i64 to index
// CHECK: %[[NONZERO:.*]] = arith.cmpi ne, %[[FIRST]], %c0
// CHECK: scf.if %[[NONZERO]]
// CHECK: func.call @braidrt_offsets_error
// CHECK: %[[NIDX:.*]] = tensor.dim %[[IDX]]
// CHECK: arith.cmpi ne, %{{.*}}, %[[NIDX]]
// CHECK: func.call @braidrt_offsets_error
// CHECK: scf.for
// CHECK: arith.cmpi slt
// CHECK: func.call @braidrt_offsets_error
// CHECK: %[[BUF:.*]] = bufferization.to_buffer %[[T]] read_only : tensor<40x4xf16> to memref<40x4xf16>
// CHECK: scf.forall (%[[BAG:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x4xf16>)
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[OUT]][%[[BAG]], 0] [1, 4] [1, 1]
// CHECK: %[[NEG:.*]] = arith.constant dense<0xFF800000> : vector<4xf32>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[NEG]]) -> (vector<4xf32>)
// CHECK: %[[AHEAD:.*]] = arith.minui
// CHECK: tensor.extract %[[IDX]][%[[AHEAD]]]
// CHECK: memref.prefetch %[[BUF]]
// CHECK: %[[READ:.*]] = vector.transfer_read %[[T]]{{.*}} {in_bounds = [true]} : tensor<40x4xf16>, vector<4xf16>
// CHECK: %[[WIDE:.*]] = arith.extf %[[READ]] : vector<4xf16> to vector<4xf32>
// CHECK: arith.maximumf %[[ACC]], %[[WIDE]] : vector<4xf32>
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: %[[NARROW:.*]] = arith.truncf {{.*}} : vector<4xf32> to vector<4xf16>
// CHECK: %[[WRITTEN:.*]] = vector.transfer_write %[[NARROW]], %[[ROW]]
// CHECK: tensor.parallel_insert_slice %[[WRITTEN]] into %[[OUT]][%[[BAG]], 0] [1, 4] [1, 1]
// CHECK-DAG: func.func private @braidrt_index_error(i64, i64)
// CHECK-DAG: func.func private @braidrt_offsets_error(i64, i64)
// CHECK-NOT: braid.table @
braid.table @t : tensor<40x4xf16> pooling_factor = 2.0
func.func @bags(%idx: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4xf16> {
  %e = braid.embedding_bag @t(%idx, %off) max : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf16>
  return %e : tensor<?x4xf16>
}

// -----

// An f32 linear layer is a call of the runtime's BLAS GEMM on a buffer it
// fills; other element types get a generated contraction with the weight
// in [out, in] layout and an epilogue for bias and activation.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @dense
// CHECK-DAG: bufferization.to_buffer %{{.*}} : tensor<?x3xf32> to memref<?x3xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x2xf32>
// CHECK-DAG: %[[ACT:.*]] = arith.constant 2 : i32
// CHECK: call @braidrt_linear_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACT]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32) -> ()
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-LABEL: func.func @dense_f64
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$W]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: func.func private @braidrt_linear_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32) attributes {llvm.emit_c_interface}
func.func @dense(%x: tensor<?x3xf32>, %w: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<?x2xf32> {
  %y = braid.linear %x, %w, %b sigmoid : tensor<?x3xf32>, tensor<2x3xf32>, tensor<2xf32> -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
func.func @dense_f64(%x: tensor<?x3xf64>, %w: tensor<2x3xf64>, %b: tensor<2xf64>) -> tensor<?x2xf64> {
  %y = braid.linear %x, %w, %b relu : tensor<?x3xf64>, tensor<2x3xf64>, tensor<2xf64> -> tensor<?x2xf64>
  return %y : tensor<?x2xf64>
}

// -----

// Interactions are a forall over the samples that reads each feature row
// as a vector once, from the features' buffers, and writes its result row
// into a fresh buffer that the result tensor wraps: cat writes each vector
// as soon as it is read, side by side (one row live at a time); dot writes the dense vector, then the pairwise dot products
// (i > k, row-major) as one vector. No chain of tensor writes, so a
// thousand-table cat stays cheap to bufferize.
// CHECK-LABEL: func.func @interactions
// CHECK-SAME: (%[[D:[a-z0-9]+]]: {{.*}}, %[[E0:[a-z0-9]+]]: {{.*}}, %[[E1:[a-z0-9]+]]: {{.*}})
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x12xf32>
// CHECK: %[[BD:.*]] = bufferization.to_buffer %[[D]] read_only
// CHECK: %[[B0:.*]] = bufferization.to_buffer %[[E0]] read_only
// CHECK: %[[B1:.*]] = bufferization.to_buffer %[[E1]] read_only
// CHECK: scf.forall (%[[ROW:.*]]) in
// CHECK: %[[CD:.*]] = vector.transfer_read %[[BD]][%[[ROW]],
// CHECK: vector.transfer_write %[[CD]], %[[OUT]][%[[ROW]], %{{.*}}] {{.*}} : vector<4xf32>, memref<?x12xf32>
// CHECK: %[[C0:.*]] = vector.transfer_read %[[B0]][%[[ROW]],
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: vector.transfer_write %[[C0]], %[[OUT]][%[[ROW]], %[[C4]]]
// CHECK: %[[C1:.*]] = vector.transfer_read %[[B1]][%[[ROW]],
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: vector.transfer_write %[[C1]], %[[OUT]][%[[ROW]], %[[C8]]]
// CHECK-NEXT: {{^ *}}}
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<?x12xf32> to tensor<?x12xf32>
// CHECK: %[[DOUT:.*]] = memref.alloc(%{{.*}}) : memref<?x7xf32>
// CHECK: scf.forall (%[[DROW:.*]]) in
// CHECK: %[[DD:.*]] = vector.transfer_read
// CHECK: %[[D0:.*]] = vector.transfer_read
// CHECK: %[[D1:.*]] = vector.transfer_read
// CHECK: vector.transfer_write %[[DD]], %[[DOUT]][%[[DROW]], %{{.*}}]
// CHECK: %[[P10:.*]] = arith.mulf %[[D0]], %[[DD]]
// CHECK: %[[R10:.*]] = vector.reduction <add>, %[[P10]]
// CHECK: %[[P20:.*]] = arith.mulf %[[D1]], %[[DD]]
// CHECK: %[[R20:.*]] = vector.reduction <add>, %[[P20]]
// CHECK: %[[P21:.*]] = arith.mulf %[[D1]], %[[D0]]
// CHECK: %[[R21:.*]] = vector.reduction <add>, %[[P21]]
// CHECK: %[[PAIRS:.*]] = vector.from_elements %[[R10]], %[[R20]], %[[R21]] : vector<3xf32>
// CHECK: vector.transfer_write %[[PAIRS]], %[[DOUT]][%[[DROW]], %{{.*}}] {{.*}} : vector<3xf32>, memref<?x7xf32>
// CHECK: bufferization.to_tensor %[[DOUT]] restrict writable : memref<?x7xf32> to tensor<?x7xf32>
func.func @interactions(%d: tensor<?x4xf32>, %e0: tensor<?x4xf32>, %e1: tensor<?x4xf32>) -> (tensor<?x12xf32>, tensor<?x7xf32>) {
  %c = braid.interaction cat %d, %e0, %e1 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x12xf32>
  %z = braid.interaction dot %d, %e0, %e1 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x7xf32>
  return %c, %z : tensor<?x12xf32>, tensor<?x7xf32>
}

// -----

// Rows wider than 64 lanes are pooled in 64-lane chunks (a loop over the
// chunk's first column, carrying the result row) and a tail vector.
// CHECK-LABEL: func.func @wide
// CHECK: scf.forall
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: scf.for %[[COL:.*]] = %{{.*}} to %[[C128]] step %[[C64]] iter_args(%[[ROW:.*]] = %{{.*}}) -> (tensor<1x136xf32>)
// CHECK: scf.for {{.*}} -> (vector<64xf32>)
// CHECK: vector.transfer_read {{.*}}[%{{.*}}, %[[COL]]]{{.*}} : tensor<60x136xf32>, vector<64xf32>
// CHECK: arith.divf {{.*}} : vector<64xf32>
// CHECK: vector.transfer_write {{.*}}, %[[ROW]][%{{.*}}, %[[COL]]]
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: vector.transfer_read {{.*}} : tensor<60x136xf32>, vector<8xf32>
// CHECK: tensor.parallel_insert_slice {{.*}} : tensor<1x136xf32> into tensor<?x136xf32>
braid.table @w : tensor<60x136xf32> pooling_factor = 3.0
func.func @wide(%idx: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x136xf32> {
  %e = braid.embedding_bag @w(%idx, %off) mean : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x136xf32>
  return %e : tensor<?x136xf32>
}

// -----

// Per-sample weights: their count must match the indices' (a run-time
// check when either is dynamic), then each row is scaled by its weight,
// broadcast to the row's vector, before it is pooled.
// CHECK-LABEL: func.func @weighted
// CHECK-SAME: (%[[IDX:[a-z0-9]+]]: tensor<?xi64> {{.*}}, %[[OFF:[a-z0-9]+]]: tensor<?xi64> {{.*}}, %[[W:[a-z0-9]+]]: tensor<?xf32>
// CHECK: %[[NW:.*]] = tensor.dim %[[W]]
// CHECK: %[[NI:.*]] = tensor.dim %[[IDX]]
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[NW]], %[[NI]] : index
// CHECK: scf.if %[[BAD]]
// CHECK: func.call @braidrt_weights_error
// CHECK: scf.forall
// CHECK: scf.for %[[I:[a-z0-9_]+]] = {{.*}} -> (vector<4xf32>)
// CHECK: %[[ROW:.*]] = vector.transfer_read
// CHECK: %[[WEIGHT:.*]] = tensor.extract %[[W]][%[[I]]]
// CHECK: %[[SPLAT:.*]] = vector.broadcast %[[WEIGHT]] : f32 to vector<4xf32>
// CHECK: %[[SCALED:.*]] = arith.mulf %[[ROW]], %[[SPLAT]] : vector<4xf32>
// CHECK: arith.addf %{{.*}}, %[[SCALED]] : vector<4xf32>
// CHECK: func.func private @braidrt_weights_error(i64, i64)
braid.table @t : tensor<40x4xf32> pooling_factor = 2.0
func.func @weighted(%idx: tensor<?xi64>, %off: tensor<?xi64>, %w: tensor<?xf32>) -> tensor<?x4xf32> {
  %e = braid.embedding_bag @t(%idx, %off, weights %w) sum : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>) -> tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}
