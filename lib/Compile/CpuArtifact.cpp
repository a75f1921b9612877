//===- CpuArtifact.cpp - The --target cpu artifact ------------------------===//
//
// This file lowers a per-rank program with braid-lower-cpu, translates it to
// LLVM IR, compiles it with llc and links OUT/libprogram.so against the
// Braid runtime, OpenMP and MLIR's C runner utilities (memref copies). The
// library carries its manifest (the host's view of its arguments and
// results) as the string `braid_manifest`; OUT/manifest.json is a copy.
//
//===----------------------------------------------------------------------===//

#include "braid/Compile/CpuArtifact.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Conversion/Passes.h"
#include "braid/Interp/Bindings.h"
#include "braid/Support/AtomicOutput.h"
#include "braid/Pipelines/Pipelines.h"
#include "braidrt/program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::braid;

/// "f32", "f16", "i64", ... for the manifest.
static std::string dtypeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return name;
}

static llvm::json::Object describe(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  llvm::json::Array shape;
  for (int64_t size : tensor.getShape())
    shape.push_back(ShapedType::isDynamic(size) ? int64_t(-1) : size);
  return llvm::json::Object{{"shape", std::move(shape)},
                            {"dtype", dtypeName(tensor.getElementType())}};
}

/// The rows and columns of `table` that each rank passes: the whole table
/// for a whole-table argument, else the rank's shard (empty where it holds
/// none).
static llvm::json::Array tableSlices(TableOp table, bool whole,
                                     int64_t ranks) {
  llvm::json::Array slices;
  for (int64_t rank = 0; rank < ranks; ++rank) {
    TableShard mine{rank, 0, 0, 0, 0};
    if (whole || !table.getPlacementAttr())
      mine = {rank, 0, table.getNumRows(), 0, table.getDim()};
    else
      for (const TableShard &shard : table.getPlacementAttr().getShards(
               table.getNumRows(), table.getDim()))
        if (shard.rank == rank)
          mine = shard;
    slices.push_back(llvm::json::Object{{"row_offset", mine.rowOffset},
                                        {"rows", mine.rows},
                                        {"col_offset", mine.colOffset},
                                        {"cols", mine.cols}});
  }
  return slices;
}

