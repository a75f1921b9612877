//===- BatchSplit.cpp - Global inputs of per-rank programs ----------------===//
//
// This file splits global arguments over the ranks of a partitioned
// program and gathers the ranks' results.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/BatchSplit.h"

#include "braid/Interp/Bindings.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

static llvm::Error splitError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The reference semantics' rule for the global batch, checked before any
/// split: `<table>.offsets` start at 0, never decrease and end at the
/// length of `name` (the indices or per-sample weights they cut).
static llvm::Error checkOffsets(StringRef table, const HostTensor &offsets,
                                StringRef name, const HostTensor &cut) {
  int64_t count = offsets.getNumElements();
  auto bad = [&](int64_t entry, const Twine &rule) {
    return splitError("'" + table + ".offsets' entry " + Twine(entry) + " is " +
                      Twine(int64_t(offsets.data[entry])) + ": " + rule);
  };
  if (count == 0)
    return splitError("'" + table + ".offsets' is empty");
  if (offsets.data[0] != 0)
    return bad(0, "offsets must start at 0");
  for (int64_t i = 1; i < count; ++i)
    if (offsets.data[i] < offsets.data[i - 1])
      return bad(i, "offsets must never decrease");
  if (offsets.data[count - 1] != double(cut.getNumElements()))
    return bad(count - 1, "the last offset must be the " +
                              Twine(cut.getNumElements()) + " entries of '" +
                              name + "'");
  return llvm::Error::success();
}

llvm::Expected<RankValues> mlir::braid::interp::splitGlobalArguments(
    const Signature &global, ArrayRef<HostTensor> globalArgs,
    const Signature &perRank, ArrayRef<int64_t> batchSplit) {
  if (globalArgs.size() != global.arguments.size())
    return splitError("the global program takes " +
                      Twine(global.arguments.size()) + " arguments, got " +
                      Twine(globalArgs.size()));
  int64_t batch = 0;
  SmallVector<int64_t> starts;
  for (int64_t samples : batchSplit) {
    if (samples < 0)
      return splitError("a rank's share of the batch is negative");
    starts.push_back(batch);
    batch += samples;
  }
  int64_t numRanks = batchSplit.size();
  RankValues args(numRanks);
  for (const ArgumentSpec &spec : perRank.arguments) {
    StringRef name(spec.name);
    std::optional<unsigned> found = global.findArgument(name);
    if (!found)
      return splitError("argument '" + name + "' has no global counterpart");
    const HostTensor &value = globalArgs[*found];
    if (spec.parameter && !spec.shardRanks.empty()) {
      // Stored as blocks: each rank takes its own along the shard dimension.
      int64_t parts = spec.shardRanks.size();
      if (spec.shardDim < 0 || spec.shardDim >= value.getRank() ||
          value.shape[spec.shardDim] % parts != 0)
        return splitError("parameter '" + name + "' is stored as " +
                          Twine(parts) + " blocks along dimension " +
                          Twine(spec.shardDim) +
                          ", which its global value does not divide into");
      int64_t size = value.shape[spec.shardDim] / parts;
      for (int64_t r = 0; r < numRanks; ++r)
        args[r].push_back(value.slice(spec.shardDim,
                                      spec.shardPositionOf(r) * size, size));
      continue;
    }
    if (spec.parameter || value.getRank() == 0) {
      for (int64_t r = 0; r < numRanks; ++r)
        args[r].push_back(value);
      continue;
    }
    // Jagged inputs: <table>.offsets, and .indices / .weights cut by them.
    StringRef table;
    bool isOffsets = false;
    for (StringRef suffix : {".offsets", ".indices", ".weights"})
      if (name.ends_with(suffix)) {
        table = name.drop_back(suffix.size());
        isOffsets = suffix == ".offsets";
      }
    if (!table.empty()) {
      std::optional<unsigned> offsetsArg =
          global.findArgument((table + ".offsets").str());
      if (!offsetsArg)
        return splitError("argument '" + name + "' has no '" + table +
                          ".offsets'");
      const HostTensor &offsets = globalArgs[*offsetsArg];
      if (!isOffsets)
        if (llvm::Error error = checkOffsets(table, offsets, name, value))
          return std::move(error);
      if (offsets.getNumElements() != batch + 1)
        return splitError(
            "'" + table + ".offsets' has " + Twine(offsets.getNumElements()) +
            " entries but the batch split needs " + Twine(batch + 1));
      for (int64_t r = 0; r < numRanks; ++r) {
        double first = offsets.data[starts[r]];
        double last = offsets.data[starts[r] + batchSplit[r]];
        if (isOffsets) {
          HostTensor local = offsets.slice(0, starts[r], batchSplit[r] + 1);
          for (double &offset : local.data)
            offset -= first;
          args[r].push_back(std::move(local));
        } else {
          if (!(first >= 0 && first <= last &&
                last <= double(value.getNumElements())))
            return splitError("'" + table + ".offsets' do not fit '" + name +
                              "': rank " + Twine(r) + "'s bags span entries " +
                              Twine(int64_t(first)) + " to " +
                              Twine(int64_t(last)) + " of its " +
                              Twine(value.getNumElements()));
          args[r].push_back(
              value.slice(0, int64_t(first), int64_t(last - first)));
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

FailureOr<RankValues> mlir::braid::interp::splitGlobalArguments(
    func::FuncOp global, ArrayRef<HostTensor> globalArgs, func::FuncOp perRank,
    ArrayRef<int64_t> batchSplit) {
  llvm::Expected<RankValues> args =
      splitGlobalArguments(describeFunction(global), globalArgs,
                           describeFunction(perRank), batchSplit);
  if (!args)
    return perRank.emitError() << llvm::toString(args.takeError());
  return std::move(*args);
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
  // Non-finite values must match exactly (NaN with NaN, an infinity with
  // one of its sign); the finite ones are scaled by the largest finite
  // expected value, so that one infinity does not hide every difference.
  double difference = 0, scale = 0;
  for (size_t i = 0; i < expected.data.size(); ++i) {
    double a = actual.data[i], e = expected.data[i];
    if (!std::isfinite(a) || !std::isfinite(e)) {
      if (!(std::isnan(a) && std::isnan(e)) && a != e)
        return std::numeric_limits<double>::infinity();
      continue;
    }
    difference = std::max(difference, std::abs(a - e));
    scale = std::max(scale, std::abs(e));
  }
  if (difference == 0)
    return 0;
  return scale == 0 ? std::numeric_limits<double>::infinity()
                    : difference / scale;
}
