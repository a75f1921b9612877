//===- Hardware.h - Hardware descriptions -----------------------*- C++ -*-===//
//
// This file declares the hardware description the cost model reads: one
// device type, the intra-node fabric, the NICs and the cluster shape. It is
// read from JSON (a preset name or a file); malformed descriptions are
// errors naming the JSON path. docs/cost-model.md documents every field.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CLUSTER_HARDWARE_H
#define BRAID_CLUSTER_HARDWARE_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::braid::cluster {

/// One accelerator (or CPU socket, for local-cpu).
/// GPU generations whose NCCL constants the collective model knows; `cpu`
/// for local-cpu descriptions.
enum class Arch { volta, ampere, hopper, cpu };

struct DeviceDesc {
  std::string name;
  Arch arch = Arch::hopper;
  /// Dense peak TFLOP/s per element type ("f32", "tf32", "bf16", "f16").
  llvm::StringMap<double> peakTflops;
  /// Fraction of peak a large GEMM reaches.
  double gemmEfficiency = 0;
  /// The same fraction measured for one element type, where it differs
  /// (optional `gemm_efficiency_by_type`; e.g. f32 without tensor cores).
  llvm::StringMap<double> gemmEfficiencyByType;
  double memoryBandwidthGBps = 0;
  /// Fraction of memory bandwidth a streaming kernel reaches.
  double memoryEfficiency = 0;
  /// Fraction of that bandwidth an embedding lookup's random row reads
  /// reach (optional, 1 when not given; braid-calibrate measures it).
  double gatherEfficiency = 1;
  double memoryCapacityGB = 0;
  double l2MB = 0;
  int64_t sms = 0;
  double launchOverheadUs = 0;
};

/// The fabric between the ranks of one node.
enum class IntraNodeKind { nvlink, pcie, shm };

struct IntraNodeDesc {
  IntraNodeKind kind = IntraNodeKind::nvlink;
  /// Links per device and the bandwidth NCCL achieves on each, per direction.
  int64_t links = 0;
  double linkBandwidthGBps = 0;
  /// NVLink SHARP (in-switch reduction) and NCCL's efficiency for it.
  bool nvls = false;
  double nvlsEfficiency = 0;
  int64_t nvlsChannels = 0;
  /// One node's NVLS all_reduce (no NVLSTree): the share of the links it
  /// reaches (optional `nvls_node_efficiency`, `nvlsEfficiency` when
  /// absent) and the bytes its pipeline fills before it streams (optional
  /// `nvls_fill_KiB`, none when absent): it moves min(bytes, fill) once
  /// more. Both fitted on the calibration half of bench/collectives' corpus.
  double nvlsNodeEfficiency = 0;
  double nvlsFillBytes = 0;
  /// Measured latency of one ring step; required for `shm` (MPI over shared
  /// memory, written by braid-calibrate), where NCCL's GPU latencies do not
  /// apply.
  double hopLatencyUs = 0;
  /// Measured bus bandwidth per collective kind ("all_reduce", ...), for
  /// `shm`, where MPI implements each collective its own way; kinds not
  /// listed use links * link bandwidth.
  llvm::StringMap<double> collectiveBandwidthGBps;
  /// The share of `link_bandwidth_GBps` a collective reaches (optional
  /// `link_efficiency`, PCIe nodes only, default 1): NCCL's PCIe link
  /// figures (topo.h: 12 GB/s for Gen3 x16, 24 for Gen4) are its topology's
  /// nominal rates, where an NVLink figure is already what NCCL reaches.
  /// Fitted on the calibration half of bench/collectives' corpus.
  double linkEfficiency = 1.0;
  /// Per-device bandwidth a collective reaches, one direction.
  double bandwidthGBps() const {
    return links * linkBandwidthGBps * linkEfficiency;
  }
};

