//===- braid-sim.cpp - Predict collective and program times ---------------===//
//
// This file implements braid-sim, the command-line face of the cost model and
// the simulator:
//
//   braid-sim collective --kind K --bytes N --ranks R --nodes M
//                        --hardware PRESET|FILE [--nccl-proto P]
//                        [--nccl-algo A] [--nccl-buffsize B]
//                        [--nccl-min-nchannels N] [--nccl-max-nchannels N]
//                        [--json]
//   braid-sim FILE.mlir|ARTIFACT_DIR --hardware PRESET|FILE [--ranks R]
//                       [--function F] [--json] [--trace OUT.json]
//                       [--expect-overlap]
//
// Bad input is an error message and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "braid/Cost/CostModel.h"
#include "braid/Support/AtomicOutput.h"
#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Interp/Bindings.h"
#include "braid/Sim/ScheduleBuilder.h"
#include "braid/Tools/ModuleLoader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::braid;
namespace cl = llvm::cl;

/// The tool's own options; --help lists only these (LLVM's are hidden).
static cl::OptionCategory toolOptions("braid-sim options");
static cl::opt<std::string>
    input(cl::cat(toolOptions), cl::Positional, cl::Required,
          cl::desc("<collective | program.mlir | artifact dir>"));
static cl::opt<std::string> hardwareName(
    cl::cat(toolOptions), "hardware",
    cl::desc("Hardware preset (dgx-a100, dgx-h100, pcie-a100x4, aws-p4d, aws-p5, "
             "gcp-a3, gcp-a3-mega, gcp-a3-ultra, azure-nd-a100-v4, "
             "azure-nd-h100-v5, oci-a100, oci-h100, oci-h200), local-cpu "
             "(this machine, calibrated on first use) or JSON file; a "
             "program's default is its braid.cluster's"));
static cl::opt<std::string>
    kindName(cl::cat(toolOptions), "kind",
             cl::desc("all_reduce | all_gather | reduce_scatter | all_to_all | "
                      "broadcast"));
static cl::opt<double>
    bytes(cl::cat(toolOptions), "bytes", cl::init(-1),
          cl::desc("Buffer size in bytes (nccl-tests' size)"));
static cl::opt<int64_t>
    ranks(cl::cat(toolOptions), "ranks", cl::init(0),
          cl::desc("Ranks (default: for a collective, the hardware's; for a "
                   "program, its braid.cluster's, else 1)"));
static cl::opt<int64_t>
    nodes(cl::cat(toolOptions), "nodes", cl::init(0),
          cl::desc("Nodes (default: ranks / ranks per node)"));
static cl::list<double>
    sizeList(cl::cat(toolOptions), "sizes", cl::CommaSeparated,
             cl::desc("collective: several buffer sizes (comma-separated), "
                      "one line each (one JSON object per line with --json)"));
static cl::opt<std::string> ncclProto(
    cl::cat(toolOptions), "nccl-proto",
    cl::desc("collective: the protocols NCCL may use, as NCCL_PROTO lists "
             "them (e.g. Simple or ^LL); replaces the hardware's"));
static cl::opt<std::string> ncclAlgo(
    cl::cat(toolOptions), "nccl-algo",
    cl::desc("collective: the algorithms NCCL may use, as NCCL_ALGO lists "
             "them (e.g. Ring,Tree); replaces the hardware's"));
static cl::opt<double> ncclBuffsize(
    cl::cat(toolOptions), "nccl-buffsize",
    cl::desc("collective: Simple's buffer in bytes, as NCCL_BUFFSIZE gives "
             "it (NCCL's default 4194304); replaces the hardware's"));
static cl::opt<int64_t> ncclMinChannels(
    cl::cat(toolOptions), "nccl-min-nchannels",
    cl::desc("collective: the fewest channels NCCL runs a collective on, as "
             "NCCL_MIN_NCHANNELS gives it; raises the hardware's "
             "comm_channels to it"));
static cl::opt<int64_t> ncclMaxChannels(
    cl::cat(toolOptions), "nccl-max-nchannels",
    cl::desc("collective: the most channels NCCL runs a collective on, as "
             "NCCL_MAX_NCHANNELS gives it; lowers the hardware's "
             "comm_channels to it"));
static cl::opt<bool> emitJson(cl::cat(toolOptions), "json",
                              cl::desc("Print one JSON object"));
static cl::opt<std::string>
    tracePath(cl::cat(toolOptions), "trace",
              cl::desc("Write the simulated timeline as a Chrome trace"));

static cl::opt<std::string>
    functionName(cl::cat(toolOptions), "function",
                 cl::desc("The function of the program to simulate (default: "
                          "its entry, @forward in a training program)"));
