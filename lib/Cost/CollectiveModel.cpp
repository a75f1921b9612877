//===- CollectiveModel.cpp - Collective cost model ------------------------===//
//
// This file models collectives the way NCCL's own tuner does
// (src/graph/tuning.cc): for each algorithm (ring, tree, NVLS, NVLSTree)
// and protocol (LL, LL128, Simple), time = latency + bytes / algorithm
// bandwidth, and the fastest wins. Latencies and protocol caps are NCCL's
// constants (transcribed in ../shared/data/configs/
// nccl_cost_model_constants.json); bandwidths come from the hardware
// description. To that it adds what a measurement sees and NCCL's tuner
// leaves out: channels by message size, the fill of a chunked pipeline,
// the transport's own latency and its cost per post, and an all_to_all's
// latency per remote peer. The free constants are fitted on the calibration half of
// bench/collectives' corpus. docs/cost-model.md lists each term's source.
//
//===----------------------------------------------------------------------===//

#include "braid/Cost/CostModel.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

using namespace mlir::braid;
using namespace mlir::braid::cost;
using cluster::Arch;
using cluster::HardwareDesc;
using cluster::IntraNodeKind;
using cluster::NcclAlgorithm;
using cluster::NcclProtocol;

namespace {
enum Protocol { LL = 0, LL128 = 1, Simple = 2 };
constexpr const char *kProtocolNames[] = {"ll", "ll128", "simple"};

// NCCL tuning.cc: base latencies (us) per protocol.
constexpr double kBaseRing[] = {6.6, 14.0, 8.4};
constexpr double kBaseTree[] = {6.8, 14.0, 8.4};
// Per-hop latencies (us) per link type and protocol.
constexpr double kNvlinkRing[] = {0.6, 1.9, 3.4};
constexpr double kNvlinkTree[] = {0.6, 1.25, 4.0};
constexpr double kPciRing[] = {1.0, 2.5, 5.7};
constexpr double kPciTree[] = {1.0, 1.9, 4.0};
constexpr double kNetRing[] = {2.7, 4.0, 14.0};
constexpr double kNetTree[] = {5.0, 8.5, 14.0};
constexpr double kNvlsLatency = 25.0;     // NVLINK, Simple only
constexpr double kNvlsTreeNetLatency = 20.9; // NET, Simple only
/// Remote point-to-point operations of an all_to_all in flight at once per
/// NIC a rank has: fitted on the calibration half's all_to_alls (ALCF
/// Polaris, ALCF Sophia's DGX A100 pair and AWS p5; 1 is the best of 0.5,
/// 1, 2, 3 and 4 with any one of those sweeps left out but Sophia's, where
/// 2 is; docs/cost-model.md).
constexpr double kP2pPerNic = 1;

/// Threads per channel and the bytes per thread under which NCCL runs a
/// collective on fewer channels (src/include/device.h, enqueue.cc): a
/// message smaller than channels x threads x threshold uses only as many
/// channels as it fills. Ring LL's threshold is multiplied by the ranks.
constexpr double kMaxThreads[] = {512, 640, 512};
constexpr double kThreadThreshold[] = {8, 8, 64};

/// NCCL's correction of tree bandwidth at medium sizes ("trees are not
/// perfectly sticking to the model"), per protocol, for 64 B << i.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5,
     .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
     .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

/// The fraction of a collective's channels a message of `bytes` keeps busy.
double channelShare(double bytes, Protocol protocol, double channels,
                    double thresholdScale, double trafficPerByte) {
  double perChannel =
      kMaxThreads[protocol] * kThreadThreshold[protocol] * thresholdScale;
  // Continuous in the size (NCCL steps through whole channels), so that a
  // larger message never takes less time.
  double used = std::clamp(bytes / perChannel, 1.0, channels);
  // NCCL >= 2.22 deals a collective out to its channels in cells of 32 KiB
  // of traffic (MinTrafficPerChannel, enqueue.cc; LL's lines carry 4 times
  // their data), so a channel gets at least one cell. `trafficPerByte` is
  // the traffic per byte of `bytes` (ncclFuncTrafficPerByte).
  double cells =
      bytes * trafficPerByte * (protocol == LL ? 4.0 : 1.0) / (32 << 10);
  used = std::min(used, std::max(1.0, cells));
  return used / channels;
}

/// The tree bandwidth correction for a message of `bytes`, interpolated in
/// log2(size) between NCCL's entries: NCCL steps from one entry to the next,
/// which makes a message a little larger than a power of two up to 11%
/// faster than one a little smaller; interpolated, a larger message never
/// takes less time.
double treeCorrection(double bytes, Protocol protocol) {
  const double *table = kTreeCorrection[protocol];
  double position = std::log2(std::max(bytes / 64, 1.0));
  if (position >= 23)
    return 1.0;
  int index = static_cast<int>(std::floor(position));
  double next = index + 1 < 23 ? table[index + 1] : 1.0;
  return table[index] + (position - index) * (next - table[index]);
}

/// NCCL's caps per architecture, indexed by node count 1, 2, >= 4.
struct ArchCaps {
  double llMax[3];
  double perChannelRingLL128;
  double perChannelTree[3];
  double perChannelTreeLL128[3];
};
constexpr ArchCaps kVolta = {{39.0, 39.0, 20.4}, 20.0, {26.5, 18.5, 10.0},
                             {20.0, 20.0, 20.0}};
constexpr ArchCaps kAmpere = {{87.7, 22.5, 19.0}, 20.0, {24.0, 23.6, 17.8},
                              {20.0, 20.0, 20.0}};
constexpr ArchCaps kHopper = {{141.0, 45.0, 35.0}, 36.7, {38.7, 41.4, 36.0},
                              {36.7, 36.7, 29.0}};

const ArchCaps &capsFor(const HardwareDesc &hw) {
  switch (hw.device.arch) {
  case Arch::volta:
    return kVolta;
  case Arch::ampere:
    return kAmpere;
  case Arch::hopper:
  case Arch::cpu:
    break;
  }
  return kHopper;
}

/// Whether NCCL runs LL128 on this machine. It enables LL128 by default
/// only where the paths inside a node are NVLink (src/graph/tuning.cc:
/// "Enable LL128 by default only on Volta/Ampere/Hopper/Blackwell+NVLink",
/// typeIntra <= PATH_NVB); a PCIe node runs LL and Simple.
bool hasLL128(const HardwareDesc &hw) {
  return hw.intraNode.kind == IntraNodeKind::nvlink;
}

/// What the network transport adds to a step that crosses nodes: its
/// latency, and on Simple as much again for the flush that makes received
/// data visible to the GPU (NCCL's tuner: "Also add the flush extra
/// latency"). NCCL flushes only on GPUs before Hopper unless the network
/// plugin forces it (ncclTopoNeedFlush, src/graph/paths.cc: "Flush is
/// required on Ampere and earlier"); the plugins of the presets' transports
/// do not (aws-ofi-nccl and GCP's TCPXO plugin report no forceFlush).
double transportLatencyUs(const HardwareDesc &hw, Protocol protocol) {
  bool flushes = protocol == Simple && (hw.device.arch == Arch::volta ||
                                        hw.device.arch == Arch::ampere);
  return hw.interNode.latencyUs * (flushes ? 2.0 : 1.0);
}

int nodeIndex(int64_t nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }

/// Per-hop intra-node latency for an algorithm table.
double intraLatency(const HardwareDesc &hw, const double *nvlink,
                    const double *pci, Protocol protocol) {
  return hw.intraNode.kind == IntraNodeKind::nvlink ? nvlink[protocol]
                                                    : pci[protocol];
}

/// The bandwidth a ring sustains per rank: the slower of the intra-node
/// links and, across nodes, the node's NICs (NCCL runs one ring per
/// channel, and the rings cross the node boundary on different NICs).
double ringBusBandwidth(const HardwareDesc &hw, int64_t nodes) {
  double bw = hw.intraNode.bandwidthGBps();
  if (nodes > 1)
    bw = std::min(bw, hw.interNode.nicsPerNode * hw.interNode.effectiveNicGBps());
  return bw;
}

/// The most bytes a point-to-point operation to one peer carries on LL.
/// NCCL runs an operation on LL when it carries at most
/// NCCL_P2P_LL_THRESHOLD (16 KiB) per channel it is split over, on Simple
/// otherwise (addP2pToPlan, src/enqueue.cc). It splits an operation into
/// parts of at least a p2p chunk over 8 (over 2 across nodes), which leaves
/// one channel under 64 KiB on NVLink and across nodes: LL up to 16 KiB. On
/// PCIe a part is 16 KiB, so an operation gets the channels NCCL gives each
/// peer when every peer is served at once (2 per PCIe peer, halved while the
/// ranks need more than the p2p channels), 16 KiB each.
double p2pLLLimitBytes(const HardwareDesc &hw, int64_t ranks, int64_t nodes) {
  constexpr double kThreshold = 16384; // NCCL_P2P_LL_THRESHOLD
  if (nodes > 1 || hw.intraNode.kind != IntraNodeKind::pcie)
    return kThreshold;
  // p2pnChannels: the communicator's channels rounded up to a power of 2.
  int64_t p2pChannels = static_cast<int64_t>(llvm::PowerOf2Ceil(
      static_cast<uint64_t>(std::max<int64_t>(1, hw.commChannels))));
  int64_t perPeer = 2;
  while (perPeer * ranks > p2pChannels && perPeer > 1)
    perPeer /= 2;
  return kThreshold * double(perPeer);
}

/// The time of an all_to_all over `ranks` ranks, `perNode` per node, whose
/// busiest link takes `linkUs` at full bandwidth and whose largest message
/// to one peer is `peerBytes`. NCCL runs the n - 1 sends and receives of a
/// rank as grouped point-to-point operations, on LL (at half the bandwidth:
/// a flag beside every 8 bytes) up to p2pLLLimitBytes and on Simple above.
/// Above the limit Braid prices Simple alone; below it the faster of the
/// two, since LL comes out slower only where a transport's cost per post
/// hides LL's shorter latency, and pricing NCCL's LL there would make a
/// message just past the limit faster than one below it. The peers on the
/// node are reached at once (one hop's latency); each peer on another node
/// costs the network's latency (with the transport's own, and its flush on
/// Simple before Hopper), as many at once as the rank's share of the node's
/// NICs allows (kP2pPerNic per NIC). The sends to remote peers are posted
/// one after the other by the rank's network proxy, so they take at least
/// the transport's cost per post each.
double allToAllUs(const HardwareDesc &hw, int64_t ranks, int64_t perNode,
                  double linkUs, double peerBytes,
                  Protocol *chosen = nullptr) {
  int64_t nodes = (ranks + perNode - 1) / perNode;
  double remotePeers = double(ranks - perNode);
  double concurrency = std::max<double>(
      1.0, double(hw.interNode.nicsPerNode) / double(perNode) * kP2pPerNic);
  double best = std::numeric_limits<double>::infinity();
  for (Protocol protocol : {LL, Simple}) {
    if (protocol == LL && peerBytes > p2pLLLimitBytes(hw, ranks, nodes))
      continue;
    double transport = transportLatencyUs(hw, protocol);
    double latency =
        kBaseRing[protocol] + intraLatency(hw, kNvlinkRing, kPciRing, protocol) +
        std::max(remotePeers * (kNetRing[protocol] + transport) / concurrency,
                 remotePeers * hw.interNode.postOverheadUs);
    double time = latency + linkUs * (protocol == LL ? 2.0 : 1.0);
    if (time < best) {
      best = time;
      if (chosen)
        *chosen = protocol;
    }
  }
  return best;
}

struct Candidate {
  double timeUs = std::numeric_limits<double>::infinity();
  std::string name;
  void consider(double time, const std::string &algorithm) {
    if (time < timeUs) {
      timeUs = time;
      name = algorithm;
    }
  }
};
} // namespace