struct InterNodeDesc {
  int64_t nicsPerNode = 0;
  /// Line rate per NIC, one direction, and the fraction NCCL achieves.
  double nicBandwidthGBps = 0;
  double nicEfficiency = 0;
  /// Latency the network transport adds to each step that crosses nodes,
  /// beyond NCCL's InfiniBand constants (optional; the net plugin's own
  /// latency in NCCL's tuner: EFA and GPUDirect-TCPX pay tens of
  /// microseconds where InfiniBand pays a few).
  double latencyUs = 0;
  /// What the transport costs per posted network operation (optional
  /// `post_overhead_us`): across nodes no step of a ring is faster than
  /// this (three times it on Simple). The default is NCCL's getNetOverhead
  /// for Intel and other CPUs (src/graph/tuning.cc); HPE Slingshot's
  /// libfabric transport pays several microseconds per post.
  static constexpr double kDefaultPostOverheadUs = 1.0;
  double postOverheadUs = kDefaultPostOverheadUs;
  /// Each direction's rate while both directions carry data, as a fraction
  /// of the one-way rate (optional `duplex_efficiency`, default 1: a
  /// full-duplex link, as InfiniBand and Ethernet NICs are). braid-calibrate
  /// measures it between MPI hosts, where TCP through a deep queue delays
  /// one direction's acknowledgements behind the other direction's data.
  double duplexEfficiency = 1.0;
  double effectiveNicGBps() const { return nicBandwidthGBps * nicEfficiency; }
  /// Microseconds to move `outBytes` out of a node and `inBytes` into it at
  /// `GBps` each way: the bytes that cross while both directions carry data
  /// move at `duplexEfficiency` of the rate, the rest at the full rate.
  double transferUs(double outBytes, double inBytes, double GBps) const;
};

/// The protocols and algorithms NCCL may choose among, as its environment
/// restricts them (NCCL_PROTO, NCCL_ALGO; NCCL_NVLS_ENABLE=0 is NCCL_ALGO
/// without NVLS and NVLSTree). Cloud images set them: GCP's TCPXO profile
/// ran Simple alone on Ring and Tree until 2025 (docs/cost-model.md).
/// NCCL's other algorithms (CollNet, PAT) are accepted by name but not
/// modelled. Point-to-point operations (all_to_all) are not restricted:
/// NCCL picks their protocol by size (NCCL_P2P_LL_THRESHOLD).
enum class NcclProtocol { ll, ll128, simple };
enum class NcclAlgorithm { ring, tree, nvls, nvlsTree };
struct NcclSelection {
  /// A bit per NcclProtocol, and per NcclAlgorithm: set where allowed.
  unsigned protocols = 0b111;
  unsigned algorithms = 0b1111;
  bool allows(NcclProtocol protocol) const {
    return protocols & (1u << unsigned(protocol));
  }
  bool allows(NcclAlgorithm algorithm) const {
    return algorithms & (1u << unsigned(algorithm));
  }
};

/// Reads a list in NCCL_PROTO's syntax (case-insensitive, comma-separated
/// among LL, LL128 and Simple; a leading `^` excludes those named instead)
/// into `selection.protocols`.
llvm::Error parseNcclProtocols(llvm::StringRef list, NcclSelection &selection);
/// Reads a list in NCCL_ALGO's syntax (Ring, Tree, NVLS, NVLSTree,
/// CollNetDirect, CollNetChain, CollNet, PAT; `^` as above) into
/// `selection.algorithms`. A list that leaves none of the modelled four is
/// an error, as is NCCL 2.24's per-collective form (`allreduce:tree`).
llvm::Error parseNcclAlgorithms(llvm::StringRef list, NcclSelection &selection);

