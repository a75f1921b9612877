//===- Passes.td - Braid's co-optimization passes ----------*- tablegen -*-===//
//
// This file declares the passes that co-optimize a per-rank program's
// communication with its computation. The reference
// (docs/reference/BraidCoOptPasses.md) is generated from these
// descriptions.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_COOPT_PASSES_TD
#define BRAID_COOPT_PASSES_TD

include "mlir/Pass/PassBase.td"

def BraidAsyncExchangesPass
    : Pass<"braid-async-exchanges", "::mlir::func::FuncOp"> {
  let summary = "starts the pooled-row exchanges early and waits at first use";
  let description = [{
    For every `braid.combine_shards` whose received rows come straight from
    a synchronous `braid.all_to_all` or `braid.reduce_scatter` (the output
    exchange `braid-partition` emits for a sharded lookup), replaces that
    exchange with its `_start` form where it stood and a `braid.wait`, and
    moves the wait and the `combine_shards` to just before the first use of
    the combined embedding. The routing and lookups of the tables that
    follow then run while the exchange is in flight; the simulator puts
    the started exchange on the communication stream.

    The rewrite only moves the completion of an exchange later in program
    order: every rank still enters the same collectives in the same order,
    so the result is unchanged (lit tests run partitioned programs before
    and after it against the reference semantics).

    ```mlir
    %r = braid.reduce_scatter sum %p dim = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
    %e = braid.combine_shards @t(%r, %off) sum bags_per_rank = 4 : ...
    // becomes
    %tok = braid.reduce_scatter_start sum %p dim = 0 : tensor<8x16xf32>
        -> !braid.token<tensor<4x16xf32>>
    ... // later lookups
    %r = braid.wait %tok : tensor<4x16xf32>
    %e = braid.combine_shards @t(%r, %off) sum bags_per_rank = 4 : ...
    ```
  }];
  let statistics = [
    Statistic<"numStarted", "exchanges-started",
              "Exchanges turned into start/wait pairs">,
  ];
  let dependentDialects = ["::mlir::braid::BraidDialect"];
}

#endif // BRAID_COOPT_PASSES_TD
