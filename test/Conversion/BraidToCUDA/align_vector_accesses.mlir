// RUN: braid-opt %s --pass-pipeline='builtin.module(gpu.module(braid-align-vector-accesses))' | FileCheck %s

// Row transfers become vector loads and stores with the alignment the row
// stride and the column offset (a constant, or a provable multiple) prove (at most 16 bytes, the
// host's buffer contract); the module gets NVPTX's data layout.

// CHECK-LABEL: gpu.module @rows
// CHECK-SAME: llvm.data_layout = "e-p6:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
gpu.module @rows {
  // CHECK-LABEL: gpu.func @f32_rows
  gpu.func @f32_rows(%table: memref<1000x16xf32>, %out: memref<?x16xf32>, %row: index) kernel {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c2 = arith.constant 2 : index
    %pad = arith.constant 0.0 : f32
    // A whole 64-byte row: 16-byte aligned.
    // CHECK: %[[ROW:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1000x16xf32>, vector<16xf32>
    %v = vector.transfer_read %table[%row, %c0], %pad {in_bounds = [true]} : memref<1000x16xf32>, vector<16xf32>
    // Column 4 (16 bytes in): still 16.
    // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<1000x16xf32>, vector<4xf32>
    %w = vector.transfer_read %table[%row, %c4], %pad {in_bounds = [true]} : memref<1000x16xf32>, vector<4xf32>
    // Column 2 (8 bytes in): 8.
    // CHECK: vector.load {{.*}} {alignment = 8 : i64} : memref<1000x16xf32>, vector<2xf32>
    %x = vector.transfer_read %table[%row, %c2], %pad {in_bounds = [true]} : memref<1000x16xf32>, vector<2xf32>
    // CHECK: vector.store %[[ROW]], {{.*}} {alignment = 16 : i64} : memref<?x16xf32>, vector<16xf32>
    vector.transfer_write %v, %out[%row, %c0] {in_bounds = [true]} : vector<16xf32>, memref<?x16xf32>
    gpu.return
  }

  // A column that is a provable multiple: a column group's first column
  // (group * 4, plus a multiple of 8), 16 bytes; group * 2 only 8.
  // CHECK-LABEL: gpu.func @column_groups
  // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<1000x16xf32>, vector<4xf32>
  // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<1000x16xf32>, vector<4xf32>
  // CHECK: vector.load {{.*}} {alignment = 8 : i64} : memref<1000x16xf32>, vector<4xf32>
  // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<1000x16xf32>, vector<4xf32>
  // CHECK: vector.transfer_read {{.*}} : memref<1000x16xf32>, vector<4xf32>
  gpu.func @column_groups(%table: memref<1000x16xf32>, %row: index, %group: index, %other: index) kernel {
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %pad = arith.constant 0.0 : f32
    %first = arith.muli %group, %c4 : index
    %a = vector.transfer_read %table[%row, %first], %pad {in_bounds = [true]} : memref<1000x16xf32>, vector<4xf32>
    %eights = arith.muli %c8, %other : index
    %sum = arith.addi %first, %eights : index
    %b = vector.transfer_read %table[%row, %sum], %pad {in_bounds = [true]} : memref<1000x16xf32>, vector<4xf32>
    %pairs = arith.muli %group, %c2 : index
    %c = vector.transfer_read %table[%row, %pairs], %pad {in_bounds = [true]} : memref<1000x16xf32>, vector<4xf32>
    // Factors whose product passes 2^64: still a multiple of 16 bytes.
    %big = arith.constant 1099511627776 : index
    %wide = arith.muli %group, %big : index
    %wider = arith.muli %wide, %big : index
    %e = vector.transfer_read %table[%row, %wider], %pad {in_bounds = [true]} : memref<1000x16xf32>, vector<4xf32>
    // A sum with an unknown term proves nothing.
    %odd = arith.addi %first, %other : index
    %d = vector.transfer_read %table[%row, %odd], %pad {in_bounds = [true]} : memref<1000x16xf32>, vector<4xf32>
    gpu.return
  }

  // CHECK-LABEL: gpu.func @unprovable
  gpu.func @unprovable(%narrow: memref<?x13xf32>, %view: memref<1x16xf32, strided<[16, 1], offset: ?>>,
                       %row: index, %col: index, %mask: vector<16xi1>) kernel {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    // 52-byte rows: only the element's alignment, so the transfer stays.
    // CHECK: vector.transfer_read %{{.*}} : memref<?x13xf32>, vector<13xf32>
    %a = vector.transfer_read %narrow[%row, %c0], %pad {in_bounds = [true]} : memref<?x13xf32>, vector<13xf32>
    // A dynamic column.
    // CHECK: vector.transfer_read %{{.*}} : memref<?x13xf32>, vector<4xf32>
    %b = vector.transfer_read %narrow[%row, %col], %pad {in_bounds = [true]} : memref<?x13xf32>, vector<4xf32>
    // A view with a dynamic offset.
    // CHECK: vector.transfer_write %{{.*}} : vector<16xf32>, memref<1x16xf32, strided<[16, 1], offset: ?>>
    %c = arith.constant dense<0.0> : vector<16xf32>
    vector.transfer_write %c, %view[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<1x16xf32, strided<[16, 1], offset: ?>>
    // Masked: left alone.
    // CHECK: vector.transfer_read %{{.*}}, %{{.*}}, %{{.*}} : memref<?x13xf32>, vector<16xf32>
    %d = vector.transfer_read %narrow[%row, %c0], %pad, %mask : memref<?x13xf32>, vector<16xf32>
    gpu.return
  }

  // A view of a buffer's first rows (static offset 0, row stride 16) and
  // one at row 1 of 8-float rows (offset 8 floats, 32 bytes): 16 bytes.
  // CHECK-LABEL: gpu.func @views
  // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?x16xf32, strided<[16, 1]>>, vector<16xf32>
  // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?x8xf32, strided<[8, 1], offset: 8>>, vector<8xf32>
  gpu.func @views(%first: memref<?x16xf32, strided<[16, 1]>>, %later: memref<?x8xf32, strided<[8, 1], offset: 8>>, %row: index) kernel {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    %a = vector.transfer_read %first[%row, %c0], %pad {in_bounds = [true]} : memref<?x16xf32, strided<[16, 1]>>, vector<16xf32>
    %b = vector.transfer_read %later[%row, %c0], %pad {in_bounds = [true]} : memref<?x8xf32, strided<[8, 1], offset: 8>>, vector<8xf32>
    gpu.return
  }

  // 16 f16 per row (32 bytes): 16-byte aligned.
  // CHECK-LABEL: gpu.func @f16_rows
  // CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<12x16xf16>, vector<16xf16>
  gpu.func @f16_rows(%table: memref<12x16xf16>, %row: index) kernel {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f16
    %v = vector.transfer_read %table[%row, %c0], %pad {in_bounds = [true]} : memref<12x16xf16>, vector<16xf16>
    gpu.return
  }
}