std::optional<CollectiveKind> cost::symbolizeCollectiveKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<CollectiveKind>>(name)
      .Case("all_reduce", CollectiveKind::all_reduce)
      .Case("all_gather", CollectiveKind::all_gather)
      .Case("reduce_scatter", CollectiveKind::reduce_scatter)
      .Case("all_to_all", CollectiveKind::all_to_all)
      .Case("broadcast", CollectiveKind::broadcast)
      .Default(std::nullopt);
}

llvm::StringRef cost::stringifyCollectiveKind(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::all_reduce:
    return "all_reduce";
  case CollectiveKind::all_gather:
    return "all_gather";
  case CollectiveKind::reduce_scatter:
    return "reduce_scatter";
  case CollectiveKind::all_to_all:
    return "all_to_all";
  case CollectiveKind::broadcast:
    return "broadcast";
  }
  return "?";
}

double cost::busBandwidthFactor(CollectiveKind kind, int64_t ranks) {
  double n = static_cast<double>(ranks);
  switch (kind) {
  case CollectiveKind::all_reduce:
    return 2 * (n - 1) / n;
  case CollectiveKind::all_gather:
  case CollectiveKind::reduce_scatter:
  case CollectiveKind::all_to_all:
    return (n - 1) / n;
  case CollectiveKind::broadcast:
    return 1;
  }
  return 1;
}

