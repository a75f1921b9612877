//===- braid-calibrate.cpp - Measure this machine -------------------------===//
//
// This file implements braid-calibrate. Run under `mpirun -n R`, it measures
// the machine with every rank busy at once, as the CPU backend will run:
// memory bandwidth (STREAM triad), single-thread GEMM rate (OpenBLAS
// sgemm), embedding-row gather rate, and MPI collectives over message sizes
// inside a node (the ranks that share memory) and, on several nodes,
// between node leaders and over every rank, started non-blocking and
// waited for, as compiled programs run them. It fits the ring model's step
// latency and bandwidth to each set of all_reduce measurements and writes a
// hardware description (kind "shm", arch "cpu", the nodes and ranks per node it
// ran on) that braid-sim and the cost model read, with the raw measurements
// under
// "_measured" for later comparison with measured runs. Last, it times a
// GEMM beside a running all_reduce: how much each slows the other is what
// the simulator's overlap of communication and computation needs.
//
//===----------------------------------------------------------------------===//

#include "braid/Cluster/Hardware.h"
#include "braid/Support/AtomicOutput.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include <sys/mman.h>

namespace cl = llvm::cl;

/// The tool's own options; --help lists only these (LLVM's are hidden).
static cl::OptionCategory toolOptions("braid-calibrate options");
static cl::opt<std::string>
    outputPath(cl::cat(toolOptions), "o",
               cl::desc("Output hardware description (default: this machine's "
                        "calibration, which `--cluster local-cpu` reads)"));
static cl::opt<std::string> name(cl::cat(toolOptions), "name",
                                 cl::init("local-cpu"),
                                 cl::desc("Name of the description"));
static cl::opt<bool> quick(cl::cat(toolOptions), "quick",
                           cl::desc("Small sizes and few repetitions (tests)"));

/// Sum-pools `pooling` rows of 64 floats per bag into an accumulator held
/// in registers, prefetching `ahead` rows, as the generated embedding kernel
/// does. Compiled for the widest vector unit the machine has (chosen when the
/// program loads), as programs compiled with --target-cpu native are: a
/// baseline x86-64 build of this loop is bound by its adds, not by memory
/// (5.3 vs 7.6 GB/s on one rank of this project's build machine).
static constexpr size_t kGatherDim = 64;
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void
gatherBags(const float *table, const uint32_t *indices, float *pooled,
           size_t bags, size_t pooling, size_t ahead) {
  size_t total = bags * pooling;
  for (size_t bag = 0; bag < bags; ++bag) {
    float acc[kGatherDim] = {};
    for (size_t j = bag * pooling; j < (bag + 1) * pooling; ++j) {
      const float *next =
          &table[size_t(indices[std::min(j + ahead, total - 1)]) * kGatherDim];
      for (size_t line = 0; line < kGatherDim; line += 16)
        __builtin_prefetch(next + line, 0, 3);
      const float *row = &table[size_t(indices[j]) * kGatherDim];
      for (size_t c = 0; c < kGatherDim; ++c)
        acc[c] += row[c];
    }
    std::copy(acc, acc + kGatherDim, &pooled[bag * kGatherDim]);
  }
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Runs `body` on every rank at once, `repeats` times; returns the time of
/// the slowest rank for each repetition, in seconds, sorted. `skews`, when
/// given, receives each repetition's (slowest - mean) / mean over the ranks.
template <typename Body>
static std::vector<double> timeAllRanks(int repeats, Body body,
                                        std::vector<double> *skews = nullptr) {
  std::vector<double> times;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  for (int i = 0; i < repeats; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    body();
    double elapsed = now() - start, slowest, total;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&elapsed, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    times.push_back(slowest);
    if (skews && total > 0)
      skews->push_back(slowest / (total / ranks) - 1);
  }
  std::sort(times.begin(), times.end());
  return times;
}

/// The best time, for kernels (noise only slows them down).
template <typename Body> static double bestAllRanks(int repeats, Body body) {
  return timeAllRanks(repeats, body).front();
}

/// The median time, for collectives (noisier than kernels).
template <typename Body> static double medianAllRanks(int repeats, Body body) {
  std::vector<double> times = timeAllRanks(repeats, body);
  return times[times.size() / 2];
}

/// The collectives measured, all_reduce first, and their names in the
/// description.
static constexpr int kKinds = 4;
static constexpr const char *kKindNames[kKinds] = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all"};

/// Starts collective `kind` (an index into kKindNames) over `comm`: an
/// all_reduce of `count` floats, the others `count / size` floats per rank.
static void startCollective(int kind, const float *send, float *recv, int count,
                            MPI_Comm comm, MPI_Request *request) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  int perRank = std::max(1, count / size);
  if (kind == 0)
    MPI_Iallreduce(send, recv, count, MPI_FLOAT, MPI_SUM, comm, request);
  else if (kind == 1)
    MPI_Iallgather(send, perRank, MPI_FLOAT, recv, perRank, MPI_FLOAT, comm,
                   request);
  else if (kind == 2)
    MPI_Ireduce_scatter_block(send, recv, perRank, MPI_FLOAT, MPI_SUM, comm,
                              request);
  else
    MPI_Ialltoall(send, perRank, MPI_FLOAT, recv, perRank, MPI_FLOAT, comm,
                  request);
}

