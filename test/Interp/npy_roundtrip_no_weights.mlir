// RUN: rm -rf %t
// RUN: braid-run %s --reference --seed 7 --dump %t > %t.first
// RUN: braid-run %s --reference --inputs %t/inputs --weights %t/weights > %t.second
// RUN: FileCheck %s < %t.first
// RUN: grep "result 0" %t.first > %t.first.result
// RUN: grep "result 0" %t.second | diff %t.first.result -

// A program with no parameter or table: --dump still makes DIR/weights, so
// the re-run the README gives (--weights DIR/weights) works (it failed with
// "'DIR/weights' is not a directory").
// CHECK: rank 0 result 0: tensor<4xf32> sum=
func.func @forward(%x: tensor<4xf32> {braid.input = "x"}) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
