//===- CostModel.h - Kernel and collective cost models ----------*- C++ -*-===//
//
// This file declares the analytical models the planner, the co-optimization
// passes and the simulator ask: how long a collective, a GEMM, an embedding
// bag or an elementwise kernel takes on a described machine, and how much
// overlapped compute slows down next to a collective. docs/cost-model.md
// derives every term and cites every constant.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_COST_COSTMODEL_H
#define BRAID_COST_COSTMODEL_H

#include "braid/Cluster/Hardware.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::braid::cost {

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast };

std::optional<CollectiveKind> symbolizeCollectiveKind(llvm::StringRef name);
llvm::StringRef stringifyCollectiveKind(CollectiveKind kind);

/// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all_reduce, (n-1)/n for
/// all_gather, reduce_scatter and all_to_all, 1 for broadcast.
double busBandwidthFactor(CollectiveKind kind, int64_t ranks);

struct CollectiveEstimate {
  double timeUs = 0;
  /// nccl-tests definitions: algbw = bytes / time, busbw = algbw * factor.
  double algbwGBps = 0;
  double busbwGBps = 0;
  /// The chosen algorithm and protocol, e.g. "ring/simple", "nvls/simple".
  std::string algorithm;
};

/// Estimates a collective over `ranks` ranks spread evenly over `nodes`
/// nodes. `bytes` is the buffer size as nccl-tests counts it: the (output)
/// buffer of all_gather, the input of reduce_scatter, the per-rank buffer
/// otherwise. Like NCCL, it takes the fastest algorithm and protocol.
CollectiveEstimate estimateCollective(const cluster::HardwareDesc &hw,
                                      CollectiveKind kind, double bytes,
                                      int64_t ranks, int64_t nodes);

/// estimateCollective from a user's request, checked: `kind` by name,
/// `bytes` positive up to 1e15, `ranks` (0: the hardware's world) between 1
/// and 2^20, `nodes` (0: as many as `ranks` fill) dividing `ranks`. The
/// error says which argument is wrong. braid-sim collective and the C API
/// answer with it.
llvm::Expected<CollectiveEstimate>
estimateCollectiveRequest(const cluster::HardwareDesc &hw,
                          llvm::StringRef kind, double bytes, int64_t ranks,
                          int64_t nodes);

/// The least time per byte (in microseconds) estimateCollective charges a
/// reduce_scatter over `ranks` ranks on `nodes` nodes, whatever the size:
/// its bus factor over the fastest bandwidth any protocol reaches. Lower
/// bounds use it; the fixed latencies come on top.
double reduceScatterUsPerByteAtLeast(const cluster::HardwareDesc &hw,
                                     int64_t ranks, int64_t nodes);

/// The same for a reduce_scatter or an all_gather (`kind`): both run as
/// rings only, so every protocol moves the bus bytes at most at the ring's
/// bandwidth.
double ringUsPerByteAtLeast(const cluster::HardwareDesc &hw,
                            CollectiveKind kind, int64_t ranks, int64_t nodes);

/// The fixed latency of the fastest algorithm estimateCollective has for a
/// collective of `kind`, whatever its size. Lower bounds add it to the
/// bytes' time at reduceScatterUsPerByteAtLeast; the description's
/// `collective_floor_us` is left out, since it bounds the sum instead of
/// adding to it.
double collectiveLatencyUs(const cluster::HardwareDesc &hw,
                           CollectiveKind kind, int64_t ranks, int64_t nodes);

/// An uneven all_to_all: `sendBytes[i * ranks + j]` bytes go from rank i to
/// rank j; ranks are laid out node by node, `ranksPerNode` per node. The
/// time is set by the most loaded rank link and node NIC set.
double estimateAllToAllvUs(const cluster::HardwareDesc &hw,
                           llvm::ArrayRef<double> sendBytes, int64_t ranks,
                           int64_t ranksPerNode);

/// The totals an uneven all_to_all's time depends on: the bytes each rank
/// sends to and receives from the ranks of its node (`rankOut`, `rankIn`,
/// one entry per rank), and the bytes each node's ranks send to and receive
/// from other nodes (`nodeOut`, `nodeIn`, one entry per node). They add up
/// over the parts of an exchange, which lets a search update them
/// incrementally.
struct AllToAllLinkBytes {
  std::vector<double> rankOut, rankIn, nodeOut, nodeIn;
  AllToAllLinkBytes() = default;
  AllToAllLinkBytes(int64_t ranks, int64_t nodes)
      : rankOut(ranks, 0), rankIn(ranks, 0), nodeOut(nodes, 0),
        nodeIn(nodes, 0) {}
};

/// The same time as the matrix form, from the link totals.
double estimateAllToAllvUs(const cluster::HardwareDesc &hw,
                           const AllToAllLinkBytes &links);

/// A kernel estimate: its time alone on the device and the fraction of it
/// bound by memory bandwidth (the rest by arithmetic), which the contention
/// model needs.
struct KernelEstimate {
  double timeUs = 0;
  double memoryBoundFraction = 0;
};

/// [m, k] x [k, n] in `dtype` ("f32", "tf32", "bf16", "f16"), by roofline
/// with wave quantization over 128 x 128 output tiles.
KernelEstimate estimateGemm(const cluster::HardwareDesc &hw, int64_t m,
                            int64_t n, int64_t k, llvm::StringRef dtype);

/// What an embedding bag reads, for its cost.
struct EmbeddingBagShape {
  int64_t bags = 0;
  double poolingFactor = 0;
  int64_t dim = 0;
  int64_t elementBytes = 4;
  int64_t rows = 0;
  /// Fraction of looked-up rows that are distinct; 1 when unknown.
  double uniqueRatio = 1;
};

/// Gathers the distinct rows from memory; repeated rows hit in L2 while the
/// distinct set fits there.
KernelEstimate estimateEmbeddingBag(const cluster::HardwareDesc &hw,
                                    const EmbeddingBagShape &shape);

/// A streaming kernel that reads and writes `bytes` in total.
KernelEstimate estimateElementwise(const cluster::HardwareDesc &hw,
                                   double bytes);

/// Packing or unpacking an all_to_all buffer of `bytes`: one read and one
/// write of every byte.
KernelEstimate estimatePack(const cluster::HardwareDesc &hw, double bytes);

/// How much longer a kernel takes while a collective runs on the same
/// device: the collective holds `commChannels` SMs and streams its bytes
/// through memory at `commMemoryGBps`. Always > 1 when a collective runs:
/// overlap is never free. A description's measured
/// `compute_slowdown_beside_comm` replaces this model.
double overlapDilation(const cluster::HardwareDesc &hw,
                       double memoryBoundFraction, double commMemoryGBps);

/// The memory bandwidth a collective uses on one device while it runs: it
/// reads its send buffer and writes its receive buffer.
double collectiveMemoryGBps(const CollectiveEstimate &estimate);

} // namespace mlir::braid::cost

#endif // BRAID_COST_COSTMODEL_H
