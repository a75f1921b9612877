//===- CollectiveModel.cpp - Collective cost model ------------------------===//
//
// This file models collectives the way NCCL's own tuner does
// (src/graph/tuning.cc): for each algorithm (ring, tree, NVLS) and protocol
// (LL, LL128, Simple), time = latency + bytes / algorithm bandwidth, and the
// fastest wins. Latencies and protocol caps are NCCL's constants (transcribed
// in ../shared/data/configs/nccl_cost_model_constants.json); bandwidths
// come from the hardware description. all_to_all is point-to-point and
// bounded by the most loaded link. docs/cost-model.md derives each term.
//
//===----------------------------------------------------------------------===//

#include "braid/Cost/CostModel.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

using namespace mlir::braid;
using namespace mlir::braid::cost;
using cluster::Arch;
using cluster::HardwareDesc;
using cluster::IntraNodeKind;

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
constexpr double kNvlsLatency = 25.0; // NVLINK, Simple only

/// NCCL's caps per architecture, indexed by node count 1, 2, >= 4.
struct ArchCaps {
  double llMax[3];
  double perChannelRingLL128;
  double perChannelTree[3];
  double perChannelTreeLL128[3];
};
constexpr ArchCaps kAmpere = {{87.7, 22.5, 19.0}, 20.0, {24.0, 23.6, 17.8},
                              {20.0, 20.0, 20.0}};
constexpr ArchCaps kHopper = {{141.0, 45.0, 35.0}, 36.7, {38.7, 41.4, 36.0},
                              {36.7, 36.7, 29.0}};

const ArchCaps &capsFor(const HardwareDesc &hw) {
  return hw.device.arch == Arch::ampere ? kAmpere : kHopper;
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

CollectiveEstimate cost::estimateCollective(const HardwareDesc &hw,
                                            CollectiveKind kind, double bytes,
                                            int64_t ranks, int64_t nodes) {
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
  Candidate best;

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
    best.consider(steps * hw.intraNode.hopLatencyUs + busBytes / bw * 1e-3,
                  kind == CollectiveKind::all_to_all ? "mpi/pairwise"
                                                     : "mpi/ring");
  } else if (kind == CollectiveKind::all_to_all) {
    // Point to point: a rank's peers on its node go over the intra-node
    // fabric, the others through the node's NICs, shared by its ranks.
    double intraBytes = bytes * (perNode - 1) / ranks;
    double interBytesPerNode = perNode * bytes * (ranks - perNode) / ranks;
    double time = intraBytes / hw.intraNode.bandwidthGBps();
    if (nodes > 1)
      time = std::max(time, interBytesPerNode /
                                (hw.interNode.nicsPerNode *
                                 hw.interNode.effectiveNicGBps()));
    double latency = kBaseRing[Simple] +
                     intraLatency(hw, kNvlinkRing, kPciRing, Simple) +
                     (nodes > 1 ? kNetRing[Simple] : 0);
    best.consider(latency + time * 1e-3, "p2p/simple");
  } else {
    // Ring, every kind. NCCL: nsteps = 2(n-1) for all_reduce, n-1
    // otherwise; the steps crossing nodes pay the network latency.
    double ringBw = ringBusBandwidth(hw, nodes);
    double steps = kind == CollectiveKind::all_reduce ? 2.0 * (ranks - 1)
                                                      : double(ranks - 1);
    double interSteps = kind == CollectiveKind::all_reduce ? 2.0 * (nodes - 1)
                                                           : double(nodes - 1);
    for (Protocol protocol : {LL, LL128, Simple}) {
      double bw = ringBw;
      if (protocol == LL)
        bw = std::min(caps.llMax[ni], 0.5 * bw);
      else if (protocol == LL128)
        bw = std::min(0.92 * bw, channels * caps.perChannelRingLL128);
      double latency =
          kBaseRing[protocol] +
          (steps - interSteps) * intraLatency(hw, kNvlinkRing, kPciRing, protocol) +
          interSteps * kNetRing[protocol];
      best.consider(latency + busBytes / bw * 1e-3,
                    std::string("ring/") + kProtocolNames[protocol]);
    }
    if (kind == CollectiveKind::all_reduce) {
      // Tree: a chain inside each node, a binary tree across nodes; the
      // data goes up and down once (2 * bytes over the busiest link).
      for (Protocol protocol : {LL, LL128, Simple}) {
        double bw = ringBw;
        if (protocol == LL)
          bw = std::min(bw / 3.8, caps.llMax[ni]);
        else if (protocol == LL128)
          bw = std::min(bw * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                        channels * caps.perChannelTreeLL128[ni]);
        else
          bw = std::min(0.92 * bw, channels * caps.perChannelTree[ni]);
        double latency =
            kBaseTree[protocol] +
            2 * ((perNode - 1) * intraLatency(hw, kNvlinkTree, kPciTree, protocol) +
                 std::log2(double(nodes)) * kNetTree[protocol]);
        best.consider(latency + 2 * bytes / bw * 1e-3,
                      std::string("tree/") + kProtocolNames[protocol]);
      }
      // NVLS: the switch reduces and multicasts, so each device sends and
      // receives the buffer once, at NCCL's NVLS efficiency of its links.
      if (hw.intraNode.nvls && nodes == 1) {
        double nvlsChannels = static_cast<double>(hw.intraNode.nvlsChannels);
        double bw = hw.intraNode.bandwidthGBps() * hw.intraNode.nvlsEfficiency *
                    (nvlsChannels - 1) / nvlsChannels;
        best.consider(kNvlsLatency + bytes / bw * 1e-3, "nvls/simple");
      }
    }
  }
  estimate.timeUs = best.timeUs;
  estimate.algorithm = best.name;
  estimate.algbwGBps = bytes / (estimate.timeUs * 1e3);
  estimate.busbwGBps = estimate.algbwGBps * factor;
  return estimate;
}

double cost::collectiveLatencyUs(const HardwareDesc &hw, CollectiveKind kind,
                                 int64_t ranks, int64_t nodes) {
  // Every candidate costs latency + bytes / bandwidth; at the least
  // positive size the bytes' term rounds to zero.
  return estimateCollective(hw, kind, std::numeric_limits<double>::denorm_min(),
                            ranks, nodes)
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
  double worstLink = 0;
  for (int64_t i = 0; i < ranks; ++i)
    worstLink = std::max(worstLink, std::max(links.rankOut[i], links.rankIn[i]) /
                                        hw.intraNode.bandwidthGBps());
  double nicBw = hw.interNode.nicsPerNode * hw.interNode.effectiveNicGBps();
  for (int64_t node = 0; node < nodes; ++node)
    worstLink = std::max(worstLink,
                         std::max(links.nodeOut[node], links.nodeIn[node]) / nicBw);
  double latency = hw.intraNode.kind == IntraNodeKind::shm
                       ? (ranks - 1) * hw.intraNode.hopLatencyUs
                       : kBaseRing[Simple] +
                             intraLatency(hw, kNvlinkRing, kPciRing, Simple) +
                             (nodes > 1 ? kNetRing[Simple] : 0);
  return latency + worstLink * 1e-3;
}