/// estimateCollective with a floor of `floorUs` instead of the
/// description's: 0 gives the fabric's own time (collectiveLatencyUs).
static CollectiveEstimate estimateWithFloor(const HardwareDesc &hw,
                                            CollectiveKind kind, double bytes,
                                            int64_t ranks, int64_t nodes,
                                            double floorUs) {
  CollectiveEstimate estimate;
  if (ranks <= 1 || bytes <= 0) {
    estimate.algorithm = "none";
    return estimate;
  }
  nodes = std::max<int64_t>(1, std::min(nodes, ranks));
  int64_t perNode = (ranks + nodes - 1) / nodes;
  const ArchCaps &caps = capsFor(hw);
  int ni = nodeIndex(nodes);
  double channels = static_cast<double>(hw.commChannels);
  double factor = busBandwidthFactor(kind, ranks);
  // Bytes every rank moves over its busiest link ("bus bytes").
  double busBytes = bytes * factor;
  // Traffic per byte of the message as NCCL deals it to channels
  // (ncclFuncTrafficPerByte: an all_reduce moves its buffer twice; an
  // all_gather's or reduce_scatter's nccl-tests size is already every
  // rank's block).
  double trafficPerByte = kind == CollectiveKind::all_reduce ? 2.0 : 1.0;
  Candidate best;
  // What NCCL may run here: its environment's lists (hw.nccl), and LL128
  // only where NCCL enables it.
  auto allowed = [&](NcclAlgorithm algorithm, Protocol protocol) {
    return hw.nccl.allows(algorithm) &&
           hw.nccl.allows(static_cast<NcclProtocol>(protocol)) &&
           (protocol != LL128 || hasLL128(hw));
  };

  if (hw.intraNode.kind == IntraNodeKind::shm) {
    // MPI over shared memory (a braid-calibrate description): one protocol,
    // measured step latency, ring steps as NCCL counts them; all_to_all is
    // a pairwise exchange of n - 1 steps.
    double steps = kind == CollectiveKind::all_reduce ? 2.0 * (ranks - 1)
                                                      : double(ranks - 1);
    double bw = hw.intraNode.collectiveBandwidthGBps.lookup(
        stringifyCollectiveKind(kind));
    if (bw <= 0)
      bw = ringBusBandwidth(hw, nodes);
    double stepUs = hw.intraNode.hopLatencyUs;
    double netGBps =
        hw.interNode.nicsPerNode * hw.interNode.effectiveNicGBps();
    if (nodes > 1 && (kind == CollectiveKind::all_to_all ||
                      kind == CollectiveKind::all_gather)) {
      // Across nodes (a calibration on several hosts), a pairwise exchange
      // sends each rank's share for the other nodes' ranks through its
      // node's link, and those steps wait for the network's latency. Braid's
      // runtime all-gathers with MPI_Iallgather, which Open MPI's libnbc
      // runs the same way, linearly: every rank sends its block to every
      // other rank at once (ompi/mca/coll/libnbc/nbc_iallgather.c), so a
      // block crosses the network once per rank of the other nodes, twice
      // what a hierarchical form would send (on scripts/two_hosts.sh's
      // hosts 18.4 ms measured for 2 MiB, against 8.8 hierarchical).
      double interBytesPerNode =
          perNode * bytes * double(ranks - perNode) / ranks;
      double intraUs = bytes * double(perNode - 1) / ranks / bw * 1e-3;
      // Every node sends as much as it receives: both ways at once.
      double interUs = hw.interNode.transferUs(interBytesPerNode,
                                               interBytesPerNode, netGBps);
      best.consider(double(perNode - 1) * stepUs +
                        double(ranks - perNode) *
                            std::max(stepUs, hw.interNode.latencyUs) +
                        std::max(intraUs, interUs),
                    kind == CollectiveKind::all_to_all ? "mpi/pairwise"
                                                       : "mpi/linear");
    } else if (nodes > 1 && kind == CollectiveKind::reduce_scatter) {
      // Braid's runtime reduce-scatters with MPI_Ireduce_scatter_block,
      // which Open MPI's libnbc runs as a binomial reduce of the whole
      // buffer to rank 0 followed by a linear scatter of the blocks
      // (ompi/mca/coll/libnbc). Of the tree's log2(ranks) rounds, those
      // pairing ranks of one node move the buffer over shared memory and the
      // rest over the network; the scatter sends the other nodes' blocks
      // through rank 0's link. On scripts/two_hosts.sh's hosts a sharded
      // optimizer step priced as a ring reduce_scatter was predicted 1%
      // faster and measured 25% slower (docs/coopt.md).
      double intraRounds = std::ceil(std::log2(double(perNode)));
      double rounds = std::ceil(std::log2(double(ranks)));
      double interRounds = std::max(0.0, rounds - intraRounds);
      double linkGBps = hw.intraNode.bandwidthGBps();
      double reduceUs =
          intraRounds * (stepUs + (linkGBps > 0 ? bytes / linkGBps * 1e-3 : 0)) +
          interRounds * (std::max(stepUs, hw.interNode.latencyUs) +
                         (netGBps > 0 ? bytes / netGBps * 1e-3 : 0));
      double block = bytes / ranks;
      double scatterUs =
          double(perNode - 1) *
              (stepUs + (linkGBps > 0 ? block / linkGBps * 1e-3 : 0)) +
          double(ranks - perNode) *
              (std::max(stepUs, hw.interNode.latencyUs) +
               (netGBps > 0 ? block / netGBps * 1e-3 : 0));
      best.consider(reduceUs + scatterUs, "mpi/reduce+scatter");
    } else if (nodes > 1) {
      // Across nodes MPI goes hierarchically (Open MPI's tuned and han
      // components): the steps inside a node at its latency and rate, the
      // steps between nodes at the network's, the two stages overlapping
      // on large messages. A flat ring over every rank crosses the network
      // 2(n-1)/n times the message where this crosses it 2(nodes-1)/nodes
      // times; on scripts/two_hosts.sh's hosts the ring was 1.7-2x slower
      // than the all_reduce braid-calibrate measures (docs/coopt.md).
      double perStage = kind == CollectiveKind::all_reduce ? 2.0 : 1.0;
      double latencyUs =
          perStage * (double(perNode - 1) * stepUs +
                      double(nodes - 1) *
                          std::max(stepUs, hw.interNode.latencyUs));
      double intraUs = bytes * busBandwidthFactor(kind, perNode) / bw * 1e-3;
      double netUs = netGBps > 0 ? bytes * busBandwidthFactor(kind, nodes) /
                                       netGBps * 1e-3
                                 : 0;
      best.consider(latencyUs + std::max(intraUs, netUs), "mpi/hierarchical");
    } else {
      best.consider(steps * stepUs + busBytes / bw * 1e-3,
                    kind == CollectiveKind::all_to_all ? "mpi/pairwise"
                                                       : "mpi/ring");
    }
  } else if (kind == CollectiveKind::all_to_all) {
    // Point to point: a rank's peers on its node go over the intra-node
    // fabric, the others through the node's NICs, shared by its ranks.
    double intraBytes = bytes * (perNode - 1) / ranks;
    double interBytesPerNode = perNode * bytes * (ranks - perNode) / ranks;
    double time = intraBytes / hw.intraNode.bandwidthGBps();
    if (nodes > 1)
      time = std::max(
          time, hw.interNode.transferUs(interBytesPerNode, interBytesPerNode,
                                        hw.interNode.nicsPerNode *
                                            hw.interNode.effectiveNicGBps()) *
                    1e3);
    Protocol protocol = Simple;
    double total = allToAllUs(hw, ranks, perNode, time * 1e-3,
                              bytes / double(ranks), &protocol);
    best.consider(total, std::string("p2p/") + kProtocolNames[protocol]);
  } else {
    // Ring, every kind. NCCL: nsteps = 2(n-1) for all_reduce, n-1
    // otherwise; the steps crossing nodes pay the network's latency, the
    // transport's own included (and its flush on Simple, before Hopper).
    // For all_reduce, 2 (nodes - 1) of them, as NCCL >= 2.23 counts them (2
    // nodes before). For the others, one per node: a ring over N nodes has
    // N edges between nodes, and the block a rank past its node's first
    // sends crosses all N in its n - 1 hops (on 2 nodes, out to the other
    // node and back over the ring's closing edge), where NCCL's tuner counts
    // nodes - 1. (Counting 2 N for all_reduce fitted the calibration half
    // worse: docs/cost-model.md.)
    bool allReduce = kind == CollectiveKind::all_reduce;
    double ringBw = ringBusBandwidth(hw, nodes);
    // A pipeline of `hops` hops fills one step at a time: the first piece
    // crosses every hop before the last hop is busy. A step carries a
    // channel's chunk, or less when each channel's share of a hop's data
    // (`perHop`) is smaller; the fill adds those bytes once per hop (bus
    // bytes at the pipeline's bandwidth).
    // LL forwards 8-byte lines as they arrive and needs no fill; LL128 and
    // Simple forward chunks through their step buffers. Simple's step is an
    // eighth of NCCL_BUFFSIZE, so its chunk scales with that buffer.
    auto pipelineFill = [&](double hops, double perHop,
                            Protocol protocol = Simple) {
      if (protocol == LL)
        return 0.0;
      double chunk = hw.commChunkBytes;
      if (protocol == Simple)
        chunk *= hw.ncclBufferBytes / HardwareDesc::kNcclDefaultBufferBytes;
      return hops * std::min(chunk * channels, perHop);
    };
    double steps = allReduce ? 2.0 * (ranks - 1) : double(ranks - 1);
    double interSteps = allReduce   ? 2.0 * double(nodes - 1)
                        : nodes > 1 ? double(nodes)
                                    : 0.0;
    auto netLatency = [&](const double *table, Protocol protocol) {
      return table[protocol] + transportLatencyUs(hw, protocol);
    };
    for (Protocol protocol : {LL, LL128, Simple}) {
      if (!allowed(NcclAlgorithm::ring, protocol))
        continue;
      double bw = ringBw;
      // A message too small for every channel runs on fewer, each at a
      // channel's rate. NCCL's cap on LL (llMaxBw) bounds the whole
      // collective's rate, as its tuner applies it with every channel
      // busy, so it applies to the channels in use: a 64 KiB all_gather
      // over 16 ranks on one channel is not held to 1/16 of it. (The
      // tree's LL keeps the cap per channel: applied to the channels in use
      // it fitted both halves' small messages worse, docs/cost-model.md.)
      double share = channelShare(bytes, protocol, channels,
                                  protocol == LL ? double(ranks) : 1.0,
                                  trafficPerByte);
      if (protocol == LL)
        bw = std::min(caps.llMax[ni],
                      bw * (nodes > 1 || allReduce ? 1.0 / 4 : 1.0 / 3) *
                          share);
      else if (protocol == LL128)
        bw = std::min(bw * (perNode < 2 ? 0.7 : 0.92),
                      channels * caps.perChannelRingLL128) *
             share;
      else
        bw *= share;
      // Across nodes every step of the ring posts a network operation, so
      // no step is faster than the transport's cost per post (NCCL's
      // netOverhead, three times it on Simple: "inter-node rings still
      // have to launch nsteps * net overhead"). NCCL takes it from the CPU
      // (getNetOverhead: 1 us on Intel and others, 2 on AMD); the
      // description's post_overhead_us defaults to that and is fitted per
      // fabric class (Slingshot pays about 8 us per post).
      double intraStep = intraLatency(hw, kNvlinkRing, kPciRing, protocol);
      if (nodes > 1)
        intraStep = std::max(intraStep, hw.interNode.postOverheadUs *
                                            (protocol == Simple ? 3.0 : 1.0));
      double latency = kBaseRing[protocol] +
                       (steps - interSteps) * intraStep +
                       interSteps * netLatency(kNetRing, protocol);
      // NCCL's "plateau effect of ring": a multi-node all_reduce on Simple
      // pays 1.4x its latency once every rank's share of a channel reaches
      // 64 bytes.
      if (allReduce && protocol == Simple && nodes > 1 &&
          bytes / (channels * ranks) >= 64)
        latency *= 1.4;
      best.consider(latency +
                        (busBytes + pipelineFill(steps, bytes / ranks, protocol)) /
                            bw * 1e-3,
                    std::string("ring/") + kProtocolNames[protocol]);
    }
    if (allReduce) {
      // Tree: a chain inside each node, a binary tree across nodes; the
      // data goes up and down once (2 * bytes over the busiest link), at
      // NCCL's per-size correction.
      // Across nodes, each node's reduced buffer goes up the tree and comes
      // back down once: on 2 nodes the NICs carry the buffer once each way
      // (algorithm bandwidth up to the NICs' rate, where a ring gets about
      // half of it); beyond, a node is an inner vertex of one of NCCL's two
      // trees, and its NICs carry twice that.
      double treeBw = hw.intraNode.bandwidthGBps();
      if (nodes > 1)
        treeBw = std::min(treeBw, hw.interNode.nicsPerNode *
                                      hw.interNode.effectiveNicGBps() *
                                      (nodes <= 2 ? 2.0 : 1.0));
      for (Protocol protocol : {LL, LL128, Simple}) {
        if (!allowed(NcclAlgorithm::tree, protocol))
          continue;
        double bw = 0.92 * treeBw;
        if (protocol == LL)
          bw = std::min(bw / 3.8, caps.llMax[ni]);
        else if (protocol == LL128)
          bw = std::min(bw * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                        channels * caps.perChannelTreeLL128[ni]);
        else
          bw = std::min(bw, channels * caps.perChannelTree[ni]);
        bw *= channelShare(bytes, protocol, channels, 1.0, trafficPerByte);
        // NCCL's correction applies to the tree's streaming, not to its fill.
        double corrected = bw * treeCorrection(bytes, protocol);
        double latency =
            kBaseTree[protocol] +
            2 * ((perNode - 1) * intraLatency(hw, kNvlinkTree, kPciTree, protocol) +
                 std::floor(std::log2(double(nodes))) *
                     netLatency(kNetTree, protocol));
        double depth = 2 * ((perNode - 1) + std::log2(double(nodes)));
        best.consider(latency + (2 * bytes / corrected +
                                 pipelineFill(depth, bytes, protocol) / bw) *
                                    1e-3,
                      std::string("tree/") + kProtocolNames[protocol]);
      }
      // NVLS: the switch reduces and multicasts, so each device sends and
      // receives the buffer once, at NCCL's NVLS efficiency of its links.
      // Across nodes (NVLSTree) the node's reduced buffer crosses the
      // network once up and once down a tree over the nodes: the NICs
      // carry it at their rate (half of it beyond 2 nodes, where a node is
      // an inner vertex of the tree), at NCCL's 5/6 of the slower side.
      if (hw.intraNode.nvls &&
          allowed(nodes == 1 ? NcclAlgorithm::nvls : NcclAlgorithm::nvlsTree,
                  Simple)) {
        double nvlsChannels = static_cast<double>(hw.intraNode.nvlsChannels);
        double intraBw = hw.intraNode.bandwidthGBps() *
                         hw.intraNode.nvlsEfficiency *
                         (nvlsChannels - 1) / nvlsChannels;
        double share = channelShare(bytes, Simple, channels, 1.0, trafficPerByte);
        if (nodes == 1) {
          // One node's NVLS reaches its own (fitted) share of the links, and
          // fills its pipeline first: min(bytes, fill) more bytes, as the
          // first pass through the switch completes before the multicast
          // streams (fitted on the calibration half's one-node NVLS sweep).
          double nodeBw = hw.intraNode.bandwidthGBps() *
                          hw.intraNode.nvlsNodeEfficiency *
                          (nvlsChannels - 1) / nvlsChannels * share;
          double fill = std::min(bytes, hw.intraNode.nvlsFillBytes);
          best.consider(kNvlsLatency + (bytes + fill) / nodeBw * 1e-3,
                        "nvls/simple");
        } else {
          double nicBw =
              hw.interNode.nicsPerNode * hw.interNode.effectiveNicGBps();
          double bw = std::min(intraBw, nodes <= 2 ? nicBw : nicBw / 2) *
                      5.0 / 6.0 * share;
          double latency =
              kNvlsLatency + 2 * std::floor(std::log2(double(nodes))) *
                                 (kNvlsTreeNetLatency +
                                  transportLatencyUs(hw, Simple));
          double depth = 2 * (1 + std::log2(double(nodes)));
          best.consider(latency + (bytes + pipelineFill(depth, bytes)) / bw * 1e-3,
                        "nvls_tree/simple");
        }
      }
    }
  }
  // No call completes faster than the host issues it.
  estimate.timeUs = std::max(best.timeUs, floorUs);
  estimate.algorithm = best.name;
  estimate.algbwGBps = bytes / (estimate.timeUs * 1e3);
  estimate.busbwGBps = estimate.algbwGBps * factor;
  return estimate;
}