/// The host's view of `func` after convert-braid-to-cpu; `program` (before
/// it) holds the tables' placements.
static FailureOr<llvm::json::Object> manifestOf(func::FuncOp func,
                                                ModuleOp program,
                                                ModuleOp model, int64_t ranks,
                                                ArrayRef<int64_t> batchSplit) {
  llvm::json::Array arguments, results;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Type type = func.getArgument(i).getType();
    if (!isa<RankedTensorType>(type))
      return func.emitError() << "argument " << i << " of type " << type
                              << " has no host representation";
    StringRef kind, name;
    for (auto [attrName, kindName] :
         {std::pair{BraidDialect::kInputAttrName, "input"},
          std::pair{BraidDialect::kParamAttrName, "param"},
          std::pair{BraidDialect::kTableAttrName, "table"},
          std::pair{BraidDialect::kStateAttrName, "state"},
          std::pair{BraidDialect::kTableStateAttrName, "table_state"},
          std::pair{BraidDialect::kNextInputAttrName, "next_input"},
          std::pair{BraidDialect::kCarriedAttrName, "carried"}})
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, attrName)) {
        kind = kindName;
        name = attr.getValue();
      }
    if (kind.empty())
      return func.emitError() << "argument " << i
                              << " is neither an input, a parameter nor a "
                                 "table";
    llvm::json::Object entry = describe(type);
    entry["name"] = name;
    entry["kind"] = kind;
    // Each rank's part of a table, so that a host needs no placement.
    // (A table's optimizer state is sliced like its shard.)
    if (kind == "table" || kind == "table_state") {
      auto table = program.lookupSymbol<TableOp>(name);
      if (!table)
        return func.emitError() << "table argument '" << name
                                << "' names no braid.table";
      // Whole when the table's argument has the table's static shape.
      bool whole = false;
      for (unsigned j = 0; j < func.getNumArguments(); ++j)
        if (auto attr = func.getArgAttrOfType<StringAttr>(
                j, BraidDialect::kTableAttrName))
          if (attr.getValue() == name)
            whole = cast<RankedTensorType>(func.getArgument(j).getType())
                        .hasStaticShape();
      entry["slices"] = tableSlices(table, whole, ranks);
    }
    // A sharded optimizer state or a parameter stored as blocks: the ranks
    // whose slices along `shard_dim`, in order, make the whole (rank 0's
    // group; every group holds the same one).
    auto groups = func.getArgAttrOfType<ReplicaGroupsAttr>(
        i, BraidDialect::kStateShardAttrName);
    if (!groups)
      groups = func.getArgAttrOfType<ReplicaGroupsAttr>(
          i, BraidDialect::kParamShardAttrName);
    if (groups) {
      llvm::json::Array shardRanks;
      for (int64_t member : interp::shardRanksOf(groups))
        shardRanks.push_back(member);
      entry["shard_ranks"] = std::move(shardRanks);
      entry["shard_dim"] = interp::getShardDim(func, i);
    }
    arguments.push_back(std::move(entry));
  }
  for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
    if (!isa<RankedTensorType>(type))
      return func.emitError() << "result of type " << type
                              << " has no host representation";
    llvm::json::Object entry = describe(type);
    // A training step's results name what they update; a pipelined form's
    // and an input distribution's, the values the next call takes.
    for (auto [attrName, kindName] :
         {std::pair{BraidDialect::kOutputAttrName, "output"},
          std::pair{BraidDialect::kParamAttrName, "param"},
          std::pair{BraidDialect::kStateAttrName, "state"},
          std::pair{BraidDialect::kCarriedAttrName, "carried"}})
      if (auto attr = func.getResultAttrOfType<StringAttr>(index, attrName)) {
        entry["kind"] = kindName;
        entry["name"] = attr.getValue();
      }
    results.push_back(std::move(entry));
  }
  llvm::json::Array split;
  for (int64_t samples : batchSplit)
    split.push_back(samples);
  if (int64_t(batchSplit.size()) != ranks)
    return program.emitError() << "an artifact needs a per-rank program "
                                  "whose braid.batch_split has one entry per "
                                  "rank";
  // The global program's signature: a host binds global inputs from it
  // exactly as the reference semantics binds model.mlir's, then splits
  // them by `batch_split`.
  FailureOr<func::FuncOp> global = interp::findEntryFunction(model);
  if (failed(global))
    return failure();
  return llvm::json::Object{
      {"global", interp::signatureToJson(interp::describeFunction(*global))},
      {"version", 1},
      {"ranks", ranks},
      {"batch_split", std::move(split)},
      {"function", func.getSymName()},
      {"entry", ("braid_entry_" + func.getSymName()).str()},
      {"library", "libprogram.so"},
      {"arguments", std::move(arguments)},
      {"results", std::move(results)}};
}

/// opt's -O3 pipeline for `cpu`, as text, without called-value-propagation.
/// That pass only annotates indirect calls with their possible callees, and
/// generated programs make none (OpenMP's outlined bodies are called
/// directly by the runtime), but it is superlinear in the pointer arguments
/// of a module: with a thousand tables, whose entry point takes some 9,000
/// pointers (two per buffer descriptor), it took 123 of opt's 149 s.
static FailureOr<std::string> optimizationPipeline(Operation *at,
                                                   StringRef opt,
                                                   StringRef cpu) {
  llvm::SmallString<128> textPath;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "braid-passes", "txt", fd, textPath))
    return at->emitError() << "cannot create a temporary file: "
                           << ec.message();
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover remover(textPath);
  std::optional<StringRef> redirects[] = {StringRef(""), textPath.str(),
                                          std::nullopt};
  std::string error;
  int code = llvm::sys::ExecuteAndWait(
      opt, {opt, "-O3", cpu, "-print-pipeline-passes", "-disable-output"},
      std::nullopt, redirects, 0, 0, &error);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(textPath);
  if (code != 0 || !text)
    return at->emitError() << "'" << opt
                           << " -O3 -print-pipeline-passes' failed"
                           << (error.empty() ? "" : ": " + error);
  std::string pipeline = (*text)->getBuffer().trim().str();
  StringRef unwanted = ",called-value-propagation";
  size_t position = pipeline.find(unwanted);
  if (position != std::string::npos)
    pipeline.erase(position, unwanted.size());
  return pipeline;
}

