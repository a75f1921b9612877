//===- Batches.cpp - The batches a training run takes ---------------------===//
//
// This file implements TrainingBatches and the labels' loading: a batch
// directory's labels.npy, checked to be one value in [0, 1] per sample, or
// the synthetic dataset's planted labels.
//
//===----------------------------------------------------------------------===//

#include "Batches.h"

#include "RunSupport.h"

#include "braid/Interp/Npy.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

static int fail(const llvm::Twine &message) { return failRun(message); }

FailureOr<HostTensor> mlir::braid::loadLabels(const Signature &global,
                                             ArrayRef<HostTensor> args,
                                             StringRef inputsDir,
                                             int64_t globalBatch) {
  if (!inputsDir.empty()) {
    std::string path = joinPath(inputsDir, "labels.npy");
    llvm::Expected<HostTensor> labels = readNpy(path);
    if (!labels) {
      fail("training reads its labels from " + path + ": " +
           llvm::toString(labels.takeError()));
      return failure();
    }
    if (labels->getRank() != 1 || labels->shape[0] != globalBatch) {
      fail(path + " is " + labels->describeType() +
           " but the global batch has " + llvm::Twine(globalBatch) + " rows");
      return failure();
    }
    for (auto [index, value] : llvm::enumerate(labels->data))
      if (!(value >= 0 && value <= 1)) {
        std::string text;
        llvm::raw_string_ostream(text) << llvm::format("%g", value);
        fail(path + ": element " + llvm::Twine(index) + " is " + text +
             ", outside [0, 1]");
        return failure();
      }
    return *labels;
  }
  std::optional<unsigned> index = global.findArgument("dense");
  if (!index) {
    fail("synthetic labels are planted in the 'dense' input, which the model "
         "does not take; give --inputs DIR with labels.npy");
    return failure();
  }
  const HostTensor &dense = args[*index];
  int64_t batch = dense.shape[0], width = dense.shape[1];
  std::vector<double> sums(batch, 0.0);
  double mean = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < width; ++c)
      sums[b] += dense.data[b * width + c];
    mean += sums[b] / double(batch);
  }
  HostTensor labels(ElementKind::f32, {batch});
  for (int64_t b = 0; b < batch; ++b)
    labels.data[b] = sums[b] > mean ? 1 : 0;
  return labels;
}

int64_t mlir::braid::getGlobalBatch(const Signature &global,
                                   ArrayRef<HostTensor> args) {
  if (std::optional<unsigned> dense = global.findArgument("dense"))
    if (args[*dense].getRank() > 0)
      return args[*dense].shape[0];
  for (auto [index, spec] : llvm::enumerate(global.arguments))
    if (StringRef(spec.name).ends_with(".offsets") &&
        args[index].getRank() == 1)
      return args[index].shape[0] - 1;
  return 0;
}

static std::string batchDir(StringRef dir, int64_t index) {
  std::string name;
  llvm::raw_string_ostream(name) << llvm::format("batch_%04lld",
                                                 static_cast<long long>(index));
  return joinPath(dir, name);
}

std::string mlir::braid::getFirstBatchDir(StringRef dir) {
  std::string first = batchDir(dir, 0);
  return llvm::sys::fs::is_directory(first) ? first : dir.str();
}

FailureOr<TrainingBatches>
TrainingBatches::open(const Signature &global, const TableMap &tables,
                      const BindingOptions &options, int64_t globalBatch) {
  TrainingBatches batches;
  batches.global = global;
  batches.tables = &tables;
  batches.options = options;
  batches.globalBatch = globalBatch;
  if (options.inputsDir) {
    // batch_0000/, batch_0001/, ... while they exist; else DIR itself.
    for (int64_t i = 0;; ++i) {
      std::string dir = batchDir(*options.inputsDir, i);
      if (!llvm::sys::fs::is_directory(dir))
        break;
      batches.dirs.push_back(dir);
    }
    if (batches.dirs.empty())
      batches.dirs.push_back(*options.inputsDir);
  }
  return batches;
}

FailureOr<HostTensor>
TrainingBatches::load(int64_t step, std::vector<HostTensor> &args) const {
  BindingOptions batch = options;
  batch.numRanks = 1;
  if (dirs.empty()) {
    // Batch k of the synthetic dataset: generated from its own seed (the
    // run's for the first), with the run's parameters.
    batch.seed = options.seed + uint64_t(step) * 0x9E3779B97F4A7C15ull;
  } else {
    batch.inputsDir = dirs[size_t(step) % dirs.size()];
  }
  llvm::Expected<RankValues> bound = bindArguments(global, *tables, batch);
  if (!bound) {
    fail(llvm::toString(bound.takeError()));
    return failure();
  }
  std::vector<HostTensor> &values = bound->front();
  if (values.size() != args.size()) {
    fail("the batch binds " + llvm::Twine(values.size()) +
         " arguments for a program of " + llvm::Twine(args.size()));
    return failure();
  }
  for (auto [index, spec] : llvm::enumerate(global.arguments))
    if (!spec.parameter)
      args[index] = std::move(values[index]);
  return loadLabels(global, args, dirs.empty() ? "" : batch.inputsDir.value(),
                    globalBatch);
}

std::string TrainingBatches::describe() const {
  if (dirs.empty())
    return "a synthetic click dataset (seed " + std::to_string(options.seed) +
           ")";
  if (dirs.size() == 1)
    return dirs.front();
  return std::to_string(dirs.size()) + " batches in " + *options.inputsDir;
}
