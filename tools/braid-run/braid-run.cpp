//===- braid-run.cpp - Run Braid programs ---------------------------------===//
//
// This file implements braid-run. With --reference it executes a Braid module
// under the reference semantics on N simulated ranks, on inputs and weights
// read from .npy files or generated from a seed, and reports, dumps or
// prints the results. Bad input is a located error and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/Bindings.h"
#include "braid/Interp/Npy.h"
#include "braid/Tools/ModuleLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<program.mlir>"));
static cl::opt<bool> reference("reference",
                               cl::desc("Run under the reference semantics"));
static cl::opt<int64_t> numRanks("ranks", cl::init(1),
                                 cl::desc("Number of simulated ranks"));
static cl::opt<uint64_t> seed("seed", cl::init(0),
                              cl::desc("Seed of generated inputs and weights"));
static cl::opt<std::string> inputsDir("inputs",
                                      cl::desc("Directory of input .npy files"));
static cl::opt<std::string>
    weightsDir("weights", cl::desc("Directory of weight .npy files"));
static cl::opt<std::string>
    dumpDir("dump", cl::desc("Write inputs, weights and outputs as .npy here"));
static cl::opt<bool> emitJson("json", cl::desc("Print one JSON object"));
static cl::opt<bool> printValues("print-values",
                                 cl::desc("Print every result element"));
static cl::opt<int64_t> maxDumpElements(
    "max-dump-table-elements", cl::init(1 << 24),
    cl::desc("Largest table (rows x dim) written by --dump"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "braid-run: error: " << message << "\n";
  return 1;
}

namespace {
struct Summary {
  double sum = 0, min = 0, max = 0;
};
} // namespace

static Summary summarize(const HostTensor &tensor) {
  Summary summary;
  if (tensor.data.empty())
    return summary;
  summary.min = summary.max = tensor.data.front();
  for (double value : tensor.data) {
    summary.sum += value;
    summary.min = std::min(summary.min, value);
    summary.max = std::max(summary.max, value);
  }
  return summary;
}

static std::string rankDir(StringRef dir, int64_t rank, int64_t ranks) {
  if (ranks == 1)
    return dir.str();
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "rank" + std::to_string(rank));
  return std::string(path);
}

static std::string joinPath(StringRef dir, const llvm::Twine &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// Writes what the run used and produced under `dir`, so that a later run
/// with `--inputs DIR/inputs --weights DIR/weights` reproduces it.
static llvm::Error dumpRun(StringRef dir, func::FuncOp func,
                          const TableMap &tables, const RankValues &args,
                          const RankValues &results) {
  int64_t ranks = args.size();
  std::string inputs = joinPath(dir, "inputs");
  std::string weights = joinPath(dir, "weights");
  for (int64_t rank = 0; rank < ranks; ++rank) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      bool param = isParameter(func, i);
      if (param && rank != 0)
        continue;
      std::string target = param ? weights : rankDir(inputs, rank, ranks);
      if (llvm::Error error =
              writeNpy(joinPath(target, getArgumentName(func, i) + ".npy"),
                       args[rank][i]))
        return error;
    }
    for (auto [index, result] : llvm::enumerate(results[rank])) {
      std::string name = index == 0 ? std::string("output.npy")
                                    : "output." + std::to_string(index) + ".npy";
      if (llvm::Error error =
              writeNpy(joinPath(rankDir(dir, rank, ranks), name), result))
        return error;
    }
  }
  for (const auto &entry : tables) {
    const TableData &table = entry.second;
    if (table.getNumRows() * table.getDim() > maxDumpElements) {
      llvm::errs() << "braid-run: note: table '" << entry.first()
                   << "' is not dumped (" << table.getNumRows() << " x "
                   << table.getDim() << " elements exceed "
                   << "--max-dump-table-elements)\n";
      continue;
    }
    if (llvm::Error error = writeNpy(joinPath(weights, entry.first() + ".npy"),
                                     table.materialize()))
      return error;
  }
  return llvm::Error::success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "braid-run: run a Braid program\n\n"
      "  braid-run FILE.mlir --reference [--ranks N] [--seed S | --inputs DIR "
      "--weights DIR] [--dump DIR] [--json]\n");
  if (!reference)
    return fail("running compiled artifacts is not supported yet; pass "
                "--reference to run the reference semantics");
  if (numRanks < 1 || numRanks > 4096)
    return fail("--ranks must be between 1 and 4096, got " +
                llvm::Twine(numRanks));
  for (const std::string &dir : {inputsDir.getValue(), weightsDir.getValue()})
    if (!dir.empty() && !llvm::sys::fs::is_directory(dir))
      return fail("'" + dir + "' is not a directory");

  ModuleLoader loader;
  OwningOpRef<ModuleOp> module = loader.load(inputFile);
  if (!module)
    return 1;

  BindingOptions options;
  options.numRanks = numRanks;
  options.seed = seed;
  if (!inputsDir.empty())
    options.inputsDir = inputsDir.getValue();
  if (!weightsDir.empty())
    options.weightsDir = weightsDir.getValue();

  FailureOr<func::FuncOp> func = findEntryFunction(*module);
  if (failed(func))
    return 1;
  FailureOr<TableMap> tables = bindTables(*module, options);
  if (failed(tables))
    return 1;
  FailureOr<RankValues> args = bindArguments(*func, *tables, options);
  if (failed(args))
    return 1;
  FailureOr<RankValues> results = runFunction(*func, *args, *tables);
  if (failed(results))
    return 1;

  if (!dumpDir.empty())
    if (llvm::Error error = dumpRun(dumpDir, *func, *tables, *args, *results))
      return fail(llvm::toString(std::move(error)));

  if (emitJson) {
    llvm::json::Array outputs;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      for (auto [index, result] : llvm::enumerate((*results)[rank])) {
        Summary summary = summarize(result);
        outputs.push_back(llvm::json::Object{
            {"rank", rank},
            {"index", static_cast<int64_t>(index)},
            {"type", result.describeType()},
            {"sum", summary.sum},
            {"min", summary.min},
            {"max", summary.max}});
      }
    llvm::json::Object report{{"function", func->getSymName()},
                              {"ranks", static_cast<int64_t>(numRanks)},
                              {"seed", static_cast<int64_t>(seed)},
                              {"outputs", std::move(outputs)}};
    llvm::outs() << llvm::json::Value(std::move(report)) << "\n";
    return 0;
  }
  llvm::outs() << "reference semantics of @" << func->getSymName() << " on "
               << numRanks << (numRanks == 1 ? " rank" : " ranks");
  if (inputsDir.empty() || weightsDir.empty())
    llvm::outs() << " (seed " << seed << ")";
  llvm::outs() << "\n";
  for (int64_t rank = 0; rank < numRanks; ++rank)
    for (auto [index, result] : llvm::enumerate((*results)[rank])) {
      Summary summary = summarize(result);
      llvm::outs() << "rank " << rank << " result " << index << ": "
                   << result.describeType()
                   << llvm::format(" sum=%.6g min=%.6g max=%.6g", summary.sum,
                                   summary.min, summary.max)
                   << "\n";
      if (printValues)
        llvm::outs() << "  " << result.formatValues() << "\n";
    }
  if (!dumpDir.empty())
    llvm::outs() << "wrote inputs, weights and outputs to " << dumpDir << "\n";
  return 0;
}