CollectiveEstimate cost::estimateCollective(const HardwareDesc &hw,
                                            CollectiveKind kind, double bytes,
                                            int64_t ranks, int64_t nodes) {
  return estimateWithFloor(hw, kind, bytes, ranks, nodes, hw.collectiveFloorUs);
}

double cost::collectiveLatencyUs(const HardwareDesc &hw, CollectiveKind kind,
                                 int64_t ranks, int64_t nodes) {
  // Every candidate costs latency + bytes / bandwidth; at the least
  // positive size the bytes' term rounds to zero. The collective floor is a
  // maximum, not a term: a bound that adds the bytes' time leaves it out.
  return estimateWithFloor(hw, kind, std::numeric_limits<double>::denorm_min(),
                           ranks, nodes, /*floorUs=*/0)
      .timeUs;
}

double cost::ringUsPerByteAtLeast(const HardwareDesc &hw, CollectiveKind kind,
                                  int64_t ranks, int64_t nodes) {
  assert((kind == CollectiveKind::reduce_scatter ||
          kind == CollectiveKind::all_gather) &&
         "only the ring-only collectives have this bound");
  if (ranks <= 1)
    return 0;
  nodes = std::max<int64_t>(1, std::min(nodes, ranks));
  double bw = ringBusBandwidth(hw, nodes);
  if (hw.intraNode.kind == IntraNodeKind::shm) {
    double measured = hw.intraNode.collectiveBandwidthGBps.lookup(
        stringifyCollectiveKind(kind));
    if (measured > 0)
      bw = measured;
  }
  return busBandwidthFactor(kind, ranks) / bw * 1e-3;
}

