//===- Braid.h - Braid dialect ----------------------------------*- C++ -*-===//
//
// This file declares the Braid dialect, its attributes, types, interfaces and
// operations. Include this header to use any of them.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAID_H
#define BRAID_DIALECT_BRAID_IR_BRAID_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::braid {

/// The most ranks a cluster may have: every rank's program is planned and
/// simulated, its exchanges as R x R matrices.
constexpr int64_t kMaxWorldSize = 4096;

/// The most bag slots per rank an exchange may have (the batch bound, 2^30):
/// the slots times the ranks stay far inside int64 in every kernel.
constexpr int64_t kMaxBagsPerRank = int64_t(1) << 30;
/// The most rows a table may have (2^40), and the most elements (2^62), so
/// that a row times the dim plus a column is an int64 in every kernel.
constexpr int64_t kMaxTableRows = int64_t(1) << 40;
constexpr int64_t kMaxTableElements = int64_t(1) << 62;

/// Whether `name` (an input's, a parameter's or a table's) can name a file
/// inside a folder: braid-run reads and writes `DIR/NAME.npy`, so a name
/// with a separator or a leading '.' would leave the folder.
inline bool isFileNameSafe(llvm::StringRef name) {
  return !name.empty() && !name.starts_with(".") &&
         name.find_first_of(llvm::StringRef("/\\\0", 3)) ==
             llvm::StringRef::npos;
}

/// Checks that every token `op` (a collective's start) returns is waited
/// for exactly once: by one `braid.wait` and nothing else. A token waited
/// twice or never was lowered as such (a double wait freed the receive
/// buffer twice; no wait freed it while MPI still wrote into it).
LogicalResult verifyTokensWaitedOnce(Operation *op);

/// One shard of an embedding table: a block of rows and columns on a rank.
struct TableShard {
  int64_t rank;
  int64_t rowOffset;
  int64_t rows;
  int64_t colOffset;
  int64_t cols;
  bool operator==(const TableShard &other) const {
    return rank == other.rank && rowOffset == other.rowOffset &&
           rows == other.rows && colOffset == other.colOffset &&
           cols == other.cols;
  }
};

} // namespace mlir::braid

#include "braid/Dialect/Braid/IR/BraidOpsDialect.h.inc"
#include "braid/Dialect/Braid/IR/BraidEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "braid/Dialect/Braid/IR/BraidOpsTypes.h.inc"

#include "braid/Dialect/Braid/IR/BraidAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "braid/Dialect/Braid/IR/BraidAttrs.h.inc"

namespace mlir::braid {
class CollectiveOpInterface;

/// What a gradient rule needs to know beyond its op: how many ranks run the
/// program (1 for a global program) and the optimizer parts of the module's
/// braid.optimizer, which fused updates carry.
struct GradientContext {
  int64_t numRanks = 1;
  DictionaryAttr denseOptimizer, embeddingOptimizer;
};

namespace detail {
/// Verifies one part ("dense" or "embedding") of braid.optimizer on `op`.
LogicalResult verifyOptimizerPart(Operation *op, DictionaryAttr part,
                                  StringRef which, ArrayRef<StringRef> types);
} // namespace detail

namespace detail {
/// The checks every collective shares; called by the interface's verifier.
LogicalResult verifyCollectiveOp(Operation *op);
} // namespace detail
} // namespace mlir::braid

#include "braid/Dialect/Braid/IR/BraidOpInterfaces.h.inc"

#define GET_OP_CLASSES
#include "braid/Dialect/Braid/IR/BraidOps.h.inc"

namespace mlir::braid {
/// The element type partial results of `table` accumulate in: f32 for f16
/// and bf16 tables, else the table's own.
Type getAccumulationType(TableOp table);
/// The columns of the widest shard of `table`'s placement; the table's dim
/// when it has no placement.
int64_t getWidestShardCols(TableOp table);
/// The parts of `table`'s pooled rows as its exchange delivers them, part p
/// being rows [p * bags_per_rank, (p + 1) * bags_per_rank) of the receive
/// buffer: a column-wise table's shards in rank order, else one part of
/// every column.
SmallVector<TableShard> getReceivedParts(TableOp table);
/// How reports name an op of a per-rank program: its name without the
/// dialect, and ` @TABLE` for an op on a table ("shard_embedding_bag @t0").
/// braid-sim's trace and braid-profile-ops' measured times use it, so the
/// two line up.
std::string getReportName(Operation *op);
/// Whether `func` stands beside a function it serves rather than being an
/// entry point of its own: a pipelined form (`braid.pipelined_of`) or the
/// input distribution function a pipelined form of its module names
/// (`braid.input_dist`); braid-pipeline-input-dist adds both.
bool isPipelineCompanion(Operation *func);
/// Attaches the gradient rules (GradientOpInterface) to Braid's ops and to
/// the arith ops forward programs use.
void registerGradientRules(DialectRegistry &registry);
} // namespace mlir::braid

#endif // BRAID_DIALECT_BRAID_IR_BRAID_H