static cl::opt<bool> expectOverlap(
    cl::cat(toolOptions), "expect-overlap",
    cl::desc("Fail when the function starts collectives (braid-overlap, "
             "braid-async-exchanges) but no communication runs beside "
             "computation in its simulated trace"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "braid-sim: error: " << message << "\n";
  return 1;
}

static int runCollective(const cluster::HardwareDesc &hw) {
  std::vector<double> sizes(sizeList.begin(), sizeList.end());
  if (sizes.empty())
    sizes.push_back(bytes);
  int64_t r = ranks ? ranks.getValue() : hw.worldSize();
  int64_t m =
      nodes ? nodes.getValue() : (r + hw.ranksPerNode - 1) / hw.ranksPerNode;
  for (double size : sizes) {
    llvm::Expected<cost::CollectiveEstimate> estimate =
        cost::estimateCollectiveRequest(hw, kindName, size, r, m);
    if (!estimate)
      return fail(llvm::toString(estimate.takeError()));
    if (emitJson) {
      llvm::outs() << llvm::json::Value(llvm::json::Object{
                          {"time_us", estimate->timeUs},
                          {"algbw_GBps", estimate->algbwGBps},
                          {"busbw_GBps", estimate->busbwGBps},
                          {"algorithm", estimate->algorithm}})
                   << "\n";
      continue;
    }
    llvm::outs() << llvm::format(
        "%s of %.0f bytes over %lld ranks on %lld nodes (%s): %.2f us, algbw "
        "%.2f GB/s, busbw %.2f GB/s, %s\n",
        kindName.c_str(), size, (long long)r, (long long)m, hw.name.c_str(),
        estimate->timeUs, estimate->algbwGBps, estimate->busbwGBps,
        estimate->algorithm.c_str());
  }
  return 0;
}

static int runProgram() {
  // An artifact directory (braid-compile's OUT) holds its per-rank program
  // as OUT/program.mlir.
  std::string path = input;
  if (llvm::sys::fs::is_directory(path)) {
    path = (llvm::Twine(input) + "/program.mlir").str();
    if (!llvm::sys::fs::exists(path))
      return fail("'" + input + "' is a directory without program.mlir");
  }
  ModuleLoader loader;
  OwningOpRef<ModuleOp> module = loader.load(path);
  if (!module)
    return 1;
  FailureOr<func::FuncOp> func = failure();
  if (functionName.empty()) {
    func = interp::findEntryFunction(*module);
  } else if (auto named = module->lookupSymbol<func::FuncOp>(functionName);
             named && !named.isExternal()) {
    func = named;
  } else {
    return fail("'" + path + "' has no function @" + functionName);
  }
  if (failed(func))
    return 1;
  // The hardware: --hardware, else the cluster the program was compiled
  // for, shaped as that cluster (nodes and ranks per node).
  auto cluster =
      (*module)->getAttrOfType<ClusterAttr>(BraidDialect::kClusterAttrName);
  std::string hardware = hardwareName;
  if (hardware.empty() && cluster)
    hardware = cluster.getHardware().str();
  if (hardware.empty())
    return fail("'" + path + "' has no braid.cluster; name the hardware "
                "with --hardware");
  llvm::Expected<cluster::HardwareDesc> loaded =
      cluster::loadHardware(hardware);
  if (!loaded)
    return fail(llvm::toString(loaded.takeError()));
  cluster::HardwareDesc hw = *loaded;
  int64_t numRanks = ranks, perNode = hw.ranksPerNode;
  if (cluster) {
    perNode = cluster.getRanksPerNode();
    if (!numRanks)
      numRanks = cluster.getWorldSize();
    hw.nodes = cluster.getNodes();
    hw.ranksPerNode = perNode;
  }
  if (!numRanks)
    numRanks = 1;
  if (numRanks < 1 || numRanks > 4096)
    return fail("--ranks must be between 1 and 4096");
  FailureOr<sim::ProgramPrediction> prediction =
      sim::simulateProgram(*func, hw, numRanks, perNode);
  if (failed(prediction))
    return 1;
  const sim::SimResult *result = &prediction->result;
  if (!tracePath.empty()) {
    if (llvm::Error error = writeFileAtomically(
            tracePath, [&](llvm::raw_ostream &os) {
              sim::writeChromeTrace(os, prediction->schedule, *result);
            }))
      return fail(llvm::toString(std::move(error)));
  }
  llvm::json::Array perRank;
  sim::RankBreakdown total;
  for (const sim::RankBreakdown &rank : result->ranks) {
    perRank.push_back(rank.endUs * 1e-3);
    total.computeUs += rank.computeUs / numRanks;
    total.commUs += rank.commUs / numRanks;
    total.exposedCommUs += rank.exposedCommUs / numRanks;
    total.idleUs += rank.idleUs / numRanks;
  }
  // Communication beside computation: what overlap hid.
  double hiddenCommUs = std::max(0.0, total.commUs - total.exposedCommUs);
  if (expectOverlap) {
    int64_t started = 0;
    func->walk([&](WaitOp) { ++started; });
    if (started && !(hiddenCommUs > 1e-9))
      return fail(llvm::formatv("@{0} starts {1} collectives, but no "
                                "communication runs beside computation in "
                                "its simulated trace",
                                func->getSymName(), started)
                      .str());
  }
  if (emitJson) {
    llvm::outs() << llvm::json::Value(llvm::json::Object{
                        {"iteration_ms", result->makespanUs * 1e-3},
                        {"per_rank_ms", std::move(perRank)},
                        {"mean_per_rank",
                         llvm::json::Object{
                             {"compute_ms", total.computeUs * 1e-3},
                             {"comm_ms", total.commUs * 1e-3},
                             {"exposed_comm_ms", total.exposedCommUs * 1e-3},
                             {"hidden_comm_ms", hiddenCommUs * 1e-3},
                             {"idle_ms", total.idleUs * 1e-3}}}})
                 << "\n";
    return 0;
  }
  llvm::outs() << llvm::format(
      "@%s on %lld ranks of %s: %.3f ms per iteration\n  mean per rank: "
      "compute %.3f ms, comm %.3f ms (exposed %.3f ms, hidden behind "
      "compute %.3f ms), idle %.3f ms\n",
      func->getSymName().str().c_str(), (long long)numRanks, hw.name.c_str(),
      result->makespanUs * 1e-3, total.computeUs * 1e-3, total.commUs * 1e-3,
      total.exposedCommUs * 1e-3, hiddenCommUs * 1e-3, total.idleUs * 1e-3);
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv, "braid-sim: predict collective and program times\n");
  if (input == "collective") {
    if (hardwareName.empty())
      return fail("'braid-sim collective' needs --hardware");
    llvm::Expected<cluster::HardwareDesc> hw =
        cluster::loadHardware(hardwareName);
    if (!hw)
      return fail(llvm::toString(hw.takeError()));
    if (ncclProto.getNumOccurrences())
      if (llvm::Error error = cluster::parseNcclProtocols(ncclProto, hw->nccl))
        return fail("--nccl-proto: " + llvm::toString(std::move(error)));
    if (ncclAlgo.getNumOccurrences())
      if (llvm::Error error = cluster::parseNcclAlgorithms(ncclAlgo, hw->nccl))
        return fail("--nccl-algo: " + llvm::toString(std::move(error)));
    if (ncclBuffsize.getNumOccurrences()) {
      if (!(ncclBuffsize > 0) || !std::isfinite(ncclBuffsize))
        return fail("--nccl-buffsize must be a positive number of bytes");
      hw->ncclBufferBytes = ncclBuffsize;
    }
    // NCCL's channel search stays within NCCL_MIN_NCHANNELS and
    // NCCL_MAX_NCHANNELS (src/graph/search.cc), and no collective runs on
    // more than MAXCHANNELS (32) or than the device has SMs.
    int64_t most = std::min<int64_t>(32, hw->device.sms);
    for (auto *option : {&ncclMinChannels, &ncclMaxChannels})
      if (option->getNumOccurrences() && (*option < 1 || *option > most))
        return fail("--" + option->ArgStr + " must be between 1 and " +
                    llvm::Twine(most) + ", got " + llvm::Twine(*option));
    if (ncclMinChannels.getNumOccurrences() &&
        ncclMaxChannels.getNumOccurrences() &&
        ncclMinChannels > ncclMaxChannels)
      return fail("--nccl-min-nchannels (" + llvm::Twine(ncclMinChannels) +
                  ") is above --nccl-max-nchannels (" +
                  llvm::Twine(ncclMaxChannels) + ")");
    if (ncclMinChannels.getNumOccurrences())
      hw->commChannels = std::max<int64_t>(hw->commChannels, ncclMinChannels);
    if (ncclMaxChannels.getNumOccurrences())
      hw->commChannels = std::min<int64_t>(hw->commChannels, ncclMaxChannels);
    return runCollective(*hw);
  }
  if (!kindName.empty() || bytes >= 0)
    return fail("--kind and --bytes belong to 'braid-sim collective'");
  if (ncclProto.getNumOccurrences() || ncclAlgo.getNumOccurrences() ||
      ncclBuffsize.getNumOccurrences() || ncclMinChannels.getNumOccurrences() ||
      ncclMaxChannels.getNumOccurrences())
    return fail("--nccl-proto, --nccl-algo, --nccl-buffsize and "
                "--nccl-min/max-nchannels belong to 'braid-sim collective'");
  return runProgram();
}
