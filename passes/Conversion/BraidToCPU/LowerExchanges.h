//===- LowerExchanges.h - CPU lowering of partitioned lookups ---*- C++ -*-===//
//
// This file declares the pattern sets of convert-braid-to-cpu, one per op
// family, and what they share: the exchanges become runtime calls through
// MLIR's C interface, and the compute ops, bucketize, shard_embedding_bag
// and combine_shards become generated kernels.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H
#define BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H

#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::braid {

/// Declares (once) a private runtime function; with `cInterface`, calls
/// go through `_mlir_ciface_NAME` with descriptor pointers.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange arguments, TypeRange results,
                                    bool cInterface);

/// The runtime's abort for inconsistent bag offsets: (entry, value).
func::FuncOp declareOffsetsError(ModuleOp module);

/// The buffer of `tensor` as an unranked memref (for C-interface calls).
Value toUnrankedBuffer(OpBuilder &b, Location loc, Value tensor);

/// Exchanges started and not yet waited for, by their token.
struct PendingExchange {
  Value handle, input, output;
  std::string suffix;
};
using PendingExchanges = llvm::DenseMap<Value, PendingExchange>;

/// What the patterns of one convert-braid-to-cpu run share: the module
/// (runtime functions are declared in it), the table arguments each
/// function gained, and the exchanges started and not yet waited for.
struct CpuLoweringState {
  ModuleOp module;
  /// Per function and table name, the argument holding its rows.
  llvm::DenseMap<std::pair<Operation *, Attribute>, Value> tableArgs;
  PendingExchanges pending;

  /// The argument of `table` in the function around `op`.
  Value tableArgument(Operation *op, FlatSymbolRefAttr table) const {
    return tableArgs.lookup(
        {op->getParentOfType<func::FuncOp>(), table.getAttr()});
  }
  /// The runtime's abort for an index outside a table: (index, rows).
  func::FuncOp indexError() const;
  /// The runtime's abort for inconsistent bag offsets: (entry, value).
  func::FuncOp offsetsError() const { return declareOffsetsError(module); }
};

/// Moves each lookup-side op of the public functions (embedding_bag,
/// shard_embedding_bag, bucketize, combine_shards) into an internal,
/// noinline function of its own, called where the op was, and records the
/// table arguments those functions take in `state`. Keeps every function
/// the upstream passes see small, whatever the number of tables.
void outlineKernels(CpuLoweringState &state);

/// Patterns for the ops of partitioned programs: the exchanges (sync and
/// started, and their waits) become runtime calls; bucketize,
/// shard_embedding_bag and combine_shards become generated kernels.
void populateBraidExchangeToCPUPatterns(RewritePatternSet &patterns,
                                        CpuLoweringState &state);

/// Patterns for the compute ops: embedding_bag (the pooling kernel with
/// its checks), linear (BLAS through the runtime for f32, else generated)
/// and interaction.
void populateBraidComputeToCPUPatterns(RewritePatternSet &patterns,
                                       CpuLoweringState &state);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H
