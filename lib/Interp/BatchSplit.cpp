//===- BatchSplit.cpp - Global inputs of per-rank programs ----------------===//
//
// This file splits global arguments over the ranks of a partitioned
// program and gathers the ranks' results.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/BatchSplit.h"

#include "braid/Interp/Bindings.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

FailureOr<RankValues>
mlir::braid::interp::splitGlobalArguments(func::FuncOp global,
                                          ArrayRef<HostTensor> globalArgs,
                                          func::FuncOp perRank,
                                          ArrayRef<int64_t> batchSplit) {
  llvm::StringMap<unsigned> globalIndex;
  for (unsigned i = 0; i < global.getNumArguments(); ++i)
    globalIndex[getArgumentName(global, i)] = i;
  int64_t batch = 0;
  SmallVector<int64_t> starts;
  for (int64_t samples : batchSplit) {
    starts.push_back(batch);
    batch += samples;
  }
  int64_t numRanks = batchSplit.size();
  RankValues args(numRanks);
  for (unsigned i = 0; i < perRank.getNumArguments(); ++i) {
    std::string name = getArgumentName(perRank, i);
    auto found = globalIndex.find(name);
    if (found == globalIndex.end())
      return perRank.emitError() << "argument '" << name
                                 << "' has no global counterpart";
    const HostTensor &value = globalArgs[found->second];
    StringRef nameRef(name);
    if (isParameter(perRank, i) || value.getRank() == 0) {
      for (int64_t r = 0; r < numRanks; ++r)
        args[r].push_back(value);
      continue;
    }
    // Jagged inputs: <table>.offsets, and .indices / .weights cut by them.
    StringRef table;
    bool isOffsets = false;
    for (StringRef suffix : {".offsets", ".indices", ".weights"})
      if (nameRef.ends_with(suffix)) {
        table = nameRef.drop_back(suffix.size());
        isOffsets = suffix == ".offsets";
      }
    if (!table.empty()) {
      auto offsetsArg = globalIndex.find((table + ".offsets").str());
      if (offsetsArg == globalIndex.end())
        return perRank.emitError() << "argument '" << name
                                   << "' has no '" << table << ".offsets'";
      const HostTensor &offsets = globalArgs[offsetsArg->second];
      if (offsets.getNumElements() != batch + 1)
        return perRank.emitError()
               << "'" << table << ".offsets' has " << offsets.getNumElements()
               << " entries but the batch split needs " << batch + 1;
      for (int64_t r = 0; r < numRanks; ++r) {
        int64_t first = offsets.data[starts[r]];
        int64_t last = offsets.data[starts[r] + batchSplit[r]];
        if (isOffsets) {
          HostTensor local = offsets.slice(0, starts[r], batchSplit[r] + 1);
          for (double &offset : local.data)
            offset -= first;
          args[r].push_back(std::move(local));
        } else {
          if (last > value.getNumElements() || first > last)
            return perRank.emitError() << "'" << table << ".offsets' do not "
                                          "fit '" << name << "'";
          args[r].push_back(value.slice(0, first, last - first));
        }
      }
      continue;
    }
    if (value.shape[0] != batch) {
      for (int64_t r = 0; r < numRanks; ++r)
        args[r].push_back(value);
      continue;
    }
    for (int64_t r = 0; r < numRanks; ++r)
      args[r].push_back(value.slice(0, starts[r], batchSplit[r]));
  }
  return args;
}

std::vector<HostTensor>
mlir::braid::interp::gatherResults(const RankValues &results) {
  std::vector<HostTensor> gathered;
  for (size_t i = 0; i < results.front().size(); ++i) {
    SmallVector<HostTensor> parts;
    for (const std::vector<HostTensor> &rank : results)
      parts.push_back(rank[i]);
    gathered.push_back(parts.front().getRank() == 0
                           ? parts.front()
                           : HostTensor::concat(parts, 0));
  }
  return gathered;
}

double mlir::braid::interp::relativeError(const HostTensor &actual,
                                          const HostTensor &expected) {
  if (actual.shape != expected.shape)
    return std::numeric_limits<double>::infinity();
  double difference = 0, scale = 0;
  for (size_t i = 0; i < expected.data.size(); ++i) {
    double a = actual.data[i], e = expected.data[i];
    if (std::isnan(a) != std::isnan(e))
      return std::numeric_limits<double>::infinity();
    difference = std::max(difference, std::abs(a - e));
    scale = std::max(scale, std::abs(e));
  }
  if (difference == 0)
    return 0;
  return scale == 0 ? std::numeric_limits<double>::infinity()
                    : difference / scale;
}