double cost::reduceScatterUsPerByteAtLeast(const HardwareDesc &hw,
                                           int64_t ranks, int64_t nodes) {
  return ringUsPerByteAtLeast(hw, CollectiveKind::reduce_scatter, ranks,
                              nodes);
}

double cost::estimateAllToAllvUs(const HardwareDesc &hw,
                                 llvm::ArrayRef<double> sendBytes,
                                 int64_t ranks, int64_t ranksPerNode) {
  if (ranks <= 1)
    return 0;
  ranksPerNode = std::max<int64_t>(1, ranksPerNode);
  int64_t nodes = (ranks + ranksPerNode - 1) / ranksPerNode;
  AllToAllLinkBytes links(ranks, nodes);
  for (int64_t i = 0; i < ranks; ++i) {
    for (int64_t j = 0; j < ranks; ++j) {
      if (i == j)
        continue;
      double bytes = sendBytes[i * ranks + j];
      if (i / ranksPerNode == j / ranksPerNode) {
        links.rankOut[i] += bytes;
        links.rankIn[j] += bytes;
      } else {
        links.nodeOut[i / ranksPerNode] += bytes;
        links.nodeIn[j / ranksPerNode] += bytes;
      }
    }
  }
  return estimateAllToAllvUs(hw, links);
}