struct HardwareDesc {
  std::string name;
  DeviceDesc device;
  IntraNodeDesc intraNode;
  InterNodeDesc interNode;
  /// Thread blocks (NCCL channels) a collective occupies on each device.
  int64_t commChannels = 0;
  /// Bytes a channel moves per pipeline step of a ring or tree once the
  /// message is large enough (optional `comm_chunk_KiB`): the pipeline
  /// fills over one such step per hop, which medium messages feel. The
  /// default was fitted on the calibration half of bench/collectives' corpus.
  double commChunkBytes = 128 * 1024;
  /// The rate a collective advances at while a kernel computes on its rank
  /// (optional `comm_rate_beside_compute`, a fraction; default 1). NCCL
  /// runs a collective on SMs of its own, so a GPU's is 1; an MPI
  /// collective moves data only inside MPI calls and on the cores the
  /// kernels use, and braid-calibrate measures how far it gets.
  double commRateBesideCompute = 1.0;
  /// How much slower a kernel runs while a collective runs on its rank
  /// (optional `compute_slowdown_beside_comm`, at least 1). Where it is
  /// given (braid-calibrate measures it on CPUs) it replaces the modelled
  /// dilation of the channels' and memory's shares (cost::overlapDilation);
  /// 0: not given.
  double computeSlowdownBesideComm = 0;
  /// How far the slowest of the ranks falls behind their mean on the same
  /// work, as a fraction of it (optional `rank_skew`, in [0, 1], default 0;
  /// braid-calibrate measures it on CPUs, where ranks share cores, caches
  /// and a noisy host). The simulator spreads the ranks' compute times
  /// evenly over mean * (1 +- rank_skew), so that at every synchronization
  /// the slowest rank is that far behind and the others wait for it.
  double rankSkew = 0;
  /// The least time a collective takes (optional `collective_floor_us`,
  /// default 0): back-to-back calls, as nccl-tests and a training step
  /// issue them, go no faster than the host enqueues and launches them,
  /// whatever the fabric's own latency. Fitted per intra-node class on the
  /// calibration half of bench/collectives' corpus (docs/cost-model.md).
  double collectiveFloorUs = 0;
  /// What NCCL's environment allows on this system by default (optional
  /// `nccl` object: `proto` and `algo` strings in the syntax of NCCL_PROTO
  /// and NCCL_ALGO). braid-sim's --nccl-proto and --nccl-algo override it.
  NcclSelection nccl;
  /// NCCL's default NCCL_BUFFSIZE (src/init.cc, DEFAULT_BUFFSIZE). Newer
  /// NCCLs default to 1 MiB on Arm hosts (DEFAULT_BUFFSIZE_ARM), which the
  /// model leaves out.
  static constexpr double kNcclDefaultBufferBytes = 4 << 20;
  /// The bytes of Simple's buffer per channel and peer (NCCL_BUFFSIZE;
  /// optional `nccl.buffsize`, default NCCL's 4 MiB; braid-sim's
  /// --nccl-buffsize overrides it). A Simple step moves an eighth of it
  /// (NCCL_STEPS), so Simple's pipeline chunk is `commChunkBytes` scaled by
  /// this over NCCL's default. LL and LL128 have buffers of their own.
  double ncclBufferBytes = kNcclDefaultBufferBytes;
  int64_t nodes = 1;
  int64_t ranksPerNode = 1;
  int64_t worldSize() const { return nodes * ranksPerNode; }
};

/// Names of the built-in presets.
std::vector<std::string> getPresetNames();

/// Parses a description; `name` appears in error messages.
llvm::Expected<HardwareDesc> parseHardware(llvm::StringRef json,
                                           llvm::StringRef name);

/// The cluster name of this machine's calibrated description.
inline constexpr const char *kLocalCpuName = "local-cpu";

/// Where braid-calibrate keeps this machine's description by default:
/// `$BRAID_CACHE_DIR/local-cpu.json`, else `$XDG_CACHE_HOME/braid/`, else
/// `~/.cache/braid/`.
std::string getLocalCalibrationPath();

/// Measures this machine with braid-calibrate under mpirun, one rank per
/// core, and writes the description to `path` (atomically). Prints a
/// one-line notice to stderr first.
llvm::Error calibrateLocalMachine(llvm::StringRef path);

/// This machine's description from getLocalCalibrationPath(), measured
/// first when the file is missing.
llvm::Expected<HardwareDesc> loadLocalMachine();

/// A preset by name, `local-cpu` (loadLocalMachine), or else a JSON file at
/// that path.
llvm::Expected<HardwareDesc> loadHardware(llvm::StringRef presetOrPath);

} // namespace mlir::braid::cluster

#endif // BRAID_CLUSTER_HARDWARE_H
