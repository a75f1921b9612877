//===- CoOptSupport.h - What the co-optimization passes share ---*- C++ -*-===//
//
// This file declares what Braid's co-optimization passes share: the
// simulator's prediction of a per-rank function on the cluster its module
// was compiled for, the rule that a rewrite lands only when that prediction
// improves (or when a test forces it), and the start/wait form of a
// synchronous collective.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_PASSES_COOPT_COOPTSUPPORT_H
#define BRAID_PASSES_COOPT_COOPTSUPPORT_H

#include "braid/Cluster/Hardware.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <limits>
#include <optional>

namespace mlir::braid {

/// Predicts per-rank functions of one module with the simulator, on the
/// cluster of the module's `braid.cluster` attribute.
class ProgramPredictor {
public:
  /// A predictor for `module`; fails, with a located error, when the module
  /// names a cluster whose hardware cannot be loaded. A module with no
  /// cluster gets a predictor that predicts nothing (hasCluster() false).
  static FailureOr<ProgramPredictor> forModule(ModuleOp module);

  bool hasCluster() const { return hw.has_value(); }
  /// The ranks of the module's cluster (1 without one).
  int64_t getWorldSize() const { return ranks; }
  /// The simulated makespan of `func` in microseconds, or failure (with
  /// the simulator's located error).
  FailureOr<double> predictUs(func::FuncOp func) const;

private:
  std::optional<cluster::HardwareDesc> hw;
  int64_t ranks = 1, ranksPerNode = 1;
};

/// How a guarded rewrite went.
enum class RewriteOutcome {
  /// Applied: forced, or predicted faster.
  applied,
  /// The rewrite changed nothing.
  unchanged,
  /// Rewritten, but not predicted faster: the function is as it was.
  rejected,
};

/// Applies `rewrite` to a copy of `func`, then keeps the copy's body when
/// `force` is set or when `predictor` predicts the copy faster than `func`
/// (a cluster is needed then; without one nothing is applied). `rewrite`
/// returns whether it changed anything, or failure. Every rank runs the
/// same deterministic choice, so the ranks still agree on their programs.
using FunctionRewrite = std::function<FailureOr<bool>(func::FuncOp)>;
FailureOr<RewriteOutcome> applyIfFaster(func::FuncOp func,
                                        const ProgramPredictor &predictor,
                                        bool force,
                                        const FunctionRewrite &rewrite);

/// Like applyIfFaster with several alternative rewrites: each is applied to
/// its own copy, and the copy predicted fastest is kept when it beats
/// `func`. `force` keeps the first alternative that changes anything.
/// `knownUs`, when given, holds the predicted time of `func` as it is (or
/// nothing, when not known yet) and is left holding that of `func` as it
/// is on return, so that a caller rewriting one candidate after another
/// simulates each program once. `chosen`, when given, is set to the index
/// of the alternative kept (when the outcome is `applied`).
FailureOr<RewriteOutcome>
applyFastestOf(func::FuncOp func, const ProgramPredictor &predictor,
               bool force, ArrayRef<FunctionRewrite> rewrites,
               std::optional<double> *knownUs = nullptr,
               size_t *chosen = nullptr);

/// The predicted time of `func` as `variant` rewrites it, simulated on a
/// copy that is dropped after: a baseline other than the function as it is
/// (for applyFastestOf's `knownUs`).
FailureOr<double>
predictVariantUs(func::FuncOp func, const ProgramPredictor &predictor,
                 llvm::function_ref<void(func::FuncOp)> variant);

/// Rewrites the candidates of `func` one at a time, in program order, each
/// against the program as the ones before it left it. `candidates` lists
/// the positions in the body where a rewrite could apply;
/// `alternativesAt(position)` gives the rewrites of that op to try, each on
/// a copy (applyFastestOf). A rewritten candidate must leave the list; one
/// that stays is skipped. `record(position, outcome)` is told each outcome
/// other than `unchanged`, before the program moves on.
LogicalResult rewriteEachCandidate(
    func::FuncOp func, const ProgramPredictor &predictor, bool force,
    llvm::function_ref<SmallVector<int64_t>(Block &)> candidates,
    llvm::function_ref<SmallVector<FunctionRewrite>(int64_t)> alternativesAt,
    llvm::function_ref<void(int64_t, RewriteOutcome)> record);

/// Whether `groups` (absent: every rank) are the blocks of `size`
/// consecutive ranks that tile a world of `worldSize` ranks, so that a
/// rank's position in its group is `rank mod size`.
bool areConsecutiveBlocks(ReplicaGroupsAttr groups, int64_t size,
                          int64_t worldSize);

/// The index of the function result that `value` feeds, when returning it
/// is its only use.
std::optional<unsigned> returnedOnlyAt(Value value);

/// Whether `update`'s optimizer state is its own, so that a rewrite may
/// change its layout: every state is an argument of its function marked
/// `braid.state` (not yet `braid.state_shard`) that only this step reads,
/// and every new state is only returned, as a `braid.state` result.
bool ownsItsState(DenseUpdateOp update);

/// The first op of `block` that uses a result of any of `ops`, itself or
/// in a region (null: none does).
Operation *firstUserInBlock(ArrayRef<Operation *> ops, Block &block);

/// The table whose rows `op` reads or writes: a lookup's, a max-pooled
/// bag gradient's, an update's. Routing and shard assembly name a table for
/// its placement only.
FlatSymbolRefAttr tableRowsOf(Operation *op);

/// Whether `op` is communication: a collective or an exchange, synchronous
/// or started, or a wait. It writes its results, never a table's rows.
bool communicates(Operation *op);

/// Whether `op` may write the rows of `table`: an op with memory effects
/// that names `table`, an op holding one in its regions, or an op that
/// names no table and writes memory or does not say what it does (a call),
/// which may write any. Communication writes no table. With a null `table`,
/// whether `op` may write memory that no table it names covers.
bool mayWriteRowsOf(Operation *op, FlatSymbolRefAttr table);

/// Whether `op`, or an op nested in its regions, reads or writes the rows
/// of `table` (tableRowsOf).
bool touchesRowsOf(Operation *op, FlatSymbolRefAttr table);

/// The op at `position` in the body of `func`.
Operation *opAt(func::FuncOp func, int64_t position);

/// The positions among `block`'s ops of those `isCandidate` accepts (a
/// pass's candidates for rewriteEachCandidate).
SmallVector<int64_t>
positionsWhere(Block &block, llvm::function_ref<bool(Operation &)> isCandidate);

/// The name of the `_start` form of a synchronous collective, when the
/// backends and the simulator know it: all_to_all, reduce_scatter,
/// all_reduce, all_gather and all_to_all_v.
std::optional<StringRef> getStartFormName(Operation *op);

/// The bucket cap of braid-bucket-collectives' `bucket-mib` default (25
/// MiB, PyTorch DDP's bucket_cap_mb).
constexpr int64_t kDefaultBucketBytes = 25 * 1024 * 1024;
/// A cap no bucket reaches: one bucket per kind, group and chunk.
constexpr int64_t kUnlimitedBucketBytes = std::numeric_limits<int64_t>::max();

/// Fuses the uniform exchanges of `func` as braid-bucket-collectives may,
/// one bucket per layout and chunk, without asking the simulator (a later
/// pass's work, for a rewrite whose gain depends on it); returns whether it
/// fused any.
/// `worldSize` is the group of an exchange without groups.
bool fuseExchanges(func::FuncOp func, int64_t worldSize);

/// Fuses the routed indices' all_to_all_vs of `func` (IndexExchangeBuckets.cpp)
/// into braid.fused_all_to_all_v_starts, without asking the simulator;
/// returns how many fused exchanges it made and sets `combined` to the
/// exchanges they replaced.
int64_t fuseIndexExchanges(func::FuncOp func, int64_t &combined);

/// The most parameters one braid.fused_dense_update steps: each member
/// adds its buffers to the kernel's arguments and a case to its dispatch.
constexpr int64_t kMaxFusedSteps = 16;

/// Dense optimizer steps that read one gradient bucket in place, fused as
/// one braid.fused_dense_update (FuseOptimizerSteps.cpp).
struct OptimizerStepGroup {
  /// The bucket's reduced buffer the steps read.
  Value bucket;
  /// In block order; the first is where the fused step goes.
  SmallVector<DenseUpdateOp> steps;
  /// Where each step's gradient starts in the bucket.
  SmallVector<int64_t> offsets;
};

/// The groups of at least two braid.dense_update ops that read the 1-D f32
/// result of `producer` (a gradient bucket's collective or wait) through
/// static unit-stride slices, reshaped or not: one optimizer and step
/// number each, at most kMaxFusedSteps steps, every member's operands
/// available at the group's first step.
SmallVector<OptimizerStepGroup> fusibleOptimizerSteps(Operation *producer);

/// Replaces `group`'s steps with one braid.fused_dense_update at the first
/// step, and erases the gradient views nothing else reads.
void fuseOptimizerSteps(const OptimizerStepGroup &group);

/// The size of the group of consecutive ranks whose position `position`
/// is: `braid.rank` over the whole world, `braid.rank mod n` over blocks
/// of n. Zero for anything else.
int64_t positionGroupSize(Value position, int64_t worldSize);

/// For offsets that address rows [position * rows, +rows) along dimension
/// 0 and start every other dimension at 0: the rows and the size of the
/// position's group. std::nullopt otherwise.
std::optional<std::pair<int64_t, int64_t>>
rankRowsOf(ArrayRef<OpFoldResult> offsets, int64_t worldSize);

/// Whether `slice` keeps all of its source but rows [position * rows, +rows)
/// of a source of group * rows rows, position in groups of `group`; the
/// rows and group when it does.
std::optional<std::pair<int64_t, int64_t>>
rankRowsSlice(tensor::ExtractSliceOp slice, int64_t worldSize);

/// Replaces the synchronous collective `op` with its start form `startName`
/// (same operands and attributes, a token of its result type) and a
/// braid.wait right after it; returns the wait.
WaitOp startCollective(Operation *op, StringRef startName);

} // namespace mlir::braid

#endif // BRAID_PASSES_COOPT_COOPTSUPPORT_H