double cost::estimateAllToAllvUs(const HardwareDesc &hw,
                                 const AllToAllLinkBytes &links) {
  int64_t ranks = links.rankOut.size(), nodes = links.nodeOut.size();
  if (ranks <= 1)
    return 0;
  // The busiest rank's link inside the node, and the busiest node's NICs:
  // a node's link carries what it sends and what it receives, both ways at
  // once where both are there.
  double busiestRankBytes = 0, busiestNodeBytes = 0;
  for (int64_t i = 0; i < ranks; ++i)
    busiestRankBytes = std::max(
        busiestRankBytes, std::max(links.rankOut[i], links.rankIn[i]));
  double worstLinkUs = busiestRankBytes / hw.intraNode.bandwidthGBps() * 1e-3;
  double nicBw = hw.interNode.nicsPerNode * hw.interNode.effectiveNicGBps();
  for (int64_t node = 0; node < nodes; ++node) {
    busiestNodeBytes = std::max(
        busiestNodeBytes, std::max(links.nodeOut[node], links.nodeIn[node]));
    worstLinkUs = std::max(worstLinkUs,
                           hw.interNode.transferUs(links.nodeOut[node],
                                                   links.nodeIn[node], nicBw));
  }
  int64_t perNode = (ranks + nodes - 1) / nodes;
  if (hw.intraNode.kind == IntraNodeKind::shm) {
    // The steps to other nodes' ranks wait for the network's latency.
    double hopUs = hw.intraNode.hopLatencyUs;
    double netHopUs = std::max(hopUs, hw.interNode.latencyUs);
    return std::max(hw.collectiveFloorUs, (perNode - 1) * hopUs +
                                              (ranks - perNode) * netHopUs +
                                              worstLinkUs);
  }
  // The links give totals, not pairs: a peer's message is taken as the
  // busiest rank's (or node's) share of its peers on that link.
  double peerBytes = 0;
  if (perNode > 1)
    peerBytes = busiestRankBytes / double(perNode - 1);
  if (ranks > perNode)
    peerBytes = std::max(peerBytes, busiestNodeBytes /
                                        double(perNode * (ranks - perNode)));
  return std::max(hw.collectiveFloorUs,
                  allToAllUs(hw, ranks, perNode, worstLinkUs, peerBytes));
}

