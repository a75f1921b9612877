//===- FuzzCompile.cpp - Fuzz parse, verify and the compile pipeline ------===//
//
// Input: Braid IR text. What parses and verifies goes through the registered
// braid-compile pipeline (braid-shard, then braid-co-optimize) for the
// module's cluster, or two ranks of dgx-a100 when it names none. The
// pipeline must either fail with an error or leave a module that verifies;
// a crash, a sanitizer report or a silent failure is a bug.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "FuzzSupport.h"

#include "braid/Pipelines/Pipelines.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  braid::registerBraidPassesAndPipelines();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  braid::fuzz::FuzzContext fuzz;
  MLIRContext &context = fuzz.context;
  // MLIR's lexer needs a NUL after the text, as the tools' file buffers
  // have; libFuzzer's data has none.
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  if (!module)
    return 0; // parseSourceString verifies, and reports what fails
  braid::CompilePipelineOptions options;
  if (!(*module)->hasAttr("braid.cluster")) {
    options.cluster = "dgx-a100";
    options.nodes = 1;
    options.ranksPerNode = 2;
  }
  PassManager pm(&context);
  braid::buildCompilePipeline(pm, options);
  fuzz.diagnosed = false;
  if (failed(pm.run(*module))) {
    if (!fuzz.diagnosed)
      braid::fuzz::invariantFailed("the pipeline failed without an error");
    return 0;
  }
  if (failed(verify(*module)))
    braid::fuzz::invariantFailed("the per-rank program does not verify");
  return 0;
}
