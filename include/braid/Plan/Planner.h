//===- Planner.h - Embedding sharding planner -------------------*- C++ -*-===//
//
// This file declares the sharding planner's core: a planning problem (tables,
// batch, cluster), plans in TorchRec's vocabulary (table_wise, row_wise,
// column_wise, table_row_wise, data_parallel), the cost of a plan under the
// cost model, the greedy baselines of the published benchmarks, Braid's
// search, and a provable lower bound on the iteration time.
//
// The cost is the forward pass of the embedding stage, as the partitioner
// will lay it out: an all_to_all of indices to the shard owners, the lookups,
// an all_to_all of pooled rows back to the samples' ranks, and a
// reduce_scatter for row-wise partial sums. Dense layers are data-parallel
// and identical in every plan, so they are left out of the comparison.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_PLAN_PLANNER_H
#define BRAID_PLAN_PLANNER_H

#include "braid/Cluster/Hardware.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::braid::sim {
struct SimOp;
} // namespace mlir::braid::sim

namespace mlir::braid::plan {

struct TableSpec {
  std::string name;
  int64_t rows = 0, dim = 0;
  int64_t elementBytes = 4;
  double poolingFactor = 0;
  double uniqueRatio = 1;
  /// Looked up with max pooling: a training step does not split its rows
  /// (a maximum tied across row shards trains differently from the global
  /// step, docs/design.md "Known limits").
  bool maxPooled = false;
  double bytes() const { return double(rows) * dim * elementBytes; }
};

struct PlanProblem {
  std::vector<TableSpec> tables;
  /// The global batch; each rank holds batch / ranks samples.
  int64_t batch = 0;
  cluster::HardwareDesc hw;
  int64_t nodes = 1, ranksPerNode = 1;
  /// Memory kept free on each rank for activations and buffers.
  double reserveBytes = 0;
  /// Price the training step rather than the forward pass: each shard's
  /// backward fused with the embedding optimizer (`embeddingOptimizer`:
  /// sgd, adagrad or rowwise_adagrad), the pooled gradients' exchange back
  /// to the owners, an all_gather for row-wise partials, one all_reduce of
  /// every data-parallel table's whole gradient; memory counts the
  /// optimizer state, data-parallel tables' gradients and the owners'
  /// pooled activations and their gradients.
  bool training = false;
  std::string embeddingOptimizer = "sgd";
  int64_t ranks() const { return nodes * ranksPerNode; }
  double capacityBytes() const {
    return hw.device.memoryCapacityGB * 1e9 - reserveBytes;
  }
};

/// The memory kept free for activations and exchange buffers by default:
/// a tenth of the device's capacity (8 GB of an 80 GB H100).
double defaultReserveBytes(const cluster::HardwareDesc &hw);

enum class ShardingType { table_wise, row_wise, column_wise, table_row_wise, data_parallel };
llvm::StringRef stringifyShardingType(ShardingType type);
std::optional<ShardingType> symbolizeShardingType(llvm::StringRef name);

struct Shard {
  int64_t rank = 0, rowOffset = 0, rows = 0, colOffset = 0, cols = 0;
};

struct TablePlan {
  ShardingType type = ShardingType::table_wise;
  std::vector<Shard> shards;
};

struct Plan {
  std::string planner;
  std::vector<TablePlan> tables; ///< in problem order
};

struct PlanCost {
  /// The embedding stage: the forward pass, or with problem.training the
  /// training step's forward and backward.
  double iterationUs = 0;
  std::vector<double> perRankUs;     ///< lookups + communication, per rank
  /// Table shards per rank; training adds optimizer state, gradients and
  /// activations.
  std::vector<double> memoryBytes;
  /// The fused lookups per rank; training adds the backward updates.
  std::vector<double> lookupUs;
  double indexExchangeUs = 0, outputExchangeUs = 0, reduceScatterUs = 0;
  /// Training only: the pooled gradients' all_to_all, the row-wise
  /// gradients' all_gathers and the data-parallel tables' all_reduce.
  double gradientExchangeUs = 0, allGatherUs = 0, dataParallelAllReduceUs = 0;
  bool fitsMemory = true;
};

/// Lookup time of one shard in microseconds, launch excluded (all shards of
/// a rank run in one fused kernel, as FBGEMM's table-batched embedding does).
double shardLookupUs(const PlanProblem &problem, const TableSpec &table,
                     ShardingType type, const Shard &shard);

/// A shard's backward fused with the embedding optimizer, in
/// microseconds, launch excluded (training only): each looked-up row read
/// and written once with its optimizer state; for a data-parallel table,
/// also a pass over its whole gradient, table and state.
double shardBackwardUs(const PlanProblem &problem, const TableSpec &table,
                       ShardingType type, const Shard &shard);

/// The bytes a shard takes on its rank: its rows, and when training its
/// optimizer state, a data-parallel table's gradient and all_reduce buffer,
/// and the pooled activations it produces with their gradients.
double shardMemoryBytes(const PlanProblem &problem, const TableSpec &table,
                        ShardingType type, const Shard &shard);

/// The bytes `table` takes held whole on one rank (table-wise): its rows
/// and, when training, its optimizer state and activations. The planners'
/// capacity checks count a table at this, not at its rows alone.
double tableMemoryBytes(const PlanProblem &problem, const TableSpec &table);

/// The cost of `plan` under the cost model.
PlanCost evaluatePlan(const PlanProblem &problem, const Plan &plan);

/// The cost keys of the greedy baselines (embedding_sharding_benchmark_
/// protocols.json): size = bytes, dim, dim * pooling, dim * pooling *
/// log10(rows).
enum class GreedyKey { size, dim, dim_pooling, dim_pooling_logrows };
/// Every key, in the order the benchmarks report them.
inline constexpr GreedyKey kGreedyKeys[] = {GreedyKey::size, GreedyKey::dim,
                                            GreedyKey::dim_pooling,
                                            GreedyKey::dim_pooling_logrows};
std::optional<GreedyKey> symbolizeGreedyKey(llvm::StringRef name);
llvm::StringRef stringifyGreedyKey(GreedyKey key);

/// Table-wise greedy: tables by key, descending, each on the rank with the
/// smallest accumulated key whose memory still fits (ties: smaller
/// accumulated size). Fails when a table fits nowhere.
llvm::Expected<Plan> planGreedy(const PlanProblem &problem, GreedyKey key);

/// The fastest of the four greedy plans that fit memory, under the full
/// cost model (ties: the earlier key); nothing when none fits.
std::optional<Plan> planBestGreedy(const PlanProblem &problem);

/// Braid's planner: greedy construction on the cost model over all sharding
/// types, then local search on the bottleneck rank. Deterministic.
llvm::Expected<Plan> planBraid(const PlanProblem &problem);

/// A lower bound on evaluatePlan(...).iterationUs over every feasible plan.
double lowerBoundUs(const PlanProblem &problem);

/// A dense layer [batch, in] x [out, in]^T, costed three ways on the
/// problem's cluster (batch split over the ranks, as the partitioner lays
/// it out):
///   - data-parallel: each rank multiplies its ceil(batch / R) rows;
///   - column (output features split): an all_gather of the inputs, the
///     whole batch times ceil(out / R) features, and an all_to_all sending
///     each rank its rows;
///   - row (input features split): an all_to_all giving each rank every
///     row's ceil(in / R) features, the whole batch's partial products, and
///     a reduce_scatter summing them into each rank's rows.
struct DenseLayerCost {
  double dataParallelUs = 0, columnUs = 0, rowUs = 0;
};
DenseLayerCost estimateDenseLayer(const PlanProblem &problem, int64_t out,
                                  int64_t in, llvm::StringRef dtype);

/// A Megatron-style pair of dense layers, [out1 x in1] then [out2 x out1],
/// priced data-parallel and as braid-partition lays out a column-parallel
/// layer feeding a row-parallel one: an all_gather of the inputs, both
/// GEMMs on the whole batch with 1/R of the hidden features, and the
/// partial sums reduced to each rank's rows (a reduce_scatter, or an
/// all_reduce where the collective model prices that lower).
struct DenseBlockCost {
  /// The forward pass.
  double dataParallelUs = 0, tensorParallelUs = 0;
  /// A training step (forward, backward and the gradients' exchanges):
  /// data-parallel, the weights' gradients all-reduced; tensor-parallel
  /// with the parameters stored as blocks, the activations' exchanges
  /// reversed and only the row layer's bias gradient all-reduced.
  double trainingDataParallelUs = 0, trainingTensorParallelUs = 0;
};
DenseBlockCost estimateDenseBlock(const PlanProblem &problem, int64_t in1,
                                  int64_t out1, int64_t out2,
                                  llvm::StringRef dtype);

/// Every table in one sharding type (for tests); table-wise goes round robin.
llvm::Expected<Plan> planForced(const PlanProblem &problem, ShardingType type);

/// The embedding stage of a costed plan as a simulator schedule: on every
/// rank the index all_to_all, the fused lookups, the output all_to_all and
/// the row-wise reduce_scatter, in order, each collective synchronized
/// across ranks. This is the planner's abstraction, not a program: its
/// makespan is the plan's embedding-stage time.
std::vector<sim::SimOp> buildPlanSchedule(const PlanCost &cost);

} // namespace mlir::braid::plan

#endif // BRAID_PLAN_PLANNER_H