llvm::Expected<CollectiveEstimate>
cost::estimateCollectiveRequest(const HardwareDesc &hw, llvm::StringRef kind,
                                double bytes, int64_t ranks, int64_t nodes) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  std::optional<CollectiveKind> parsed = symbolizeCollectiveKind(kind);
  if (!parsed)
    return error("the kind must be all_reduce, all_gather, reduce_scatter, "
                 "all_to_all or broadcast, got '" +
                 kind + "'");
  if (!(bytes > 0) || bytes > 1e15)
    return error("the size must be a positive number of bytes up to 1e15");
  int64_t r = ranks ? ranks : hw.worldSize();
  if (r < 1 || r > 1 << 20)
    return error("the ranks must be between 1 and 2^20, got " +
                 llvm::Twine(r));
  int64_t m = nodes ? nodes : (r + hw.ranksPerNode - 1) / hw.ranksPerNode;
  if (m < 1 || m > r || r % m != 0)
    return error("the nodes must divide the ranks (" + llvm::Twine(r) +
                 "), got " + llvm::Twine(m));
  CollectiveEstimate estimate = estimateCollective(hw, *parsed, bytes, r, m);
  if (estimate.algorithm.empty())
    return error("NCCL's environment (NCCL_ALGO, NCCL_PROTO) leaves no "
                 "algorithm Braid models for " +
                 kind + " on " + llvm::Twine(m) + " node(s)");
  return estimate;
}
