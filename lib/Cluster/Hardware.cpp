//===- Hardware.cpp - Hardware descriptions -------------------------------===//
//
// This file reads hardware descriptions from JSON. Every field is required
// unless documented otherwise in docs/cost-model.md; every error names the
// description and the JSON path of the offending field.
//
//===----------------------------------------------------------------------===//

#include "braid/Cluster/Hardware.h"
#include "braid/Support/BoundedInput.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;
using namespace mlir::braid::cluster;

static std::string formatNumber(double value) {
  std::string text;
  raw_string_ostream os(text);
  os << format("%g", value);
  return text;
}

namespace {
struct Preset {
  const char *name;
  const char *json;
};
const Preset kPresets[] = {
#include "Presets.inc"
};

/// Reads fields of one JSON object, remembering the first error.
class FieldReader {
public:
  FieldReader(StringRef file, std::string path, const json::Object *object)
      : file(file), path(std::move(path)), object(object) {}

  bool ok() const { return !error; }
  Error takeError() {
    return error ? createStringError(inconvertibleErrorCode(), *error)
                 : Error::success();
  }
  void fail(StringRef key, const Twine &message) {
    if (!error)
      error = (file + ": " + path + (path.empty() ? "" : ".") + key + ": " +
               message)
                  .str();
  }

  /// A positive number (or, with `allowZero`, a non-negative one). Every
  /// rate, size, latency and efficiency of a machine lies in [1e-6, 1e9] in
  /// the units the fields name: outside it a cost would overflow or
  /// vanish, and the planner would chase absurd times.
  double number(StringRef key, bool allowZero = false) {
    std::optional<double> value =
        object ? object->getNumber(key) : std::nullopt;
    if (!value || !std::isfinite(*value) || *value < 0 ||
        (*value == 0 && !allowZero)) {
      fail(key, value ? "expected a " +
                            Twine(allowZero ? "non-negative" : "positive") +
                            " number, got " + formatNumber(*value)
                      : Twine("expected a number"));
      return 0;
    }
    if (*value != 0 && (*value < 1e-6 || *value > 1e9)) {
      fail(key, "expected a number in [1e-6, 1e9], got " +
                    formatNumber(*value));
      return 0;
    }
    return *value;
  }
  /// A fraction in (0, 1].
  double fraction(StringRef key) {
    double value = number(key);
    if (ok() && value > 1)
      fail(key, "expected a fraction in (0, 1], got " + formatNumber(value));
    return value;
  }
  int64_t integer(StringRef key) {
    std::optional<int64_t> value =
        object ? object->getInteger(key) : std::nullopt;
    if (!value || *value <= 0 || *value > (int64_t(1) << 20)) {
      fail(key, "expected a positive integer of at most 1048576");
      return 0;
    }
    return *value;
  }
  std::string string(StringRef key) {
    std::optional<StringRef> value =
        object ? object->getString(key) : std::nullopt;
    if (!value || value->empty()) {
      fail(key, "expected a non-empty string");
      return "";
    }
    return value->str();
  }
  bool boolean(StringRef key) {
    std::optional<bool> value = object ? object->getBoolean(key) : std::nullopt;
    if (!value) {
      fail(key, "expected true or false");
      return false;
    }
    return *value;
  }
  bool has(StringRef key) const { return object && object->get(key); }
  /// A sub-object reader sharing this reader's error.
  const json::Object *child(StringRef key) {
    const json::Object *value = object ? object->getObject(key) : nullptr;
    if (!value)
      fail(key, "expected an object");
    return value;
  }
  std::string childPath(StringRef key) const {
    return path.empty() ? key.str() : path + "." + key.str();
  }
  void adopt(FieldReader &other) {
    if (!error && other.error)
      error = other.error;
  }
  void checkKeys(ArrayRef<StringRef> known) {
    if (!object)
      return;
    for (const auto &entry : *object) {
      StringRef key = entry.first;
      if (!key.starts_with("_") && !llvm::is_contained(known, key))
        fail(key, "unknown field");
    }
  }

private:
  StringRef file;
  std::string path;
  const json::Object *object;
  std::optional<std::string> error;
};
} // namespace

