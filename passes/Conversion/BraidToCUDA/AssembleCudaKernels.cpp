//===- AssembleCudaKernels.cpp - PTX to cubins and one fat binary ---------===//
//
// This file implements braid-assemble-cuda-kernels: every gpu.binary's PTX
// objects (one per chip, from gpu-module-to-binary) are assembled by the
// CUDA toolkit's ptxas into cubins, refused if they spill registers, and
// packed by fatbinary, with the newest chip's PTX, into one fat binary that
// the host loads through the driver, which picks the device's cubin.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/CudaToolkit.h"
#include "braid/Conversion/Passes.h"
#include "braid/Support/AtomicOutput.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

#include <cstdlib>

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDASSEMBLECUDAKERNELSPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// `path` if it names an executable, else empty.
static std::string ifExecutable(const Twine &path) {
  std::string text = path.str();
  return llvm::sys::fs::can_execute(text) ? text : "";
}

std::string mlir::braid::findPtxas(StringRef toolkit) {
  if (const char *fromEnv = std::getenv("BRAID_PTXAS"))
    return ifExecutable(fromEnv);
  if (!toolkit.empty())
    return ifExecutable(joinPath(joinPath(toolkit, "bin"), "ptxas"));
  if (std::string configured = ifExecutable(BRAID_PTXAS_PATH);
      !configured.empty())
    return configured;
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  return ifExecutable("/usr/local/cuda/bin/ptxas");
}

std::string mlir::braid::findFatbinary(StringRef ptxas) {
  if (std::string beside = ifExecutable(
          joinPath(llvm::sys::path::parent_path(ptxas), "fatbinary"));
      !beside.empty())
    return beside;
  if (llvm::ErrorOr<std::string> onPath =
          llvm::sys::findProgramByName("fatbinary"))
    return *onPath;
  return ifExecutable("/usr/local/cuda/bin/fatbinary");
}

std::string mlir::braid::toolkitOfPtxas(StringRef ptxas) {
  return llvm::sys::path::parent_path(llvm::sys::path::parent_path(ptxas))
      .str();
}

namespace {

/// What ptxas -v reports of one kernel.
struct KernelResources {
  int64_t registers = -1, stackBytes = 0, spillStoreBytes = 0,
          spillLoadBytes = 0;
};

/// One chip's object of a kernel, once assembled.
struct ChipObject {
  gpu::ObjectAttr object;
  std::string chip;
  /// The architecture as fatbinary names it: "90" for sm_90, "90a" for
  /// sm_90a.
  std::string sm;
  std::string ptxPath, cubinPath;
  KernelResources resources;
};

/// Runs `program` with `args`, its output and errors in `logPath`; returns
/// the exit code (-1 if it did not start) and the log's text.
static int runLogged(StringRef program, ArrayRef<StringRef> args,
                     StringRef logPath, std::string &log) {
  std::optional<StringRef> redirects[] = {std::nullopt, logPath, logPath};
  std::string launchError;
  int code = llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects,
                                       0, 0, &launchError);
  log.clear();
  if (auto text = llvm::MemoryBuffer::getFile(logPath))
    log = (*text)->getBuffer().trim().str();
  llvm::sys::fs::remove(logPath);
  if (!launchError.empty())
    log = launchError;
  return code;
}

/// Reads ptxas -v's report of one kernel.
static KernelResources parsePtxasReport(StringRef report) {
  KernelResources resources;
  llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill "
                    "stores, ([0-9]+) bytes spill loads");
  llvm::Regex used("Used ([0-9]+) registers");
  SmallVector<StringRef> groups;
  if (frame.match(report, &groups)) {
    llvm::to_integer(groups[1], resources.stackBytes);
    llvm::to_integer(groups[2], resources.spillStoreBytes);
    llvm::to_integer(groups[3], resources.spillLoadBytes);
  }
  if (used.match(report, &groups))
    llvm::to_integer(groups[1], resources.registers);
  return resources;
}

/// The chip's number for ordering (90 for sm_90a); -1 if it has none.
static int64_t chipNumber(StringRef sm) {
  int64_t number = -1;
  StringRef digits = sm.take_while(llvm::isDigit);
  if (digits.empty() || digits.getAsInteger(10, number))
    return -1;
  return number;
}

