//===- Braid.cpp - C API of the Braid compiler ----------------------------===//
//
// This file implements the C API of include/braid-c/Braid.h over the same
// libraries the tools use: compileModel (braid-compile), the collective
// model (braid-sim collective) and the registered pipelines (braid-opt).
//
//===----------------------------------------------------------------------===//

#include "braid-c/Braid.h"

#include "braid/Cluster/Hardware.h"
#include "braid/Compile/Compile.h"
#include "braid/Cost/CostModel.h"
#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Import/ModelJson.h"
#include "braid/InitAll.h"
#include "braid/Support/BoundedInput.h"

#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;
using namespace mlir::braid;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Braid, braid, BraidDialect)

namespace {
/// A stream that forwards what is written to an MlirStringCallback.
class CallbackStream : public llvm::raw_ostream {
public:
  CallbackStream(MlirStringCallback callback, void *userData)
      : callback(callback), userData(userData) {
    SetUnbuffered();
  }

private:
  void write_impl(const char *data, size_t size) override {
    if (callback && size)
      callback(mlirStringRefCreate(data, size), userData);
    position += size;
  }
  uint64_t current_pos() const override { return position; }

  MlirStringCallback callback;
  void *userData;
  uint64_t position = 0;
};
} // namespace

void braidRegisterAllPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] { registerAllPasses(); });
}

/// Reads `key` of `request` into `value` when present; false when it holds
/// another JSON type. `get` is llvm::json::Value's getAsString, getAsInteger
/// or getAsBoolean.
template <typename T, typename Getter>
static bool readField(const llvm::json::Object &request, StringRef key,
                      T &value, Getter get) {
  const llvm::json::Value *field = request.get(key);
  if (!field)
    return true;
  auto read = (field->*get)();
  if (!read)
    return false;
  value = T(*read);
  return true;
}

static bool readString(const llvm::json::Object &request, StringRef key,
                       std::string &value) {
  return readField(request, key, value, &llvm::json::Value::getAsString);
}

static bool readInteger(const llvm::json::Object &request, StringRef key,
                        int64_t &value) {
  return readField(request, key, value, &llvm::json::Value::getAsInteger);
}

static bool readBool(const llvm::json::Object &request, StringRef key,
                     bool &value) {
  return readField(request, key, value, &llvm::json::Value::getAsBoolean);
}

/// Reads an optional array of strings; false if it is anything else.
static bool readStrings(const llvm::json::Object &request, StringRef key,
                        std::vector<std::string> &values) {
  const llvm::json::Value *value = request.get(key);
  if (!value)
    return true;
  const llvm::json::Array *array = value->getAsArray();
  if (!array)
    return false;
  for (const llvm::json::Value &element : *array) {
    std::optional<StringRef> text = element.getAsString();
    if (!text)
      return false;
    values.push_back(text->str());
  }
  return true;
}