namespace {
/// A name in one of NCCL's selection lists and the bits it stands for (none
/// for a name NCCL knows and Braid does not model).
struct NcclName {
  StringLiteral name;
  unsigned bits;
};
constexpr unsigned bit(NcclProtocol protocol) { return 1u << unsigned(protocol); }
constexpr unsigned bit(NcclAlgorithm algorithm) {
  return 1u << unsigned(algorithm);
}
constexpr NcclName kProtocolNames[] = {{"ll", bit(NcclProtocol::ll)},
                                       {"ll128", bit(NcclProtocol::ll128)},
                                       {"simple", bit(NcclProtocol::simple)}};
constexpr NcclName kAlgorithmNames[] = {
    {"ring", bit(NcclAlgorithm::ring)},   {"tree", bit(NcclAlgorithm::tree)},
    {"nvls", bit(NcclAlgorithm::nvls)},   {"nvlstree", bit(NcclAlgorithm::nvlsTree)},
    {"collnetdirect", 0},                 {"collnetchain", 0},
    {"collnet", 0},                       {"pat", 0}};
} // namespace

/// Reads one of NCCL's selection lists (`variable`'s syntax: names separated
/// by commas, case-insensitive, a leading `^` to exclude them) into `mask`.
static Error parseNcclList(StringRef variable, StringRef list,
                           ArrayRef<NcclName> names, StringRef expected,
                           unsigned &mask) {
  auto error = [&](const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             variable + " '" + list + "': " + message);
  };
  StringRef rest = list.trim();
  bool exclude = rest.consume_front("^");
  if (rest.trim().empty())
    return error("expected " + expected);
  unsigned all = 0, named = 0;
  for (const NcclName &known : names)
    all |= known.bits;
  SmallVector<StringRef> items;
  rest.split(items, ',');
  for (StringRef item : items) {
    const NcclName *known = llvm::find_if(names, [&](const NcclName &known) {
      return item.trim().equals_insensitive(known.name);
    });
    if (known == names.end())
      return error("unknown name '" + item.trim() + "' (expected " + expected +
                   ")");
    named |= known->bits;
  }
  mask = exclude ? all & ~named : named;
  if (!mask)
    return error("leaves nothing Braid models to choose from");
  return Error::success();
}

Error mlir::braid::cluster::parseNcclProtocols(StringRef list,
                                               NcclSelection &selection) {
  return parseNcclList("NCCL_PROTO", list, kProtocolNames,
                       "LL, LL128 or Simple", selection.protocols);
}

Error mlir::braid::cluster::parseNcclAlgorithms(StringRef list,
                                                NcclSelection &selection) {
  if (list.contains(':') || list.contains(';'))
    return createStringError(
        inconvertibleErrorCode(),
        "NCCL_ALGO '" + list +
            "': per-collective lists (NCCL 2.24's `allreduce:tree`) are not "
            "supported; give one list for every collective");
  return parseNcclList(
      "NCCL_ALGO", list, kAlgorithmNames,
      "Ring, Tree, NVLS, NVLSTree, CollNetDirect, CollNetChain or PAT",
      selection.algorithms);
}

std::vector<std::string> mlir::braid::cluster::getPresetNames() {
  std::vector<std::string> names;
  for (const Preset &preset : kPresets)
    names.push_back(preset.name);
  return names;
}

