//===- LowerExchanges.h - CPU lowering of partitioned lookups ---*- C++ -*-===//
//
// This file declares the part of convert-braid-to-cpu that lowers the ops of
// partitioned programs: the exchanges become runtime calls through MLIR's C
// interface, and bucketize, shard_embedding_bag and combine_shards become
// generated kernels.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H
#define BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H

#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::braid {

/// Declares (once) a private runtime function; with `cInterface`, calls
/// go through `_mlir_ciface_NAME` with descriptor pointers.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange arguments, TypeRange results,
                                    bool cInterface);

/// The buffer of `tensor` as an unranked memref (for C-interface calls).
Value toUnrankedBuffer(OpBuilder &b, Location loc, Value tensor);

/// Exchanges started and not yet waited for, by their token.
struct PendingExchange {
  Value handle, input, output;
  std::string suffix;
};
using PendingExchanges = llvm::DenseMap<Value, PendingExchange>;

/// Lowers an `all_to_all_start` or `reduce_scatter_start` (recorded in
/// `pending`; the op stays until its wait is lowered) or a `wait` (which
/// completes the exchange and replaces the wait's result).
LogicalResult lowerAsyncExchange(OpBuilder &b, Operation *op, ModuleOp module,
                                 PendingExchanges &pending);

/// Lowers one op of a partitioned program; `table` is the rank's shard of
/// the table for shard_embedding_bag. Returns the values replacing the
/// op's results, or failure after a located error.
FailureOr<SmallVector<Value>> lowerExchangeOp(OpBuilder &b, Operation *op,
                                              ModuleOp module,
                                              func::FuncOp indexError,
                                              Value table);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOCPU_LOWEREXCHANGES_H
