//===- Train.cpp - braid-run --reference --steps K ------------------------===//
//
// This file implements braid-run's training under the reference semantics:
// K steps of the global program on one batch (the inputs given or
// generated) with labels from `labels.npy` or a planted synthetic signal,
// printing each step's loss and dumping the trained weights, the optimizer
// state and the losses.
//
//===----------------------------------------------------------------------===//

#include "Train.h"

#include "RunSupport.h"

#include "braid/Interp/Bindings.h"
#include "braid/Interp/Npy.h"
#include "braid/Interp/Training.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

static int fail(const llvm::Twine &message) { return failRun(message); }

/// The labels: `labels.npy` in the inputs directory, every element in
/// [0, 1]; or, without inputs, a signal planted in the dense features (a
/// sample is a click when its dense features sum above the batch's mean),
/// so that the loss visibly falls.
static FailureOr<HostTensor> loadLabels(func::FuncOp func,
                                        ArrayRef<HostTensor> args,
                                        StringRef inputsDir) {
  if (!inputsDir.empty()) {
    std::string path = joinPath(inputsDir, "labels.npy");
    llvm::Expected<HostTensor> labels = readNpy(path);
    if (!labels) {
      fail("training reads its labels from " + path + ": " +
           llvm::toString(labels.takeError()));
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
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (getArgumentName(func, i) != "dense")
      continue;
    const HostTensor &dense = args[i];
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
  fail("synthetic labels are planted in the 'dense' input, which @" +
       func.getSymName() + " does not take; give --inputs DIR with "
       "labels.npy");
  return failure();
}

/// Writes what training produced: the inputs and labels, the trained
/// weights, the optimizer state and the losses.
static llvm::Error dumpTraining(StringRef dir, func::FuncOp func,
                                const TableMap &tables,
                                ArrayRef<HostTensor> args,
                                const HostTensor &labels,
                                const TrainingState &state,
                                const TrainingConfig &config,
                                ArrayRef<double> losses,
                                int64_t maxDumpElements) {
  std::string inputs = joinPath(dir, "inputs"), weights = joinPath(dir, "weights"),
              stateDir = joinPath(dir, "state");
  if (llvm::Error error = writeNpy(joinPath(inputs, "labels.npy"), labels))
    return error;
  bool adam = config.dense.type == "adam";
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = getArgumentName(func, i);
    bool param = isParameter(func, i);
    if (llvm::Error error = writeNpy(
            joinPath(param ? weights : inputs, name + ".npy"), args[i]))
      return error;
    if (!param)
      continue;
    auto first = state.first.find(i), second = state.second.find(i);
    if (first != state.first.end() && !first->second.data.empty())
      if (llvm::Error error = writeNpy(
              joinPath(stateDir, name + (adam ? ".exp_avg" : ".sum") + ".npy"),
              first->second))
        return error;
    if (second != state.second.end() && !second->second.data.empty())
      if (llvm::Error error = writeNpy(
              joinPath(stateDir, name + ".exp_avg_sq.npy"), second->second))
        return error;
  }
  bool rowwise = config.embedding.type == "rowwise_adagrad";
  bool adagrad = config.embedding.type == "adagrad" || rowwise;
  for (const auto &entry : tables) {
    const TableData &table = entry.second;
    llvm::Expected<bool> written =
        dumpTable(weights, entry.first(), table, maxDumpElements);
    if (!written)
      return written.takeError();
    if (!*written || !adagrad)
      continue;
    // Rows never looked up have a zero sum, as in a fresh optimizer.
    SmallVector<int64_t, 2> shape = {table.getNumRows()};
    if (!rowwise)
      shape.push_back(table.getDim());
    HostTensor sums(ElementKind::f32, shape);
    auto rows = state.rowState.find(entry.first());
    if (rows != state.rowState.end())
      for (const auto &[row, values] : rows->second)
        for (auto [c, value] : llvm::enumerate(values))
          sums.data[row * (rowwise ? 1 : table.getDim()) + c] = value;
    if (llvm::Error error =
            writeNpy(joinPath(stateDir, entry.first() + ".sum.npy"), sums))
      return error;
  }
  HostTensor lossTensor(ElementKind::f64, {int64_t(losses.size())});
  lossTensor.data.assign(losses.begin(), losses.end());
  return writeNpy(joinPath(dir, "losses.npy"), lossTensor);
}

int mlir::braid::runReferenceTraining(ModuleOp module, func::FuncOp func,
                                      TableMap &tables,
                                      std::vector<HostTensor> args,
                                      const TrainOptions &options) {
  if (options.steps < 1 || options.steps > 1000000)
    return fail("--steps must be between 1 and 1000000, got " +
                llvm::Twine(options.steps));
  FailureOr<TrainingConfig> config = readTrainingConfig(module);
  if (failed(config))
    return 1;
  FailureOr<HostTensor> labels = loadLabels(func, args, options.inputsDir);
  if (failed(labels))
    return 1;
  TrainingState state;
  std::vector<double> losses;
  for (int64_t step = 0; step < options.steps; ++step) {
    FailureOr<double> loss =
        trainStep(func, args, tables, *labels, *config, state);
    if (failed(loss))
      return 1;
    losses.push_back(*loss);
    if (!options.json)
      llvm::outs() << llvm::format("step %lld: loss %.6f\n",
                                   static_cast<long long>(step + 1), *loss);
  }
  if (!options.dumpDir.empty())
    if (llvm::Error error =
            dumpTraining(options.dumpDir, func, tables, args, *labels, state,
                         *config, losses, options.maxDumpElements))
      return fail(llvm::toString(std::move(error)));
  if (options.json) {
    llvm::json::Array lossArray;
    for (double loss : losses)
      lossArray.push_back(loss);
    llvm::outs() << llvm::json::Value(llvm::json::Object{
                        {"function", func.getSymName()},
                        {"ranks", 1},
                        {"steps", options.steps},
                        {"losses", std::move(lossArray)},
                        {"loss", losses.back()}})
                 << "\n";
  } else if (!options.dumpDir.empty()) {
    llvm::outs() << "wrote the trained weights, optimizer state and losses "
                    "to "
                 << options.dumpDir << "\n";
  }
  return 0;
}