Expected<HardwareDesc> mlir::braid::cluster::parseHardware(StringRef text,
                                                           StringRef name) {
  Expected<json::Value> root = parseBoundedJson(text);
  if (!root)
    return createStringError(inconvertibleErrorCode(),
                             name + ": invalid JSON: " +
                                 toString(root.takeError()));
  FieldReader top(name, "", root->getAsObject());
  if (!root->getAsObject())
    return createStringError(inconvertibleErrorCode(),
                             name + ": expected a JSON object");
  top.checkKeys({"name", "device", "intra_node", "inter_node", "comm_channels",
                 "comm_chunk_KiB", "comm_rate_beside_compute",
                 "compute_slowdown_beside_comm", "collective_floor_us",
                 "rank_skew", "nccl", "topology"});
  HardwareDesc hw;
  hw.name = top.string("name");
  hw.commChannels = top.integer("comm_channels");
  if (top.has("comm_chunk_KiB"))
    hw.commChunkBytes = top.number("comm_chunk_KiB") * 1024;
  if (top.has("comm_rate_beside_compute"))
    hw.commRateBesideCompute = top.fraction("comm_rate_beside_compute");
  if (top.has("compute_slowdown_beside_comm")) {
    hw.computeSlowdownBesideComm = top.number("compute_slowdown_beside_comm");
    if (top.ok() && hw.computeSlowdownBesideComm < 1)
      top.fail("compute_slowdown_beside_comm",
               "expected a slowdown of at least 1, got " +
                   formatNumber(hw.computeSlowdownBesideComm));
  }

  if (top.has("rank_skew")) {
    hw.rankSkew = top.number("rank_skew", /*allowZero=*/true);
    if (top.ok() && hw.rankSkew > 1)
      top.fail("rank_skew", "expected a fraction in [0, 1], got " +
                                formatNumber(hw.rankSkew));
  }
  if (top.has("collective_floor_us"))
    hw.collectiveFloorUs =
        top.number("collective_floor_us", /*allowZero=*/true);

  FieldReader device(name, top.childPath("device"), top.child("device"));
  device.checkKeys({"arch", "name", "peak_tflops", "gemm_efficiency",
                    "gemm_efficiency_by_type",
                    "memory_bandwidth_GBps", "memory_efficiency",
                    "gather_efficiency", "memory_capacity_GB", "l2_MB", "sms",
                    "launch_overhead_us"});
  hw.device.name = device.string("name");
  std::string arch = device.string("arch");
  if (arch == "volta")
    hw.device.arch = Arch::volta;
  else if (arch == "ampere")
    hw.device.arch = Arch::ampere;
  else if (arch == "hopper")
    hw.device.arch = Arch::hopper;
  else if (arch == "cpu")
    hw.device.arch = Arch::cpu;
  else if (device.ok())
    device.fail("arch", "expected \"volta\", \"ampere\", \"hopper\" or "
                        "\"cpu\", got \"" +
                            arch + "\"");
  FieldReader peaks(name, device.childPath("peak_tflops"),
                    device.child("peak_tflops"));
  for (StringRef type : {"f32", "tf32", "bf16", "f16"})
    hw.device.peakTflops[type] = peaks.number(type);
  // Optional: an f64 GEMM is priced at it where given, else at f32's.
  if (peaks.has("f64"))
    hw.device.peakTflops["f64"] = peaks.number("f64");
  peaks.checkKeys({"f32", "tf32", "bf16", "f16", "f64"});
  device.adopt(peaks);
  hw.device.gemmEfficiency = device.fraction("gemm_efficiency");
  if (device.has("gemm_efficiency_by_type")) {
    FieldReader byType(name, device.childPath("gemm_efficiency_by_type"),
                       device.child("gemm_efficiency_by_type"));
    byType.checkKeys({"f32", "tf32", "bf16", "f16", "f64"});
    for (StringRef type : {"f32", "tf32", "bf16", "f16", "f64"})
      if (byType.has(type))
        hw.device.gemmEfficiencyByType[type] = byType.fraction(type);
    device.adopt(byType);
  }
  hw.device.memoryBandwidthGBps = device.number("memory_bandwidth_GBps");
  hw.device.memoryEfficiency = device.fraction("memory_efficiency");
  if (device.has("gather_efficiency"))
    hw.device.gatherEfficiency = device.fraction("gather_efficiency");
  hw.device.memoryCapacityGB = device.number("memory_capacity_GB");
  hw.device.l2MB = device.number("l2_MB", /*allowZero=*/true);
  hw.device.sms = device.integer("sms");
  hw.device.launchOverheadUs =
      device.number("launch_overhead_us", /*allowZero=*/true);
  top.adopt(device);

  FieldReader intra(name, top.childPath("intra_node"), top.child("intra_node"));
  intra.checkKeys({"kind", "links", "link_bandwidth_GBps", "nvls",
                   "nvls_efficiency", "nvls_channels", "nvls_node_efficiency",
                   "nvls_fill_KiB", "hop_latency_us",
                   "collective_bandwidth_GBps", "link_efficiency"});
  std::string kind = intra.string("kind");
  if (kind == "nvlink")
    hw.intraNode.kind = IntraNodeKind::nvlink;
  else if (kind == "pcie")
    hw.intraNode.kind = IntraNodeKind::pcie;
  else if (kind == "shm")
    hw.intraNode.kind = IntraNodeKind::shm;
  else if (intra.ok())
    intra.fail("kind", "expected \"nvlink\", \"pcie\" or \"shm\", got \"" +
                           kind + "\"");
  hw.intraNode.links = intra.integer("links");
  hw.intraNode.linkBandwidthGBps = intra.number("link_bandwidth_GBps");
  hw.intraNode.nvls = intra.boolean("nvls");
  if (hw.intraNode.kind == IntraNodeKind::shm) {
    hw.intraNode.hopLatencyUs = intra.number("hop_latency_us");
    if (intra.ok() && intra.has("collective_bandwidth_GBps")) {
      FieldReader perKind(name, intra.childPath("collective_bandwidth_GBps"),
                          intra.child("collective_bandwidth_GBps"));
      const StringRef kinds[] = {"all_reduce", "all_gather", "reduce_scatter",
                                 "all_to_all", "broadcast"};
      perKind.checkKeys(kinds);
      for (StringRef kind : kinds)
        if (perKind.has(kind))
          hw.intraNode.collectiveBandwidthGBps[kind] = perKind.number(kind);
      intra.adopt(perKind);
    }
  }
  if (hw.intraNode.nvls) {
    hw.intraNode.nvlsEfficiency = intra.fraction("nvls_efficiency");
    hw.intraNode.nvlsChannels = intra.integer("nvls_channels");
    hw.intraNode.nvlsNodeEfficiency =
        intra.has("nvls_node_efficiency")
            ? intra.fraction("nvls_node_efficiency")
            : hw.intraNode.nvlsEfficiency;
    if (intra.has("nvls_fill_KiB"))
      hw.intraNode.nvlsFillBytes =
          intra.number("nvls_fill_KiB", /*allowZero=*/true) * 1024;
  }
  // A field the model would not read is refused, not ignored: a GPU
  // node's per-hop latencies are NCCL's tuner constants, and NVLS
  // constants mean nothing without NVLS.
  if (intra.ok() && hw.intraNode.kind != IntraNodeKind::shm)
    for (StringRef key : {"hop_latency_us", "collective_bandwidth_GBps"})
      if (intra.has(key)) {
        intra.fail(key, "only an \"shm\" node (MPI on a host) reads it; a \"" +
                            kind +
                            "\" node's latencies are NCCL's tuner "
                            "constants");
        break;
      }
  if (intra.has("link_efficiency")) {
    if (hw.intraNode.kind != IntraNodeKind::pcie && intra.ok())
      intra.fail("link_efficiency",
                 "only a \"pcie\" node reads it; NCCL's PCIe figures are "
                 "nominal, an NVLink or measured link's bandwidth is already "
                 "what is reached");
    else
      hw.intraNode.linkEfficiency = intra.fraction("link_efficiency");
  }
  if (intra.ok() && !hw.intraNode.nvls)
    for (StringRef key : {"nvls_efficiency", "nvls_channels",
                          "nvls_node_efficiency", "nvls_fill_KiB"})
      if (intra.has(key)) {
        intra.fail(key, "only read when \"nvls\" is true");
        break;
      }
  top.adopt(intra);

  FieldReader inter(name, top.childPath("inter_node"), top.child("inter_node"));
  inter.checkKeys({"nics_per_node", "nic_bandwidth_GBps", "nic_efficiency",
                   "latency_us", "post_overhead_us", "duplex_efficiency"});
  hw.interNode.nicsPerNode = inter.integer("nics_per_node");
  hw.interNode.nicBandwidthGBps = inter.number("nic_bandwidth_GBps");
  hw.interNode.nicEfficiency = inter.fraction("nic_efficiency");
  if (inter.has("latency_us"))
    hw.interNode.latencyUs = inter.number("latency_us", /*allowZero=*/true);
  if (inter.has("post_overhead_us"))
    hw.interNode.postOverheadUs =
        inter.number("post_overhead_us", /*allowZero=*/true);
  if (inter.has("duplex_efficiency"))
    hw.interNode.duplexEfficiency = inter.fraction("duplex_efficiency");
  top.adopt(inter);

  if (top.ok() && top.has("nccl") &&
      hw.intraNode.kind == IntraNodeKind::shm)
    top.fail("nccl", "an \"shm\" node runs MPI's collectives, not NCCL's");
  if (top.ok() && top.has("nccl")) {
    FieldReader nccl(name, top.childPath("nccl"), top.child("nccl"));
    nccl.checkKeys({"proto", "algo", "buffsize"});
    if (nccl.has("buffsize"))
      hw.ncclBufferBytes = nccl.number("buffsize");
    if (nccl.has("proto"))
      if (Error error =
              parseNcclProtocols(nccl.string("proto"), hw.nccl))
        nccl.fail("proto", toString(std::move(error)));
    if (nccl.ok() && nccl.has("algo")) {
      if (Error error =
              parseNcclAlgorithms(nccl.string("algo"), hw.nccl))
        nccl.fail("algo", toString(std::move(error)));
      else if (!hw.nccl.allows(NcclAlgorithm::ring))
        nccl.fail("algo", "a system's default must allow Ring, the one "
                          "algorithm every collective Braid prices runs on");
    }
    // NCCL runs LL128 on NVLink only (the collective model's hasLL128).
    if (nccl.ok() && hw.intraNode.kind != IntraNodeKind::nvlink &&
        !hw.nccl.allows(NcclProtocol::ll) &&
        !hw.nccl.allows(NcclProtocol::simple))
      nccl.fail("proto", "a \"pcie\" node runs no LL128 (NCCL enables it on "
                         "NVLink only), so its collectives would have no "
                         "protocol");
    top.adopt(nccl);
  }

  FieldReader topology(name, top.childPath("topology"), top.child("topology"));
  topology.checkKeys({"nodes", "ranks_per_node"});
  hw.nodes = topology.integer("nodes");
  hw.ranksPerNode = topology.integer("ranks_per_node");
  top.adopt(topology);
  if (top.ok() && hw.commChannels > hw.device.sms)
    top.fail("comm_channels", "a collective cannot use more channels (" +
                                  Twine(hw.commChannels) + ") than SMs (" +
                                  Twine(hw.device.sms) + ")");
  if (!top.ok())
    return top.takeError();
  return hw;
}

Expected<HardwareDesc> mlir::braid::cluster::loadHardware(StringRef presetOrPath) {
  for (const Preset &preset : kPresets)
    if (presetOrPath == preset.name)
      return parseHardware(preset.json, preset.name);
  if (presetOrPath == kLocalCpuName)
    return loadLocalMachine();
  if (!sys::fs::exists(presetOrPath))
    return createStringError(
        inconvertibleErrorCode(),
        "'" + presetOrPath + "' is neither a preset (" +
            join(getPresetNames(), ", ") + ", " + kLocalCpuName +
            ") nor a readable file");
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readBoundedFile(presetOrPath, kMaxJsonFileBytes, "a cluster file");
  if (!buffer)
    return buffer.takeError();
  return parseHardware((*buffer)->getBuffer(), presetOrPath);
}

double mlir::braid::cluster::InterNodeDesc::transferUs(double outBytes,
                                                       double inBytes,
                                                       double GBps) const {
  if (!(GBps > 0))
    return 0;
  double bothWays = std::min(outBytes, inBytes);
  double oneWay = std::max(outBytes, inBytes) - bothWays;
  return (bothWays / duplexEfficiency + oneWay) / GBps * 1e-3;
}