/// Runs collective `kind` as compiled programs do: the runtime starts every
/// one non-blocking (Open MPI's libnbc, whose algorithms differ from the
/// blocking calls': a reduce_scatter_block is a reduce then a scatter) and
/// waits for it.
static void runCollective(int kind, const float *send, float *recv, int count,
                          MPI_Comm comm) {
  MPI_Request request;
  startCollective(kind, send, recv, count, comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

static double readCacheMB(const char *index) {
  std::ifstream file(std::string("/sys/devices/system/cpu/cpu0/cache/") +
                     index + "/size");
  std::string text;
  if (!(file >> text) || text.empty())
    return 0;
  double value = std::atof(text.c_str());
  if (text.back() == 'K')
    value /= 1024;
  return value;
}

static double memoryCapacityGB() {
  std::ifstream file("/proc/meminfo");
  std::string key;
  double kb = 0;
  while (file >> key >> kb)
    if (key == "MemTotal:")
      return kb / 1e6;
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "braid-calibrate: measure this machine and write "
      "a hardware description (run under mpirun -n R)\n");
  // Without -o, write this machine's calibration where `--cluster
  // local-cpu` looks for it, making its directory.
  if (outputPath.empty()) {
    outputPath = mlir::braid::cluster::getLocalCalibrationPath();
    if (rank == 0)
      (void)llvm::sys::fs::create_directories(
          llvm::sys::path::parent_path(outputPath.getValue()));
  }
  // The ranks of this node (those that share memory with this one) and,
  // on more than one node, one leader per node: collectives inside a node
  // are measured over the node's ranks, the network between the leaders.
  MPI_Comm nodeComm, leaderComm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                      &nodeComm);
  int nodeRank = 0, perNode = 1;
  MPI_Comm_rank(nodeComm, &nodeRank);
  MPI_Comm_size(nodeComm, &perNode);
  int fewest = perNode, most = perNode;
  MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (fewest != most) {
    if (rank == 0)
      std::fprintf(stderr,
                   "braid-calibrate: error: the nodes run %d to %d ranks; "
                   "run the same number on every node\n",
                   fewest, most);
    MPI_Finalize();
    return 1;
  }
  int nodes = ranks / perNode;
  MPI_Comm_split(MPI_COMM_WORLD, nodeRank == 0 ? 0 : MPI_UNDEFINED, rank,
                 &leaderComm);
  openblas_set_num_threads(1);
  int repeats = quick ? 3 : 10;
  llvm::json::Object measured;

  // 1. Memory bandwidth: STREAM triad, 24 bytes per element, every rank.
  size_t elements = quick ? (1 << 20) : (1 << 24);
  std::vector<double> a(elements, 1.0), b(elements, 2.0), c(elements, 0.5);
  double triad = bestAllRanks(repeats, [&] {
    for (size_t i = 0; i < elements; ++i)
      a[i] = b[i] + 3.0 * c[i];
  });
  double memoryGBps = 24.0 * elements / triad / 1e9;
  measured["triad_GBps_per_rank"] = memoryGBps;

  // 2. GEMM: single-threaded sgemm per rank.
  int n = quick ? 256 : 1024;
  std::vector<float> x(size_t(n) * n, 1.0f), y(size_t(n) * n, 0.5f),
      z(size_t(n) * n, 0.0f);
  double gemm = bestAllRanks(repeats, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f,
                x.data(), n, y.data(), n, 0.0f, z.data(), n);
  });
  double gemmGflops = 2.0 * n * n * n / gemm / 1e9;
  measured["sgemm_GFLOPs_per_rank"] = gemmGflops;

  // 3. Embedding gather: sum-pool 20 random rows of 64 floats per bag from
  // a 256 MiB table, far larger than the caches, on huge pages and
  // prefetching 16 rows ahead, as braid-run and the generated kernel do.
  // Its rate against the triad's is the device's gather efficiency.
  size_t rows = size_t(1) << 20, dim = kGatherDim, bags = quick ? 8192 : 65536,
         pooling = 20, ahead = 16;
  size_t tableBytes = rows * dim * sizeof(float);
  auto *table =
      static_cast<float *>(std::aligned_alloc(size_t(2) << 20, tableBytes));
  if (!table) {
    std::fprintf(stderr,
                 "braid-calibrate: rank %d: error: cannot allocate "
                 "the gather table\n",
                 rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  madvise(table, tableBytes, MADV_HUGEPAGE); // advice only
  std::fill(table, table + rows * dim, 0.25f);
  std::vector<float> pooled(bags * dim);
  std::vector<uint32_t> indices(bags * pooling);
  std::mt19937 generator(1234 + rank);
  for (uint32_t &index : indices)
    index = generator() % rows;
  // The median, like the iterations braid-run reports: random reads on a
  // shared machine vary far more than a streaming loop.
  // The same identical work on every rank at once also shows how far the
  // slowest rank falls behind the mean: the ranks' skew.
  std::vector<double> skews;
  std::vector<double> gathers = timeAllRanks(
      repeats,
      [&] {
        gatherBags(table, indices.data(), pooled.data(), bags, pooling,
                   ahead);
      },
      &skews);
  double gather = gathers[gathers.size() / 2];
  std::sort(skews.begin(), skews.end());
  double rankSkew = skews.empty() ? 0 : skews[skews.size() / 2];
  measured["rank_skew"] = rankSkew;
  std::free(table);
  double gatherGBps = bags * pooling * dim * 4.0 / gather / 1e9;
  measured["gather_GBps_per_rank"] = gatherGBps;
  double gatherEfficiency = std::clamp(gatherGBps / memoryGBps, 0.01, 1.0);

  // 4. Collectives over sizes (bytes as nccl-tests counts them).
  llvm::json::Array collectives;
  std::vector<double> sizes, allReduceTimes;
  // Time of the largest message per kind, for the per-kind bandwidth.
  double largest[kKinds] = {0, 0, 0, 0};
  size_t maxBytes = quick ? (1 << 20) : (1 << 26);
  std::vector<float> send(maxBytes / 4 + ranks, 1.0f),
      recv(maxBytes / 4 + ranks, 0.0f);
  for (size_t bytes = 64; bytes <= maxBytes; bytes *= 8) {
    int count = bytes / 4;
    int iterations = quick ? 5 : (bytes < (1 << 20) ? 50 : 10);
    llvm::json::Object point{{"bytes", int64_t(bytes)}};
    for (int k = 0; k < kKinds; ++k) {
      largest[k] = medianAllRanks(iterations, [&] {
        runCollective(k, send.data(), recv.data(), count, nodeComm);
      });
      point[std::string(kKindNames[k]) + "_us"] = largest[k] * 1e6;
    }
    sizes.push_back(bytes);
    allReduceTimes.push_back(largest[0]);
    collectives.push_back(std::move(point));
  }
  measured["collectives"] = std::move(collectives);

  // Fit the ring model t = 2(n-1) alpha + (2(n-1)/n) S / beta to the
  // all_reduce times: the step latency alpha from the smallest message
  // (where bandwidth is negligible), the bandwidth beta from the largest
  // (where latency is). A least-squares fit over all sizes would let the
  // large messages swamp alpha. One rank has nothing to fit.
  double hopLatencyUs = 1.0, linkGBps = memoryGBps / 2;
  if (perNode > 1) {
    double steps = 2.0 * (perNode - 1), factor = steps / perNode;
    hopLatencyUs = std::max(0.01, allReduceTimes.front() / steps * 1e6);
    double transferSeconds =
        allReduceTimes.back() - steps * hopLatencyUs * 1e-6;
    if (transferSeconds > 0)
      linkGBps = factor * sizes.back() / transferSeconds / 1e9;
  }
  measured["fit"] = llvm::json::Object{{"hop_latency_us", hopLatencyUs},
                                       {"link_bandwidth_GBps", linkGBps}};
  // Bus bandwidth per kind from the largest message, nccl-tests' factors:
  // MPI implements every collective its own way.
  llvm::json::Object perKind;
  if (perNode > 1) {
    for (int k = 0; k < kKinds; ++k) {
      double steps = k == 0 ? 2.0 * (perNode - 1) : double(perNode - 1);
      double factor = steps / perNode;
      double seconds = largest[k] - steps * hopLatencyUs * 1e-6;
      if (seconds > 0)
        perKind[kKindNames[k]] = factor * sizes.back() / seconds / 1e9;
    }
  }

  // 5. Between nodes: the link itself, rated by each even node leader
  // sending a message to the next one (leader i to i ^ 1), one way: the
  // transport's latency from the smallest message, its rate per direction
  // from the larger ones. Then the same pairs exchange the message both ways
  // at once: each direction's rate beside the other, as a fraction of the
  // one-way rate, is the link's duplex efficiency (over TCP through a deep
  // queue one direction's acknowledgements wait behind the other's data;
  // the same exchange measured 17.5 and 31.2 ms for 2 MiB in consecutive
  // runs on scripts/two_hosts.sh's hosts, against 17.4 one way). A
  // collective among the leaders would rate the link through an algorithm's
  // assumptions: for two leaders libnbc's all_reduce is a binomial reduce then
  // a broadcast, the message crossing one way and then the other, which a
  // ring's fit read as half the link's rate (0.54 against 1 Gbit/s on
  // scripts/two_hosts.sh's). Every kind over all ranks is kept for comparison
  // with the model's forms across nodes (bench/calibrate/compare.py).
  double netLatencyUs = hopLatencyUs, netGBps = linkGBps, netDuplex = 1.0;
  if (nodes > 1) {
    llvm::json::Array network;
    std::vector<double> leaderTimes, bothWaysTimes;
    int leader = -1, leaders = 0;
    if (leaderComm != MPI_COMM_NULL) {
      MPI_Comm_rank(leaderComm, &leader);
      MPI_Comm_size(leaderComm, &leaders);
    }
    int partner = leader >= 0 && (leader ^ 1) < leaders ? leader ^ 1 : -1;
    for (size_t bytes = 64; bytes <= maxBytes; bytes *= 8) {
      int count = bytes / 4;
      int iterations = quick ? 5 : (bytes < (1 << 20) ? 50 : 10);
      double exchange = medianAllRanks(iterations, [&] {
        if (partner < 0)
          return;
        if (leader % 2 == 0)
          MPI_Send(send.data(), count, MPI_FLOAT, partner, 0, leaderComm);
        else
          MPI_Recv(recv.data(), count, MPI_FLOAT, partner, 0, leaderComm,
                   MPI_STATUS_IGNORE);
      });
      leaderTimes.push_back(exchange);
      double bothWays = medianAllRanks(iterations, [&] {
        if (partner < 0)
          return;
        MPI_Request requests[2];
        MPI_Irecv(recv.data(), count, MPI_FLOAT, partner, 1, leaderComm,
                  &requests[0]);
        MPI_Isend(send.data(), count, MPI_FLOAT, partner, 1, leaderComm,
                  &requests[1]);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
      });
      bothWaysTimes.push_back(bothWays);
      llvm::json::Object point{{"bytes", int64_t(bytes)},
                               {"leaders_send_us", exchange * 1e6},
                               {"leaders_both_ways_us", bothWays * 1e6}};
      for (int k = 0; k < kKinds; ++k) {
        double time = medianAllRanks(iterations, [&] {
          runCollective(k, send.data(), recv.data(), count, MPI_COMM_WORLD);
        });
        point["all_ranks_" + std::string(kKindNames[k]) + "_us"] = time * 1e6;
      }
      network.push_back(std::move(point));
    }
    netLatencyUs = std::max(0.01, leaderTimes.front() * 1e6);
    // The rate is the median over the messages from 256 KiB, not the
    // largest one's: over TCP the largest messages ran 30% below the
    // mid-size ones a training step exchanges (73 against 105-116 MB/s
    // on scripts/two_hosts.sh's 1 Gbit/s link).
    // The duplex efficiency likewise: the median over the same messages of
    // the one-way transfer's time over the both-ways transfer's.
    std::vector<double> rates, duplexes;
    for (size_t i = 0; i < sizes.size(); ++i) {
      double transferSeconds = leaderTimes[i] - netLatencyUs * 1e-6;
      double bothWaysSeconds = bothWaysTimes[i] - netLatencyUs * 1e-6;
      if (sizes[i] < (256 << 10) || transferSeconds <= 0)
        continue;
      rates.push_back(sizes[i] / transferSeconds / 1e9);
      if (bothWaysSeconds > 0)
        duplexes.push_back(std::min(1.0, transferSeconds / bothWaysSeconds));
    }
    auto median = [](std::vector<double> &values) {
      std::sort(values.begin(), values.end());
      return values[values.size() / 2];
    };
    if (!rates.empty())
      netGBps = median(rates);
    if (!duplexes.empty())
      netDuplex = std::max(0.05, median(duplexes));
    measured["network"] = std::move(network);
    measured["network_fit"] =
        llvm::json::Object{{"latency_us", netLatencyUs},
                           {"link_bandwidth_GBps", netGBps},
                           {"duplex_efficiency", netDuplex}};
  }

  // 6. Compute beside communication, over every rank: an all_reduce
  // started (MPI_Iallreduce), then GEMM blocks, each followed by MPI_Test
  // as the runtime's GEMMs call braidrt_progress, then the wait. The GEMM's
  // slowdown against the same blocks alone, and how far the all_reduce got
  // while they ran (what it still needed after them, at its own rate, is
  // the rest), are what the simulator's overlap needs: the cores that
  // compute also move MPI's data, and MPI moves it only inside its calls.
  double commRate = 1.0, computeSlowdown = 1.0;
  if (ranks > 1) {
    // The collectives' buffers hold at least this many floats.
    int count = (quick ? (256 << 10) : (4 << 20)) / 4;
    // Blocks of about 40 us on a core, so the all_reduce is tested many
    // times while they run, as between the runtime's GEMM row blocks.
    int blockN = quick ? 64 : 128;
    std::vector<float> bx(size_t(blockN) * blockN, 1.0f),
        by(size_t(blockN) * blockN, 0.5f), bz(size_t(blockN) * blockN, 0.0f);
    auto gemmBlock = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blockN, blockN,
                  blockN, 1.0f, bx.data(), blockN, by.data(), blockN, 0.0f,
                  bz.data(), blockN);
    };
    double commAlone = medianAllRanks(repeats, [&] {
      runCollective(0, send.data(), recv.data(), count, MPI_COMM_WORLD);
    });
    double blockTime = medianAllRanks(repeats,
                                      [&] {
                                        for (int i = 0; i < 8; ++i)
                                          gemmBlock();
                                      }) /
                       8;
    // Blocks for half the all_reduce's time: it outlasts them, so what it
    // still needs after them shows how far it got beside them. Every rank
    // has the same slowest-rank times, so the same count.
    int blocks = int(std::clamp(commAlone / 2 / blockTime, 1.0, 4096.0));
    auto timeBlocks = [&] {
      return medianAllRanks(repeats, [&] {
        for (int i = 0; i < blocks; ++i)
          gemmBlock();
      });
    };
    double computeAlone = timeBlocks();
    // Where ranks outnumber cores, a few blocks in a row run faster than
    // many (the others wait at the barrier meanwhile): scale to the time
    // measured once more.
    if (computeAlone > 0.75 * commAlone) {
      blocks =
          int(std::clamp(blocks * commAlone / 2 / computeAlone, 1.0, 4096.0));
      computeAlone = timeBlocks();
    }
    std::vector<double> gemmEnds, commEnds;
    for (int r = 0; r < 2 * repeats; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double start = now();
      MPI_Request request;
      startCollective(0, send.data(), recv.data(), count, MPI_COMM_WORLD,
                      &request);
      for (int i = 0; i < blocks; ++i) {
        gemmBlock();
        int done = 0;
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      }
      double ends[2] = {now() - start, 0}, slowest[2];
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      ends[1] = now() - start;
      MPI_Allreduce(ends, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      gemmEnds.push_back(slowest[0]);
      commEnds.push_back(slowest[1]);
    }
    std::sort(gemmEnds.begin(), gemmEnds.end());
    std::sort(commEnds.begin(), commEnds.end());
    double gemmEnd = gemmEnds[gemmEnds.size() / 2];
    double commEnd = commEnds[commEnds.size() / 2];
    computeSlowdown = std::clamp(gemmEnd / computeAlone, 1.0, 100.0);
    // The all_reduce's work left after the GEMMs took commEnd - gemmEnd at
    // full rate; the rest was done beside them. If it finished beside
    // them, it ran at least commAlone / gemmEnd of its rate.
    double after = commEnd - gemmEnd;
    commRate = after > 0.02 * commAlone ? (commAlone - after) / gemmEnd
                                        : commAlone / gemmEnd;
    commRate = std::clamp(commRate, 0.01, 1.0);
    measured["beside"] =
        llvm::json::Object{{"all_reduce_bytes", int64_t(count) * 4},
                           {"all_reduce_alone_us", commAlone * 1e6},
                           {"gemm_blocks", blocks},
                           {"gemm_block_n", blockN},
                           {"gemm_alone_us", computeAlone * 1e6},
                           {"gemm_end_beside_us", gemmEnd * 1e6},
                           {"all_reduce_end_beside_us", commEnd * 1e6}};
  }

  int status = 0;
  if (rank == 0) {
    int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    llvm::json::Object description{
        {"_about", "Written by braid-calibrate with " + std::to_string(ranks) +
                       " ranks on " + std::to_string(nodes) +
                       " node(s); every rank measured at once, one thread "
                       "each."},
        {"_measured", std::move(measured)},
        {"name", name.getValue()},
        {"device",
         llvm::json::Object{
             {"arch", "cpu"},
             {"name", "cpu-rank"},
             {"peak_tflops", llvm::json::Object{{"f32", gemmGflops / 1e3},
                                                {"tf32", gemmGflops / 1e3},
                                                {"bf16", gemmGflops / 1e3},
                                                {"f16", gemmGflops / 1e3}}},
             {"gemm_efficiency", 1.0},
             {"memory_bandwidth_GBps", memoryGBps},
             {"memory_efficiency", 1.0},
             {"gather_efficiency", gatherEfficiency},
             {"memory_capacity_GB", memoryCapacityGB() / ranks},
             {"l2_MB", std::max(readCacheMB("index2"), 0.25)},
             {"sms", cores},
             {"launch_overhead_us", 0.0}}},
        {"intra_node",
         llvm::json::Object{{"kind", "shm"},
                            {"links", 1},
                            {"link_bandwidth_GBps", linkGBps},
                            {"hop_latency_us", hopLatencyUs},
                            {"collective_bandwidth_GBps", std::move(perKind)},
                            {"nvls", false}}},
        {"inter_node", llvm::json::Object{{"nics_per_node", 1},
                                          {"nic_bandwidth_GBps", netGBps},
                                          {"nic_efficiency", 1.0},
                                          {"latency_us", netLatencyUs},
                                          {"duplex_efficiency", netDuplex}}},
        {"comm_channels", 1},
        {"comm_rate_beside_compute", commRate},
        {"compute_slowdown_beside_comm", computeSlowdown},
        {"rank_skew", std::clamp(rankSkew, 0.0, 1.0)},
        {"topology",
         llvm::json::Object{{"nodes", nodes}, {"ranks_per_node", perNode}}}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(description)));
    // Only write what the cost model can read back.
    if (llvm::Expected<mlir::braid::cluster::HardwareDesc> check =
            mlir::braid::cluster::parseHardware(text, outputPath)) {
      if (llvm::Error error = mlir::braid::writeFileAtomically(
              outputPath,
              [&](llvm::raw_ostream &out) { out << text << "\n"; })) {
        llvm::errs() << "braid-calibrate: error: "
                     << llvm::toString(std::move(error)) << "\n";
        status = 1;
      } else {
        llvm::outs() << llvm::formatv(
            "braid-calibrate: {0} ranks: triad {1:f1} GB/s, row gather {6:f1} "
            "GB/s ({7:f2} of triad), sgemm {2:f1} GFLOP/s, all_reduce step "
            "{3:f2} us at {4:f2} GB/s per rank; beside an all_reduce a GEMM "
            "runs {8:f2}x slower and the all_reduce at {9:f2} of its rate; "
            "wrote {5}\n",
            ranks, memoryGBps, gemmGflops, hopLatencyUs, linkGBps, outputPath,
            gatherGBps, gatherEfficiency, computeSlowdown, commRate);
      }
    } else {
      llvm::errs() << "braid-calibrate: error: the measured description is "
                      "invalid: "
                   << llvm::toString(check.takeError()) << "\n";
      status = 1;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