/// Where libbraidrt is: `lib/` beside this tool's `bin/` (the build tree
/// and an install prefix are laid out alike), else the build tree's.
static std::string findRuntimeDir() {
  std::string self = llvm::sys::fs::getMainExecutable("braid-compile", nullptr);
  if (!self.empty()) {
    llvm::SmallString<256> dir(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
    llvm::sys::path::append(dir, "lib");
    llvm::SmallString<256> library(dir);
    llvm::sys::path::append(library, "libbraidrt.so");
    if (llvm::sys::fs::exists(library))
      return std::string(dir);
  }
  return BRAID_RUNTIME_DIR;
}

static LogicalResult run(Operation *at, StringRef program,
                         ArrayRef<StringRef> args) {
  std::string error;
  int code = llvm::sys::ExecuteAndWait(program, args, std::nullopt, {}, 0, 0,
                                       &error);
  if (code != 0) {
    std::string command;
    for (StringRef arg : args)
      command += arg.str() + " ";
    return at->emitError() << "'" << command << "' failed"
                           << (error.empty() ? "" : ": " + error);
  }
  return success();
}

/// Writes one library, OUT/libprogram.so, for the public function of
/// `program` that `keep` accepts (the others are dropped), and its
/// manifest, which `extra` extends.
static LogicalResult
writeOneArtifact(ModuleOp program, ModuleOp model, StringRef outDir,
                 int64_t ranks, StringRef targetCpu,
                 const ArtifactTarget &target,
                 llvm::function_ref<bool(func::FuncOp)> keep,
                 llvm::json::Object extra) {
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(program->clone()));
  SmallVector<func::FuncOp> dropped = llvm::to_vector(llvm::make_filter_range(
      module->getOps<func::FuncOp>(),
      [&](func::FuncOp func) { return func.isPublic() && !keep(func); }));
  for (func::FuncOp func : dropped)
    func.erase();
  // A pipelined form names its plain function and input distribution, which
  // live in libraries of their own; the manifest says where (`extra`).
  for (auto func : module->getOps<func::FuncOp>()) {
    func->removeAttr(BraidDialect::kPipelinedOfAttrName);
    func->removeAttr(BraidDialect::kInputDistAttrName);
  }
  auto split = (*module)->getAttrOfType<DenseI64ArrayAttr>(
      BraidDialect::kBatchSplitAttrName);
  PassManager compute(module->getContext());
  if (target.profileOps)
    compute.addPass(createBraidProfileOpsPass());
  compute.addPass(createConvertBraidToCPUPass(target.convertToCPU));
  if (failed(compute.run(*module)))
    return failure();
  auto funcs = llvm::to_vector(
      llvm::make_filter_range(module->getOps<func::FuncOp>(),
                              [](func::FuncOp f) { return f.isPublic(); }));
  if (funcs.size() != 1)
    return module->emitError() << "--target " << target.name
                               << " needs exactly one function, found "
                               << funcs.size();
  FailureOr<llvm::json::Object> manifest = manifestOf(
      funcs.front(), program, model, ranks,
      split ? split.asArrayRef() : ArrayRef<int64_t>{});
  if (failed(manifest))
    return failure();
  // Whether the ranks exchange data, read from the program before lowering.
  bool exchanges = false;
  program.walk([&](Operation *op) {
    exchanges =
        exchanges || isa<CollectiveOpInterface, AllToAllVOp, AllToAllVStartOp,
                          FusedAllToAllVStartOp>(op);
  });
  (*manifest)["exchanges"] = exchanges;
  for (auto &[key, value] : extra)
    (*manifest)[key] = std::move(value);
  (*manifest)["target"] = target.name;
  // The timed ops by index, as braid-profile-ops named them.
  if (auto profiled =
          (*module)->getAttrOfType<ArrayAttr>(
              BraidDialect::kProfiledOpsAttrName)) {
    llvm::json::Array names;
    for (auto name : profiled.getAsValueRange<StringAttr>())
      names.push_back(name.str());
    (*manifest)["profiled_ops"] = std::move(names);
  }

  if (failed(target.lowerToLLVM(*module, outDir)))
    return failure();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "braid_program");
  if (!llvmModule)
    return module->emitError() << "translation to LLVM IR failed";

  // The library describes itself: the manifest travels inside it as the
  // exported, NUL-terminated string `braid_manifest`, which is what
  // braid-run reads (manifest.json is a copy for people).
  std::string manifestText =
      llvm::formatv("{0:2}", llvm::json::Value(std::move(*manifest))).str();
  llvm::Constant *manifestData = llvm::ConstantDataArray::getString(
      llvmContext, manifestText, /*AddNull=*/true);
  new llvm::GlobalVariable(*llvmModule, manifestData->getType(),
                           /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, manifestData,
                           "braid_manifest");
  // The slot of the library's content hash, which braidrt_program_seal
  // fills once the library is linked; the loader refuses a library whose
  // bytes no longer match it.
  llvm::Constant *hashSlot = llvm::ConstantDataArray::getString(
      llvmContext,
      llvm::StringRef(BRAIDRT_HASH_MAGIC "\0\0\0\0\0\0\0\0", 24),
      /*AddNull=*/false);
  new llvm::GlobalVariable(*llvmModule, hashSlot->getType(),
                           /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, hashSlot,
                           "braid_content_hash");

  std::string irPath = joinPath(outDir, "program.ll");
  std::string objectPath = joinPath(outDir, "program.o");
  std::string libraryPath = joinPath(outDir, "libprogram.so");
  std::string manifestPath = joinPath(outDir, "manifest.json");
  if (llvm::Error error = writeFileAtomically(
          irPath, [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); }))
    return module->emitError() << llvm::toString(std::move(error));
  // MLIR's LLVM IR is unoptimized: opt runs the middle end (inlining,
  // LICM, GVN, vectorization; -O3 less one pass, see
  // optimizationPipeline), llc the back end, both for the target CPU.
  std::string cpu = ("-mcpu=" + targetCpu).str();
  std::string optimizedPath = joinPath(outDir, "program.opt.bc");
  std::string opt = BRAID_LLVM_TOOLS_DIR "/opt";
  FailureOr<std::string> passes = optimizationPipeline(*module, opt, cpu);
  if (failed(passes))
    return failure();
  std::string passesFlag = "-passes=" + *passes;
  if (failed(run(*module, opt,
                 {opt, passesFlag, cpu, irPath, "-o", optimizedPath})))
    return failure();
  std::string llc = BRAID_LLVM_TOOLS_DIR "/llc";
  if (failed(run(*module, llc,
                 {llc, "-O3", cpu, "-filetype=obj", "-relocation-model=pic",
                  optimizedPath, "-o", objectPath})))
    return failure();
  llvm::ErrorOr<std::string> linker = llvm::sys::findProgramByName("cc");
  if (!linker)
    return module->emitError() << "no C compiler driver 'cc' on PATH to link "
                               << libraryPath;
  std::string runtimeDir = findRuntimeDir(), llvmLibDir = BRAID_LLVM_LIB_DIR;
  std::string runtimeRpath = "-Wl,-rpath," + runtimeDir;
  std::string llvmRpath = "-Wl,-rpath," + llvmLibDir;
  std::string runtimeLink = "-L" + runtimeDir, llvmLink = "-L" + llvmLibDir;
  for (StringRef library : target.runtimeLibraries) {
    llvm::SmallString<256> file(runtimeDir);
    llvm::sys::path::append(file, "lib" + library + ".so");
    if (!llvm::sys::fs::exists(file))
      return module->emitError()
             << "--target " << target.name << " links against '" << file
             << "', which this build of Braid does not have"
             << (library == "braidrt_cuda"
                     ? " (configure with the CUDA toolkit, cuBLASLt and "
                       "NCCL; BRAID_ENABLE_CUDA)"
                     : "");
  }
  SmallVector<std::string> linkArguments = {*linker, "-shared", objectPath,
                                            "-o", libraryPath, runtimeLink};
  for (StringRef library : target.runtimeLibraries)
    linkArguments.push_back(("-l" + library).str());
  for (StringRef library : target.systemLibraries) {
    if (!llvm::sys::fs::exists(library))
      return module->emitError() << "--target " << target.name
                                 << " links against '" << library
                                 << "', which does not exist";
    linkArguments.push_back(library.str());
    linkArguments.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(library)).str());
  }
  for (StringRef argument : {llvmLink, std::string("-lomp"),
                             std::string("-lmlir_c_runner_utils"),
                             runtimeRpath, llvmRpath})
    linkArguments.push_back(argument.str());
  SmallVector<StringRef> linkArgs(linkArguments.begin(), linkArguments.end());
  if (failed(run(*module, *linker, linkArgs)))
    return failure();
  if (braidrt_program_seal(libraryPath.c_str()) != 0)
    return module->emitError() << braidrt_program_last_error();
  if (llvm::Error error = writeFileAtomically(
          manifestPath,
          [&](llvm::raw_ostream &os) { os << manifestText << "\n"; }))
    return module->emitError() << llvm::toString(std::move(error));
  return success();
}

