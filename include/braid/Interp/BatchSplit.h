//===- BatchSplit.h - Global inputs of per-rank programs --------*- C++ -*-===//
//
// This file declares how the global batch maps onto a per-rank program made
// by braid-partition: the global arguments are split by the module's
// `braid.batch_split` (bags with their indices, batch rows), parameters are
// replicated, and the ranks' results are gathered back in rank order.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INTERP_BATCHSPLIT_H
#define BRAID_INTERP_BATCHSPLIT_H

#include "braid/Interp/Signature.h"

namespace mlir::braid::interp {

/// splitGlobalArguments (Signature.h) of the two functions' signatures;
/// errors are reported at `perRank`.
FailureOr<RankValues> splitGlobalArguments(func::FuncOp global,
                                           ArrayRef<HostTensor> globalArgs,
                                           func::FuncOp perRank,
                                           ArrayRef<int64_t> batchSplit);

/// The global results: each result's ranks concatenated along dimension 0.
std::vector<HostTensor> gatherResults(const RankValues &results);

/// max |actual - expected| / max |expected| (0 when both are all zero), or
/// infinity when the shapes differ.
double relativeError(const HostTensor &actual, const HostTensor &expected);

} // namespace mlir::braid::interp

#endif // BRAID_INTERP_BATCHSPLIT_H
