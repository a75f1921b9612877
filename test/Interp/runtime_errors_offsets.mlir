// RUN: rm -rf %t && mkdir -p %t/w
// RUN: %python %S/Inputs/make_table.py %t/w t 4 2
// RUN: %python %S/Inputs/write_npy.py %t/a/idx.npy "[0, 1, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/a/off.npy "[0, 2, 1]" int64
// RUN: not braid-run %s --reference --weights %t/w --inputs %t/a 2>&1 | FileCheck %s --check-prefix=CHECK-DECREASE
// RUN: %python %S/Inputs/write_npy.py %t/b/idx.npy "[0, 1, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/b/off.npy "[1, 2, 3]" int64
// RUN: not braid-run %s --reference --weights %t/w --inputs %t/b 2>&1 | FileCheck %s --check-prefix=CHECK-START
// RUN: %python %S/Inputs/write_npy.py %t/c/idx.npy "[0, 1, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/c/off.npy "[0, 1, 2]" int64
// RUN: not braid-run %s --reference --weights %t/w --inputs %t/c 2>&1 | FileCheck %s --check-prefix=CHECK-LAST
// RUN: %python %S/Inputs/write_npy.py %t/d/idx.npy "[0, -1, 2]" int64
// RUN: %python %S/Inputs/write_npy.py %t/d/off.npy "[0, 1, 3]" int64
// RUN: not braid-run %s --reference --weights %t/w --inputs %t/d 2>&1 | FileCheck %s --check-prefix=CHECK-NEGATIVE
// RUN: %python %S/Inputs/write_npy.py %t/e/idx.npy "[0.5]" float32
// RUN: %python %S/Inputs/write_npy.py %t/e/off.npy "[0, 1, 1]" int64
// RUN: not braid-run %s --reference --weights %t/w --inputs %t/e 2>&1 | FileCheck %s --check-prefix=CHECK-KIND
// RUN: %python %S/Inputs/write_npy.py %t/f/idx.npy "[0]" int64
// RUN: %python %S/Inputs/write_npy.py %t/f/off.npy "[0, 1]" int64
// RUN: not braid-run %s --reference --weights %t/w --inputs %t/f 2>&1 | FileCheck %s --check-prefix=CHECK-SHAPE
// RUN: not braid-run %s --reference --weights %t/w --inputs %t/missing-dir 2>&1 | FileCheck %s --check-prefix=CHECK-NODIR
// RUN: mkdir -p %t/g && not braid-run %s --reference --weights %t/w --inputs %t/g 2>&1 | FileCheck %s --check-prefix=CHECK-NOFILE
// RUN: mkdir -p %t/h && cp %t/a/off.npy %t/h/off.npy && printf 'garbage' > %t/h/idx.npy
// RUN: not braid-run %s --reference --weights %t/w --inputs %t/h 2>&1 | FileCheck %s --check-prefix=CHECK-GARBAGE
// RUN: not braid-run %s --reference --weights %t 2>&1 | FileCheck %s --check-prefix=CHECK-NOTABLE

braid.table @t : tensor<4x2xf32> pooling_factor = 1.0

// CHECK-DECREASE: error: offsets must not decrease, but offsets[2] = 1 < offsets[1] = 2
// CHECK-START: error: offsets must start at 0, got 1
// CHECK-LAST: error: the last offset must be the number of indices (3), got 2
// CHECK-NEGATIVE: error: index -1 at position 1 is out of range for table 't' with 4 rows
// CHECK-KIND: error: {{.*}}idx.npy: holds tensor<1xf32> but 'tensor<?xi64>' is expected
// CHECK-SHAPE: error: {{.*}}off.npy: holds tensor<2xi64> but 'tensor<3xi64>' is expected
// CHECK-NODIR: braid-run: error: '{{.*}}missing-dir' is not a directory
// CHECK-NOFILE: error: missing file {{.*}}idx.npy for argument 0 'idx'
// CHECK-GARBAGE: error: {{.*}}idx.npy: not a .npy file (bad magic string)
// CHECK-NOTABLE: error: missing weights file {{.*}}t.npy for table 't'
func.func @forward(%idx: tensor<?xi64> {braid.input = "idx"}, %off: tensor<3xi64> {braid.input = "off"}) -> tensor<2x2xf32> {
  %r = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<3xi64>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
