//===- FuzzCluster.cpp - Fuzz the cluster description reader --------------===//
//
// Input: a hardware description (docs/cost-model.md). A description the
// reader accepts must give finite, positive predictions: every collective
// kind at small, medium and large sizes over the described cluster, a GEMM
// and an embedding lookup.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "braid/Cluster/Hardware.h"
#include "braid/Cost/CostModel.h"

#include <cmath>

using namespace mlir::braid;

static void checkTime(double us, const char *what) {
  if (!std::isfinite(us) || us < 0)
    fuzz::invariantFailed(what);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::Expected<cluster::HardwareDesc> hw = cluster::parseHardware(
      llvm::StringRef(reinterpret_cast<const char *>(data), size),
      "fuzz.json");
  if (!hw) {
    std::string message = llvm::toString(hw.takeError());
    if (message.empty())
      fuzz::invariantFailed("a rejected description without a message");
    return 0;
  }
  if (hw->nodes < 1 || hw->ranksPerNode < 1 || hw->worldSize() > 4096)
    fuzz::invariantFailed("an accepted description with a bad rank count");
  for (cost::CollectiveKind kind :
       {cost::CollectiveKind::all_reduce, cost::CollectiveKind::all_gather,
        cost::CollectiveKind::reduce_scatter, cost::CollectiveKind::all_to_all,
        cost::CollectiveKind::broadcast}) {
    for (double bytes : {8.0, 1048576.0, 17179869184.0}) {
      cost::CollectiveEstimate estimate = cost::estimateCollective(
          *hw, kind, bytes, hw->worldSize(), hw->nodes);
      checkTime(estimate.timeUs, "a collective's time is not finite");
      if (hw->worldSize() > 1 && estimate.timeUs <= 0)
        fuzz::invariantFailed("a collective between ranks takes no time");
    }
  }
  for (llvm::StringRef dtype : {"f32", "bf16"})
    if (hw->device.peakTflops.count(dtype))
      checkTime(cost::estimateGemm(*hw, 4096, 1024, 512, dtype).timeUs,
                "a GEMM's time is not finite");
  cost::EmbeddingBagShape bag;
  bag.bags = 8192;
  bag.poolingFactor = 30;
  bag.dim = 128;
  bag.rows = 1 << 20;
  checkTime(cost::estimateEmbeddingBag(*hw, bag).timeUs,
            "an embedding lookup's time is not finite");
  return 0;
}
