// A pipelined form whose carried argument its input distribution function
// does not return cannot be simulated: braid-sim says which, where.
// RUN: not braid-sim %s --function forward_pipelined 2>&1 | FileCheck %s
// CHECK: pipeline_input_dist_unbound.mlir:[[@LINE+8]]:{{[0-9]+}}: error: the carried argument 'carried.7' is no result of @forward_input_dist

module attributes {braid.batch_split = array<i64: 2, 2>, braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>} {
  func.func @forward_input_dist(%ai: tensor<?xi64> {braid.input = "a.indices"}) -> (tensor<?xi64> {braid.carried = "carried.0"}) {
    return %ai : tensor<?xi64>
  }
  func.func @forward_pipelined(%ai: tensor<?xi64> {braid.input = "a.indices"},
                               %next: tensor<?xi64> {braid.next_input = "a.indices"},
                               %c: tensor<?xi64> {braid.carried = "carried.7"})
      -> (tensor<?xi64>, tensor<?xi64> {braid.carried = "carried.0"})
      attributes {braid.input_dist = @forward_input_dist} {
    return %c, %next : tensor<?xi64>, tensor<?xi64>
  }
}