MlirLogicalResult braidCompile(MlirStringRef request,
                               MlirStringCallback report,
                               MlirStringCallback errors, void *userData) {
  braidRegisterAllPasses();
  CallbackStream reportStream(report, userData), errorStream(errors, userData);
  auto fail = [&](const llvm::Twine &message) {
    errorStream << "braid.compile: error: " << message << "\n";
    return mlirLogicalResultFailure();
  };
  llvm::Expected<llvm::json::Value> parsed =
      parseBoundedJson(unwrap(request));
  if (!parsed)
    return fail("the request is not JSON: " +
                llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return fail("the request must be a JSON object");
  static constexpr StringLiteral kKeys[] = {
      "model",  "out",  "cluster", "nodes",     "ranks_per_node",
      "planner", "force_sharding", "plan", "opt_level",
      "force_co_optimization", "pipeline_input_dist", "exchange_precision",
      "train", "target",
      "target_cpu", "cuda_chips", "max_table_rows"};
  for (const auto &entry : *object)
    if (!llvm::is_contained(kKeys, entry.first.str()))
      return fail("unknown request key '" + entry.first.str() + "'");
  CompileRequest compile;
  bool ok = readString(*object, "model", compile.modelPath) &&
            readString(*object, "out", compile.outDir) &&
            readString(*object, "cluster", compile.cluster) &&
            readInteger(*object, "nodes", compile.nodes) &&
            readInteger(*object, "ranks_per_node", compile.ranksPerNode) &&
            readString(*object, "planner", compile.planner) &&
            readString(*object, "force_sharding", compile.forceSharding) &&
            readString(*object, "plan", compile.planFile) &&
            readInteger(*object, "opt_level", compile.optLevel) &&
            readBool(*object, "force_co_optimization",
                     compile.forceCoOptimization) &&
            readBool(*object, "pipeline_input_dist",
                     compile.pipelineInputDist) &&
            readString(*object, "exchange_precision",
                       compile.exchangePrecision) &&
            readBool(*object, "train", compile.train) &&
            readString(*object, "target", compile.target) &&
            readString(*object, "target_cpu", compile.targetCpu) &&
            readStrings(*object, "cuda_chips", compile.cudaChips) &&
            readInteger(*object, "max_table_rows", compile.maxTableRows);
  if (!ok)
    return fail("a request key has the wrong type (strings for paths and "
                "names, integers for counts, booleans for flags, a list of "
                "strings for cuda_chips)");
  if (compile.modelPath.empty() || compile.outDir.empty())
    return fail("the request needs 'model' and 'out'");
  return wrap(compileModel(compile, reportStream, errorStream));
}

MlirLogicalResult braidSimulateCollective(MlirStringRef kind, double bytes,
                                          int64_t ranks, int64_t nodes,
                                          MlirStringRef hardware,
                                          MlirStringCallback result,
                                          MlirStringCallback errors,
                                          void *userData) {
  CallbackStream resultStream(result, userData), errorStream(errors, userData);
  llvm::Expected<cluster::HardwareDesc> hw =
      cluster::loadHardware(unwrap(hardware));
  if (!hw) {
    errorStream << "braid.sim: error: " << llvm::toString(hw.takeError())
                << "\n";
    return mlirLogicalResultFailure();
  }
  llvm::Expected<cost::CollectiveEstimate> estimate =
      cost::estimateCollectiveRequest(*hw, unwrap(kind), bytes, ranks, nodes);
  if (!estimate) {
    errorStream << "braid.sim: error: " << llvm::toString(estimate.takeError())
                << "\n";
    return mlirLogicalResultFailure();
  }
  resultStream << llvm::json::Value(
      llvm::json::Object{{"time_us", estimate->timeUs},
                         {"algbw_GBps", estimate->algbwGBps},
                         {"busbw_GBps", estimate->busbwGBps},
                         {"algorithm", estimate->algorithm}});
  return mlirLogicalResultSuccess();
}

MlirLogicalResult braidImportModel(MlirStringRef json, MlirStringRef fileName,
                                   MlirStringCallback output,
                                   MlirStringCallback errors, void *userData) {
  CallbackStream outputStream(output, userData), errorStream(errors, userData);
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context, errorStream);
  OwningOpRef<ModuleOp> module =
      importModelJson(unwrap(json), unwrap(fileName), &context);
  if (!module || failed(verify(*module)))
    return mlirLogicalResultFailure();
  module->print(outputStream);
  outputStream << "\n";
  return mlirLogicalResultSuccess();
}

MlirLogicalResult braidRunPipeline(MlirStringRef module,
                                   MlirStringRef pipeline,
                                   MlirStringCallback output,
                                   MlirStringCallback errors, void *userData) {
  braidRegisterAllPasses();
  CallbackStream outputStream(output, userData), errorStream(errors, userData);
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context, errorStream);
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(unwrap(module), "<module>"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> parsed =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!parsed)
    return mlirLogicalResultFailure();
  PassManager pm(&context);
  if (failed(parsePassPipeline(unwrap(pipeline), pm, errorStream))) {
    errorStream << "\n";
    return mlirLogicalResultFailure();
  }
  if (failed(pm.run(*parsed)))
    return mlirLogicalResultFailure();
  parsed->print(outputStream);
  outputStream << "\n";
  return mlirLogicalResultSuccess();
}