struct AssembleCudaKernelsPass
    : braid::impl::BraidAssembleCudaKernelsPassBase<AssembleCudaKernelsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Assembles one binary's objects in `workDir`, adding its kernels.json
  /// entries to `listed` and its chips, where new, to `chipNames`.
  LogicalResult assemble(gpu::BinaryOp binary, StringRef workDir,
                         llvm::json::Array &listed,
                         SmallVectorImpl<std::string> &chipNames);

  std::string ptxas, fatbinary;
};

} // namespace

LogicalResult
AssembleCudaKernelsPass::assemble(gpu::BinaryOp binary, StringRef workDir,
                                  llvm::json::Array &listed,
                                  SmallVectorImpl<std::string> &chipNames) {
  SmallVector<ChipObject> chips;
  for (auto object : binary.getObjects().getAsRange<gpu::ObjectAttr>()) {
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
    if (!target || object.getFormat() != gpu::CompilationTarget::Assembly)
      return binary.emitError()
             << "expected PTX objects for NVVM targets (gpu-module-to-binary's "
                "'isa' format)";
    ChipObject chip;
    chip.object = object;
    chip.chip = target.getChip().str();
    if (!StringRef(chip.chip).starts_with("sm_") ||
        chipNumber(StringRef(chip.chip).drop_front(3)) < 0)
      return binary.emitError() << "cannot assemble for chip '" << chip.chip
                                << "': expected sm_NN";
    chip.sm = chip.chip.substr(3);
    if (llvm::any_of(chips,
                     [&](const ChipObject &c) { return c.chip == chip.chip; }))
      return binary.emitError() << "two objects for chip " << chip.chip;
    chips.push_back(std::move(chip));
  }
  if (chips.empty())
    return binary.emitError() << "has no object to assemble";
  llvm::stable_sort(chips, [](const ChipObject &a, const ChipObject &b) {
    return chipNumber(a.sm) < chipNumber(b.sm);
  });

  std::string logPath = joinPath(workDir, binary.getName().str() + ".log");
  for (ChipObject &chip : chips) {
    std::string stem = (binary.getName() + "." + chip.chip).str();
    chip.ptxPath = joinPath(workDir, stem + ".ptx");
    chip.cubinPath = joinPath(workDir, stem + ".cubin");
    if (llvm::Error error =
            writeFileAtomically(chip.ptxPath, [&](llvm::raw_ostream &os) {
              os << chip.object.getObject().getValue();
            }))
      return binary.emitError() << llvm::toString(std::move(error));
    std::string arch = "-arch=" + chip.chip;
    // ptxas fits a kernel whose block size it knows (.maxntid) to the
    // registers that fill the SM with threads, 32 for 128-thread blocks,
    // and spills what does not fit. Where it spills, the kernel is
    // assembled again with ptxas free to use registers over occupancy
    // (--register-usage-level=10); a kernel that still spills fails.
    for (StringRef usage : {StringRef(), StringRef("--register-usage-level=10")}) {
      SmallVector<StringRef> args = {ptxas, arch, "-O3", "-v",
                                     "--warn-on-spills"};
      if (!usage.empty())
        args.push_back(usage);
      args.append({StringRef(chip.ptxPath), "-o", StringRef(chip.cubinPath)});
      std::string report;
      if (runLogged(ptxas, args, logPath, report) != 0)
        return binary.emitError()
               << "ptxas failed on kernel '" << binary.getName() << "' for "
               << chip.chip << ": " << report;
      chip.resources = parsePtxasReport(report);
      if (chip.resources.spillStoreBytes == 0 &&
          chip.resources.spillLoadBytes == 0)
        break;
    }
    if (chip.resources.spillStoreBytes > 0 || chip.resources.spillLoadBytes > 0)
      return binary.emitError()
             << "kernel '" << binary.getName() << "' spills registers on "
             << chip.chip << " (" << chip.resources.spillStoreBytes
             << " bytes stored, " << chip.resources.spillLoadBytes
             << " loaded; " << chip.resources.registers << " registers)";
    ++numCubins;
  }

  // Every chip's cubin, and the newest chip's PTX for GPUs newer than any.
  std::string fatbinPath =
      joinPath(workDir, binary.getName().str() + ".fatbin");
  std::string create = "--create=" + fatbinPath;
  SmallVector<std::string> images;
  for (const ChipObject &chip : chips)
    images.push_back("--image3=kind=elf,sm=" + chip.sm +
                     ",file=" + chip.cubinPath);
  images.push_back("--image3=kind=ptx,sm=" + chips.back().sm +
                   ",file=" + chips.back().ptxPath);
  SmallVector<StringRef> args = {fatbinary, "--64", create};
  for (const std::string &image : images)
    args.push_back(image);
  std::string log;
  if (runLogged(fatbinary, args, logPath, log) != 0)
    return binary.emitError() << "fatbinary failed on kernel '"
                              << binary.getName() << "': " << log;
  auto fatbin = llvm::MemoryBuffer::getFile(fatbinPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!fatbin)
    return binary.emitError() << "cannot read '" << fatbinPath
                              << "': " << fatbin.getError().message();

  MLIRContext *context = &getContext();
  Builder builder(context);
  SmallVector<Attribute> cubinChips;
  for (const ChipObject &chip : chips)
    cubinChips.push_back(builder.getStringAttr(chip.chip));
  DictionaryAttr properties = builder.getDictionaryAttr(
      {builder.getNamedAttr("cubins", builder.getArrayAttr(cubinChips)),
       builder.getNamedAttr("ptx", builder.getStringAttr(chips.back().chip))});
  const ChipObject &newest = chips.back();
  auto object = gpu::ObjectAttr::get(
      context, newest.object.getTarget(), gpu::CompilationTarget::Fatbin,
      builder.getStringAttr((*fatbin)->getBuffer()), properties,
      newest.object.getKernels());
  binary.setObjectsAttr(builder.getArrayAttr({object}));
  ++numKernels;

  for (const ChipObject &chip : chips) {
    if (!llvm::is_contained(chipNames, chip.chip))
      chipNames.push_back(chip.chip);
    listed.push_back(llvm::json::Object{
        {"name", binary.getName().str()},
        {"chip", chip.chip},
        {"ptx", llvm::sys::path::filename(chip.ptxPath).str()},
        {"cubin", llvm::sys::path::filename(chip.cubinPath).str()},
        {"fatbin", llvm::sys::path::filename(fatbinPath).str()},
        {"registers", chip.resources.registers},
        {"stack_bytes", chip.resources.stackBytes},
        {"spill_store_bytes", chip.resources.spillStoreBytes},
        {"spill_load_bytes", chip.resources.spillLoadBytes}});
  }
  return success();
}

void AssembleCudaKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (module.getOps<gpu::BinaryOp>().empty())
    return;
  ptxas = findPtxas(toolkit);
  if (ptxas.empty()) {
    module.emitError() << "assembling the kernels needs the CUDA toolkit's "
                          "ptxas: none in "
                       << (toolkit.empty()
                               ? "$BRAID_PTXAS, on PATH or in "
                                 "/usr/local/cuda/bin"
                               : "$BRAID_PTXAS or '" + toolkit + "/bin'");
    return signalPassFailure();
  }
  fatbinary = findFatbinary(ptxas);
  if (fatbinary.empty()) {
    module.emitError() << "assembling the kernels needs the CUDA toolkit's "
                          "fatbinary: none beside '"
                       << ptxas << "', on PATH or in /usr/local/cuda/bin";
    return signalPassFailure();
  }

  // Without kernel-dir the files live in a private directory, removed after.
  std::string workDir = kernelDir;
  bool temporary = workDir.empty();
  SmallString<128> created;
  std::error_code ec =
      temporary ? llvm::sys::fs::createUniqueDirectory("braid-kernels", created)
                : llvm::sys::fs::create_directories(workDir);
  if (temporary)
    workDir = created.str().str();
  if (ec) {
    module.emitError() << "cannot create the kernel directory '" << workDir
                       << "': " << ec.message();
    return signalPassFailure();
  }
  llvm::json::Array listed;
  SmallVector<std::string> chipNames;
  bool failed = false;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    if (mlir::failed(assemble(binary, workDir, listed, chipNames))) {
      failed = true;
      break;
    }
  if (temporary)
    llvm::sys::fs::remove_directories(workDir);
  if (failed)
    return signalPassFailure();
  if (temporary)
    return;

  llvm::json::Object manifest{{"chips", llvm::json::Array(chipNames)},
                              {"kernels", std::move(listed)}};
  if (llvm::Error error = writeFileAtomically(
          joinPath(workDir, "kernels.json"), [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)))
               << "\n";
          })) {
    module.emitError() << llvm::toString(std::move(error));
    return signalPassFailure();
  }
}