LogicalResult mlir::braid::writeProgramArtifact(
    ModuleOp program, ModuleOp model, StringRef outDir, int64_t ranks,
    StringRef targetCpu, const ArtifactTarget &target) {
  // A training artifact runs the training step alone (it runs the forward
  // pass itself). The pipelined forms (braid-pipeline-input-dist) and their
  // input distribution functions are not the plain artifact's: program.mlir
  // keeps them for braid-run --reference --pipelined and braid-sim.
  auto trainStep = program.lookupSymbol<func::FuncOp>("train_step");
  auto isEntry = [&](func::FuncOp func) {
    return !isPipelineCompanion(func) &&
           (!trainStep || func.getSymName() == "train_step");
  };
  if (failed(writeOneArtifact(program, model, outDir, ranks, targetCpu, target,
                              isEntry, llvm::json::Object())))
    return failure();
  // (braid-compile removed the OUT/pipelined an earlier compile left.)
  if (!target.pipelinedForms)
    return success();
  // The entry function's pipelined form, where the pass added one, as two
  // more libraries: OUT/pipelined (the form) and OUT/pipelined/input_dist
  // (the first batch's input distribution); braid-run OUT --pipelined runs
  // them (--steps K for a training step).
  func::FuncOp entry, pipelined, inputDist;
  for (auto func : program.getOps<func::FuncOp>())
    if (func.isPublic() && isEntry(func))
      entry = func;
  for (auto func : program.getOps<func::FuncOp>())
    if (auto of = func->getAttrOfType<FlatSymbolRefAttr>(
            BraidDialect::kPipelinedOfAttrName);
        entry && of && of.getValue() == entry.getSymName())
      pipelined = func;
  if (!pipelined)
    return success();
  if (auto dist = pipelined->getAttrOfType<FlatSymbolRefAttr>(
          BraidDialect::kInputDistAttrName))
    inputDist = program.lookupSymbol<func::FuncOp>(dist);
  if (!inputDist)
    return pipelined.emitError() << "names no input distribution function";
  std::string pipelinedDir = joinPath(outDir, "pipelined");
  std::string inputDistDir = joinPath(pipelinedDir, "input_dist");
  if (std::error_code ec = llvm::sys::fs::create_directories(inputDistDir))
    return pipelined.emitError()
           << "cannot create '" << inputDistDir << "': " << ec.message();
  auto named = [](func::FuncOp wanted) {
    return [name = wanted.getSymName()](func::FuncOp func) {
      return func.getSymName() == name;
    };
  };
  if (failed(writeOneArtifact(
          program, model, pipelinedDir, ranks, targetCpu, target,
          named(pipelined),
          llvm::json::Object{{"pipelined_of", entry.getSymName()},
                             {"input_dist", "input_dist"}})))
    return failure();
  return writeOneArtifact(
      program, model, inputDistDir, ranks, targetCpu, target, named(inputDist),
      llvm::json::Object{{"input_dist_of", pipelined.getSymName()}});
}

LogicalResult mlir::braid::writeCpuArtifact(ModuleOp program, ModuleOp model,
                                            StringRef outDir, int64_t ranks,
                                            StringRef targetCpu,
                                            bool embeddingUpdateKernel,
                                            int64_t poolingLanes,
                                            int64_t catLanes,
                                            bool parallelChecks,
                                            bool profileOps) {
  ArtifactTarget cpu;
  cpu.name = "cpu";
  cpu.convertToCPU.embeddingUpdateKernel = embeddingUpdateKernel;
  cpu.convertToCPU.poolingLanes = poolingLanes;
  cpu.convertToCPU.catLanes = catLanes;
  cpu.convertToCPU.parallelChecks = parallelChecks;
  cpu.profileOps = profileOps;
  cpu.runtimeLibraries = {"braidrt"};
  cpu.pipelinedForms = true;
  cpu.lowerToLLVM = [](ModuleOp module, StringRef) {
    PassManager backend(module->getContext());
    addLowerCpuBackendPasses(backend);
    return backend.run(module);
  };
  return writeProgramArtifact(program, model, outDir, ranks, targetCpu, cpu);
}
