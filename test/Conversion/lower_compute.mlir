// RUN: braid-opt %s --braid-lower-compute --split-input-file | FileCheck %s

// Tables become trailing arguments; every index is checked once (the
// runtime aborts on a row outside the table), then an embedding bag is a
// tensor.generate over (bag, column) looping over the bag's indices.
// CHECK-LABEL: func.func @bags
// CHECK-SAME: (%[[IDX:[a-z0-9]+]]: tensor<?xi64>, %[[OFF:[a-z0-9]+]]: tensor<?xi64>, %[[T:[a-z0-9]+]]: tensor<40x4xf16> {braid.table = "t"}) -> tensor<?x4xf16>
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: scf.for
// CHECK: func.call @braidrt_index_error
// CHECK: tensor.generate
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32)
// CHECK: tensor.extract %[[T]]
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.maximumf
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: func.func private @braidrt_index_error(i64, i64)
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
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @dense
// CHECK-DAG: bufferization.to_buffer %{{.*}} : tensor<?x3xf32> to memref<?x3xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x2xf32>
// CHECK-DAG: %[[ACT:.*]] = arith.constant 2 : i32
// CHECK: call @braidrt_linear_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACT]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32) -> ()
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-LABEL: func.func @dense_f64
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
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

// Interactions: cat is a concatenation; dot concatenates the features and
// computes the dense columns and the pairwise dot products.
// CHECK-LABEL: func.func @interactions
// CHECK: tensor.concat dim(1) {{.*}} -> tensor<?x12xf32>
// CHECK: arith.constant dense<[1, 2, 2]> : tensor<3xindex>
// CHECK: arith.constant dense<[0, 0, 1]> : tensor<3xindex>
// CHECK: tensor.generate
// CHECK: scf.if
// CHECK: scf.for
func.func @interactions(%d: tensor<?x4xf32>, %e0: tensor<?x4xf32>, %e1: tensor<?x4xf32>) -> (tensor<?x12xf32>, tensor<?x7xf32>) {
  %c = braid.interaction cat %d, %e0, %e1 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x12xf32>
  %z = braid.interaction dot %d, %e0, %e1 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x7xf32>
  return %c, %z : tensor<?x12xf32>, tensor<?x7xf32>
}
