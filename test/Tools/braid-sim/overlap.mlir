// RUN: braid-sim %s --hardware dgx-h100 --ranks 8 --json --trace %t.trace.json | FileCheck %s
// RUN: %python -c "import json; t = json.load(open('%t.trace.json')); e = t['traceEvents']; print(len(e), sorted({x['cat'] for x in e}), {x['ph'] for x in e}, max(x['pid'] for x in e))" | FileCheck %s --check-prefix=TRACE

// @forward overlaps a 256 MiB all_reduce with a GEMM through the async
// form: no communication is exposed, and the trace has one event per op and
// rank (start, linear and wait on 8 ranks).
// CHECK: {"iteration_ms":3.732{{[0-9]*}},"mean_per_rank":{"comm_ms":1.101{{[0-9]*}},"compute_ms":3.732{{[0-9]*}},"exposed_comm_ms":0,"hidden_comm_ms":1.101{{[0-9]*}},"idle_ms":0},"per_rank_ms":[3.732{{[0-9]*}},{{.*}}]}
// TRACE: 24 ['comm', 'compute'] {'X'} 7
func.func @forward(%g: tensor<65536x1024xf32>, %x: tensor<4096x4096xf32>, %w: tensor<4096x4096xf32>, %b: tensor<4096xf32>) -> (tensor<65536x1024xf32>, tensor<4096x4096xf32>) {
  %t = braid.all_reduce_start sum %g : tensor<65536x1024xf32> -> !braid.token<tensor<65536x1024xf32>>
  %h = braid.linear %x, %w, %b relu : tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<4096xf32> -> tensor<4096x4096xf32>
  %r = braid.wait %t : !braid.token<tensor<65536x1024xf32>>
  return %r, %h : tensor<65536x1024xf32>, tensor<4096x4096xf32>
}
