//===- HardwareTest.cpp - Tests of hardware descriptions ------------------===//
//
// This file tests that every preset loads and that malformed descriptions are
// rejected with the JSON path of the problem.
//
//===----------------------------------------------------------------------===//

#include "braid/Cluster/Hardware.h"

#include "gtest/gtest.h"

using namespace mlir::braid::cluster;

TEST(HardwareTest, EveryPresetLoads) {
  std::vector<std::string> names = getPresetNames();
  ASSERT_EQ(names.size(), 13u);
  for (const std::string &name : names) {
    llvm::Expected<HardwareDesc> hw = loadHardware(name);
    ASSERT_TRUE(static_cast<bool>(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->name, name);
    EXPECT_GT(hw->intraNode.bandwidthGBps(), 0);
    EXPECT_LE(hw->commChannels, hw->device.sms);
  }
  HardwareDesc h100 = *loadHardware("dgx-h100");
  EXPECT_TRUE(h100.intraNode.nvls);
  EXPECT_EQ(h100.worldSize(), 8);
  EXPECT_NEAR(h100.intraNode.bandwidthGBps(), 18 * 20.6, 1e-9);
  // Azure's ND VMs reach InfiniBand through SR-IOV virtual functions: the
  // bare-metal fabric's rate, with the VF class's fitted latency.
  HardwareDesc a100 = *loadHardware("dgx-a100");
  HardwareDesc azure = *loadHardware("azure-nd-a100-v4");
  EXPECT_EQ(azure.interNode.nicBandwidthGBps, a100.interNode.nicBandwidthGBps);
  EXPECT_GT(azure.interNode.latencyUs, a100.interNode.latencyUs);
}

static std::string errorOf(llvm::StringRef json) {
  llvm::Expected<HardwareDesc> hw = parseHardware(json, "hw.json");
  EXPECT_FALSE(static_cast<bool>(hw));
  return hw ? "" : llvm::toString(hw.takeError());
}

TEST(HardwareTest, MalformedDescriptionsNameThePath) {
  EXPECT_NE(errorOf("{").find("hw.json: invalid JSON"), std::string::npos);
  EXPECT_EQ(errorOf("[]"), "hw.json: expected a JSON object");
  EXPECT_EQ(errorOf("{}"), "hw.json: name: expected a non-empty string");
  // Start from a valid preset and break one field at a time.
  std::string good = R"({"name": "x", "comm_channels": 4,
    "device": {"arch": "hopper", "name": "d", "peak_tflops": {"f32": 1, "tf32": 2, "bf16": 3, "f16": 3},
               "gemm_efficiency": 0.5, "memory_bandwidth_GBps": 100, "memory_efficiency": 0.9,
               "memory_capacity_GB": 8, "l2_MB": 1, "sms": 10, "launch_overhead_us": 1},
    "intra_node": {"kind": "nvlink", "links": 2, "link_bandwidth_GBps": 10, "nvls": false},
    "inter_node": {"nics_per_node": 1, "nic_bandwidth_GBps": 10, "nic_efficiency": 0.9},
    "topology": {"nodes": 1, "ranks_per_node": 2}})";
  ASSERT_TRUE(static_cast<bool>(parseHardware(good, "hw.json")));
  auto broken = [&](llvm::StringRef from, llvm::StringRef to) {
    std::string text = good;
    size_t at = text.find(from.str());
    EXPECT_NE(at, std::string::npos) << from.str();
    text.replace(at, from.size(), to.str());
    return errorOf(text);
  };
  EXPECT_EQ(broken("\"sms\": 10", "\"sms\": -1"),
            "hw.json: device.sms: expected a positive integer of at most "
            "1048576");
  EXPECT_EQ(broken("\"memory_efficiency\": 0.9", "\"memory_efficiency\": 1.5"),
            "hw.json: device.memory_efficiency: expected a fraction in (0, 1], got 1.5");
  EXPECT_EQ(broken("\"f32\": 1", "\"f32\": \"fast\""),
            "hw.json: device.peak_tflops.f32: expected a number");
  // f64 is optional, and read where given (it was accepted unread).
  EXPECT_EQ(broken("\"f16\": 3}", "\"f16\": 3, \"f64\": \"slow\"}"),
            "hw.json: device.peak_tflops.f64: expected a number");
  {
    std::string text = good;
    std::string from = "\"f16\": 3}";
    text.replace(text.find(from), from.size(), "\"f16\": 3, \"f64\": 0.5}");
    llvm::Expected<HardwareDesc> withF64 = parseHardware(text, "hw.json");
    ASSERT_TRUE(static_cast<bool>(withF64));
    EXPECT_EQ(withF64->device.peakTflops.lookup("f64"), 0.5);
    EXPECT_EQ(parseHardware(good, "hw.json")->device.peakTflops.count("f64"), 0u);
  }
  EXPECT_EQ(broken("\"kind\": \"nvlink\"", "\"kind\": \"ether\""),
            "hw.json: intra_node.kind: expected \"nvlink\", \"pcie\" or \"shm\", got \"ether\"");
  EXPECT_EQ(broken("\"nvls\": false", "\"nvls\": true"),
            "hw.json: intra_node.nvls_efficiency: expected a number");
  EXPECT_EQ(broken("\"nodes\": 1", "\"nodes\": 0"),
            "hw.json: topology.nodes: expected a positive integer of at most "
            "1048576");
  // Rates that would make every cost overflow or vanish.
  EXPECT_EQ(broken("\"f32\": 1", "\"f32\": 1e-300"),
            "hw.json: device.peak_tflops.f32: expected a number in [1e-6, "
            "1e9], got 1e-300");
  EXPECT_EQ(broken("\"comm_channels\": 4", "\"comm_channels\": 40"),
            "hw.json: comm_channels: a collective cannot use more channels (40) than SMs (10)");
  EXPECT_EQ(broken("\"links\": 2", "\"links\": 2, \"lanes\": 4"),
            "hw.json: intra_node.lanes: unknown field");
  EXPECT_EQ(broken("\"kind\": \"nvlink\"", "\"kind\": \"shm\""),
            "hw.json: intra_node.hop_latency_us: expected a number");
  EXPECT_EQ(broken("\"kind\": \"nvlink\"",
                   "\"kind\": \"shm\", \"hop_latency_us\": 1, "
                   "\"collective_bandwidth_GBps\": {\"all_shuffle\": 1}"),
            "hw.json: intra_node.collective_bandwidth_GBps.all_shuffle: unknown field");
  // Fields the model would not read for this kind of node are refused.
  EXPECT_EQ(
      broken("\"nvls\": false", "\"nvls\": false, \"hop_latency_us\": 5"),
      "hw.json: intra_node.hop_latency_us: only an \"shm\" node (MPI on a "
      "host) reads it; a \"nvlink\" node's latencies are NCCL's tuner "
      "constants");
  EXPECT_EQ(
      broken("\"kind\": \"nvlink\"",
             "\"kind\": \"pcie\", \"collective_bandwidth_GBps\": {}"),
      "hw.json: intra_node.collective_bandwidth_GBps: only an \"shm\" node "
      "(MPI on a host) reads it; a \"pcie\" node's latencies are NCCL's "
      "tuner constants");
  EXPECT_EQ(
      broken("\"nvls\": false", "\"nvls\": false, \"nvls_channels\": 16"),
      "hw.json: intra_node.nvls_channels: only read when \"nvls\" is true");
  EXPECT_EQ(
      broken("\"nvls\": false", "\"nvls\": false, \"nvls_fill_KiB\": 8192"),
      "hw.json: intra_node.nvls_fill_KiB: only read when \"nvls\" is true");
  EXPECT_EQ(broken("\"nvls\": false",
                   "\"nvls\": false, \"nvls_node_efficiency\": 0.7"),
            "hw.json: intra_node.nvls_node_efficiency: only read when "
            "\"nvls\" is true");
  // gather_efficiency is optional (1 when absent) and a fraction.
  EXPECT_EQ(parseHardware(good, "hw.json")->device.gatherEfficiency, 1.0);
  {
    std::string text = good;
    text.replace(text.find("\"sms\": 10"), 9, "\"sms\": 10, \"gather_efficiency\": 0.4");
    llvm::Expected<HardwareDesc> hw = parseHardware(text, "hw.json");
    ASSERT_TRUE(static_cast<bool>(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->device.gatherEfficiency, 0.4);
  }
  EXPECT_EQ(broken("\"sms\": 10", "\"sms\": 10, \"gather_efficiency\": 0"),
            "hw.json: device.gather_efficiency: expected a positive number, got 0");
  // post_overhead_us is optional (NCCL's getNetOverhead default when
  // absent) and a non-negative number.
  EXPECT_EQ(parseHardware(good, "hw.json")->interNode.postOverheadUs,
            InterNodeDesc::kDefaultPostOverheadUs);
  {
    std::string text = good;
    text.replace(text.find("\"nic_efficiency\": 0.9"), 21,
                 "\"nic_efficiency\": 0.9, \"post_overhead_us\": 8");
    llvm::Expected<HardwareDesc> hw = parseHardware(text, "hw.json");
    ASSERT_TRUE(static_cast<bool>(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->interNode.postOverheadUs, 8.0);
  }
  EXPECT_EQ(broken("\"nic_efficiency\": 0.9",
                   "\"nic_efficiency\": 0.9, \"post_overhead_us\": -2"),
            "hw.json: inter_node.post_overhead_us: expected a non-negative number, got -2");
  EXPECT_EQ(broken("\"nic_efficiency\": 0.9",
                   "\"nic_efficiency\": 0.9, \"post_overhead_us\": \"8us\""),
            "hw.json: inter_node.post_overhead_us: expected a number");
  // A link's rate each way while both carry data, as a fraction of one way.
  EXPECT_EQ(broken("\"nic_efficiency\": 0.9",
                   "\"nic_efficiency\": 0.9, \"duplex_efficiency\": 1.5"),
            "hw.json: inter_node.duplex_efficiency: expected a fraction in (0, "
            "1], got 1.5");
  EXPECT_EQ(broken("\"nic_efficiency\": 0.9",
                   "\"nic_efficiency\": 0.9, \"duplex_efficiency\": 0"),
            "hw.json: inter_node.duplex_efficiency: expected a positive "
            "number, got 0");
  {
    std::string text = good;
    text.replace(text.find("\"nic_efficiency\": 0.9"), 21,
                 "\"nic_efficiency\": 0.9, \"duplex_efficiency\": 0.5");
    llvm::Expected<HardwareDesc> half = parseHardware(text, "hw.json");
    ASSERT_TRUE(static_cast<bool>(half));
    EXPECT_EQ(half->interNode.duplexEfficiency, 0.5);
    // Full duplex unless a description says otherwise.
    EXPECT_EQ(parseHardware(good, "hw.json")->interNode.duplexEfficiency, 1.0);
  }
  // The measured overlap constants are optional: a collective at full rate
  // beside compute, and the modelled dilation, when absent.
  EXPECT_EQ(parseHardware(good, "hw.json")->commRateBesideCompute, 1.0);
  EXPECT_EQ(parseHardware(good, "hw.json")->computeSlowdownBesideComm, 0.0);
  {
    std::string text = good;
    text.replace(text.find("\"comm_channels\""), 15,
                 "\"comm_rate_beside_compute\": 0.25, "
                 "\"compute_slowdown_beside_comm\": 1.5, \"comm_channels\"");
    llvm::Expected<HardwareDesc> hw = parseHardware(text, "hw.json");
    ASSERT_TRUE(static_cast<bool>(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->commRateBesideCompute, 0.25);
    EXPECT_EQ(hw->computeSlowdownBesideComm, 1.5);
  }
  EXPECT_EQ(broken("\"comm_channels\"",
                   "\"comm_rate_beside_compute\": 1.5, \"comm_channels\""),
            "hw.json: comm_rate_beside_compute: expected a fraction in (0, 1], "
            "got 1.5");
  EXPECT_EQ(broken("\"comm_channels\"",
                   "\"compute_slowdown_beside_comm\": 0.5, \"comm_channels\""),
            "hw.json: compute_slowdown_beside_comm: expected a slowdown of at "
            "least 1, got 0.5");
  // The ranks' skew: none unless measured; a fraction of the mean.
  EXPECT_EQ(parseHardware(good, "hw.json")->rankSkew, 0.0);
  {
    std::string text = good;
    text.replace(text.find("\"comm_channels\""), 15,
                 "\"rank_skew\": 0.04, \"comm_channels\"");
    llvm::Expected<HardwareDesc> hw = parseHardware(text, "hw.json");
    ASSERT_TRUE(static_cast<bool>(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->rankSkew, 0.04);
  }
  EXPECT_EQ(broken("\"comm_channels\"", "\"rank_skew\": 1.5, \"comm_channels\""),
            "hw.json: rank_skew: expected a fraction in [0, 1], got 1.5");
  EXPECT_EQ(broken("\"arch\": \"hopper\"", "\"arch\": \"pascal\""),
            "hw.json: device.arch: expected \"volta\", \"ampere\", \"hopper\" or "
            "\"cpu\", got \"pascal\"");
  // A PCIe node's link efficiency scales its bandwidth; an NVLink link's
  // figure is already what NCCL reaches, so it refuses one.
  EXPECT_EQ(broken("\"nvls\": false", "\"nvls\": false, \"link_efficiency\": 0.8"),
            "hw.json: intra_node.link_efficiency: only a \"pcie\" node reads it; "
            "NCCL's PCIe figures are nominal, an NVLink or measured link's "
            "bandwidth is already what is reached");
  {
    std::string text = good;
    text.replace(text.find("\"kind\": \"nvlink\""), 16, "\"kind\": \"pcie\"");
    text.replace(text.find("\"nvls\": false"), 13,
                 "\"nvls\": false, \"link_efficiency\": 0.8");
    text.replace(text.find("\"arch\": \"hopper\""), 16, "\"arch\": \"volta\"");
    text.replace(text.find("\"comm_channels\""), 15,
                 "\"collective_floor_us\": 14, \"comm_channels\"");
    llvm::Expected<HardwareDesc> hw = parseHardware(text, "hw.json");
    ASSERT_TRUE(static_cast<bool>(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->device.arch, Arch::volta);
    EXPECT_DOUBLE_EQ(hw->intraNode.bandwidthGBps(), 2 * 10 * 0.8);
    EXPECT_EQ(hw->collectiveFloorUs, 14.0);
    EXPECT_EQ(errorOf(std::string(text).replace(text.find("\"link_efficiency\": 0.8"), 22,
                                                "\"link_efficiency\": 1.2")),
              "hw.json: intra_node.link_efficiency: expected a fraction in (0, 1], got 1.2");
  }
  EXPECT_EQ(parseHardware(good, "hw.json")->collectiveFloorUs, 0.0);
  EXPECT_EQ(broken("\"comm_channels\"", "\"collective_floor_us\": -1, \"comm_channels\""),
            "hw.json: collective_floor_us: expected a non-negative number, got -1");
}

TEST(HardwareTest, UnknownPresetOrFile) {
  llvm::Expected<HardwareDesc> hw = loadHardware("dgx-z9000");
  ASSERT_FALSE(static_cast<bool>(hw));
  std::string message = llvm::toString(hw.takeError());
  EXPECT_NE(message.find("'dgx-z9000' is neither a preset (dgx-a100, dgx-h100, pcie-a100x4, aws-p4d, aws-p5, gcp-a3, gcp-a3-mega, gcp-a3-ultra, azure-nd-a100-v4, azure-nd-h100-v5, oci-a100, oci-h100, oci-h200, local-cpu)"),
            std::string::npos);
}

// NCCL_PROTO's and NCCL_ALGO's syntax: names in any case, a leading ^
// excludes; names NCCL knows and Braid does not model are accepted.
TEST(HardwareTest, NcclEnvironmentLists) {
  // A list's mask, or its error.
  auto read = [](auto parse, unsigned NcclSelection::*mask,
                 llvm::StringRef list) -> std::string {
    NcclSelection selection;
    if (llvm::Error error = parse(list, selection))
      return llvm::toString(std::move(error));
    return std::to_string(selection.*mask);
  };
  auto protocols = [&](llvm::StringRef list) {
    return read(parseNcclProtocols, &NcclSelection::protocols, list);
  };
  auto algorithms = [&](llvm::StringRef list) {
    return read(parseNcclAlgorithms, &NcclSelection::algorithms, list);
  };
  EXPECT_EQ(protocols("Simple"), "4");
  EXPECT_EQ(protocols("simple,LL128"), "6");
  EXPECT_EQ(protocols(" ^LL "), "6");
  EXPECT_EQ(protocols("LL,LL128,Simple"), "7");
  EXPECT_EQ(protocols("LL129"),
            "NCCL_PROTO 'LL129': unknown name 'LL129' (expected LL, LL128 or Simple)");
  EXPECT_EQ(protocols(""), "NCCL_PROTO '': expected LL, LL128 or Simple");
  EXPECT_EQ(protocols("Simple,"),
            "NCCL_PROTO 'Simple,': unknown name '' (expected LL, LL128 or Simple)");
  EXPECT_EQ(protocols("^ll,LL128,simple"),
            "NCCL_PROTO '^ll,LL128,simple': leaves nothing Braid models to choose from");
  EXPECT_EQ(algorithms("Ring,Tree"), "3");
  EXPECT_EQ(algorithms("^NVLS,NVLSTree"), "3");
  EXPECT_EQ(algorithms("ring,collnetdirect,PAT"), "1");
  EXPECT_EQ(algorithms("nvlstree"), "8");
  EXPECT_EQ(algorithms("PAT"),
            "NCCL_ALGO 'PAT': leaves nothing Braid models to choose from");
  EXPECT_EQ(algorithms("Rings"),
            "NCCL_ALGO 'Rings': unknown name 'Rings' (expected Ring, Tree, NVLS, "
            "NVLSTree, CollNetDirect, CollNetChain or PAT)");
  EXPECT_EQ(algorithms("allreduce:tree;allgather:ring"),
            "NCCL_ALGO 'allreduce:tree;allgather:ring': per-collective lists "
            "(NCCL 2.24's `allreduce:tree`) are not supported; give one list for "
            "every collective");
}

// A description's `nccl` object: the system's default lists.
TEST(HardwareTest, NcclObjectInADescription) {
  std::string good = R"({"name": "x", "comm_channels": 4,
    "device": {"arch": "hopper", "name": "d", "peak_tflops": {"f32": 1, "tf32": 2, "bf16": 3, "f16": 3},
               "gemm_efficiency": 0.5, "memory_bandwidth_GBps": 100, "memory_efficiency": 0.9,
               "memory_capacity_GB": 8, "l2_MB": 1, "sms": 10, "launch_overhead_us": 1},
    "intra_node": {"kind": "nvlink", "links": 2, "link_bandwidth_GBps": 10, "nvls": false},
    "inter_node": {"nics_per_node": 1, "nic_bandwidth_GBps": 10, "nic_efficiency": 0.9},
    NCCL
    "topology": {"nodes": 1, "ranks_per_node": 2}})";
  auto with = [&](llvm::StringRef nccl) {
    std::string text = good;
    text.replace(text.find("NCCL"), 4, nccl.str());
    return parseHardware(text, "hw.json");
  };
  llvm::Expected<HardwareDesc> none = with("");
  ASSERT_TRUE(static_cast<bool>(none)) << llvm::toString(none.takeError());
  EXPECT_EQ(none->nccl.protocols, 7u);
  EXPECT_EQ(none->nccl.algorithms, 15u);
  llvm::Expected<HardwareDesc> gcp =
      with(R"("nccl": {"proto": "Simple", "algo": "Ring,Tree"},)");
  ASSERT_TRUE(static_cast<bool>(gcp)) << llvm::toString(gcp.takeError());
  EXPECT_TRUE(gcp->nccl.allows(NcclProtocol::simple));
  EXPECT_FALSE(gcp->nccl.allows(NcclProtocol::ll128));
  EXPECT_TRUE(gcp->nccl.allows(NcclAlgorithm::tree));
  EXPECT_FALSE(gcp->nccl.allows(NcclAlgorithm::nvlsTree));
  auto errorWith = [&](llvm::StringRef nccl) {
    llvm::Expected<HardwareDesc> hw = with(nccl);
    EXPECT_FALSE(static_cast<bool>(hw));
    return hw ? "" : llvm::toString(hw.takeError());
  };
  EXPECT_EQ(errorWith(R"("nccl": {"proto": "LL256"},)"),
            "hw.json: nccl.proto: NCCL_PROTO 'LL256': unknown name 'LL256' "
            "(expected LL, LL128 or Simple)");
  EXPECT_EQ(errorWith(R"("nccl": {"algo": "Tree"},)"),
            "hw.json: nccl.algo: a system's default must allow Ring, the one "
            "algorithm every collective Braid prices runs on");
  EXPECT_EQ(errorWith(R"("nccl": {"proto": 3},)"),
            "hw.json: nccl.proto: expected a non-empty string");
  EXPECT_EQ(errorWith(R"("nccl": {"protocol": "Simple"},)"),
            "hw.json: nccl.protocol: unknown field");
  EXPECT_EQ(errorWith(R"("nccl": "Simple",)"), "hw.json: nccl: expected an object");
  // A PCIe node runs no LL128: a list of it alone leaves nothing to run.
  std::string pcie = good;
  pcie.replace(pcie.find("\"kind\": \"nvlink\""), 16, "\"kind\": \"pcie\"");
  pcie.replace(pcie.find("NCCL"), 4, R"("nccl": {"proto": "LL128"},)");
  llvm::Expected<HardwareDesc> pcieLL128 = parseHardware(pcie, "hw.json");
  ASSERT_FALSE(static_cast<bool>(pcieLL128));
  EXPECT_EQ(llvm::toString(pcieLL128.takeError()),
            "hw.json: nccl.proto: a \"pcie\" node runs no LL128 (NCCL enables it "
            "on NVLink only), so its collectives would have no protocol");
  // The same list on an NVLink node is fine.
  EXPECT_TRUE(static_cast<bool>(with(R"("nccl": {"proto": "LL128"},)")));
  // An MPI (shm) node runs MPI's collectives: the lists do not apply.
  std::string shm = good;
  shm.replace(shm.find("\"kind\": \"nvlink\""), 16,
              "\"kind\": \"shm\", \"hop_latency_us\": 1");
  shm.replace(shm.find("NCCL"), 4, R"("nccl": {"proto": "Simple"},)");
  llvm::Expected<HardwareDesc> mpi = parseHardware(shm, "hw.json");
  ASSERT_FALSE(static_cast<bool>(mpi));
  EXPECT_EQ(llvm::toString(mpi.takeError()),
            "hw.json: nccl: an \"shm\" node runs MPI's collectives, not NCCL's");
}
