//===- ScheduleBuilder.cpp - Schedules from Braid programs ----------------===//
//
// This file costs each op of a Braid function with the cost model and lays
// the ops out on per-rank streams for the simulator.
//
//===----------------------------------------------------------------------===//

#include "braid/Sim/ScheduleBuilder.h"

#include "braid/Cost/CostModel.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <set>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::sim;
using cluster::HardwareDesc;

namespace {
/// The cost of one op, the same on every rank.
struct OpCost {
  OpKind kind = OpKind::compute;
  double timeUs = 0;
  double memoryBoundFraction = 0;
  double memoryGBps = 0;
  bool async = false; // a `_start`: runs on the comm stream
};

std::optional<double> staticBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  return double(tensor.getNumElements()) *
         std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

StringRef dtypeOf(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isBF16())
    return "bf16";
  if (element.isF16())
    return "f16";
  return "f32";
}

cost::CollectiveKind collectiveKind(Operation *op) {
  return TypeSwitch<Operation *, cost::CollectiveKind>(op)
      .Case<AllReduceOp, AllReduceStartOp>(
          [](auto) { return cost::CollectiveKind::all_reduce; })
      .Case<AllGatherOp, AllGatherStartOp>(
          [](auto) { return cost::CollectiveKind::all_gather; })
      .Case<ReduceScatterOp, ReduceScatterStartOp>(
          [](auto) { return cost::CollectiveKind::reduce_scatter; })
      .Case<AllToAllOp, AllToAllStartOp>(
          [](auto) { return cost::CollectiveKind::all_to_all; })
      .Default([](Operation *) { return cost::CollectiveKind::broadcast; });
}
} // namespace

static FailureOr<OpCost> costOf(Operation &op, const HardwareDesc &hw,
                                int64_t numRanks, int64_t ranksPerNode) {
  OpCost cost;
  auto fromKernel = [&](cost::KernelEstimate estimate) {
    cost.timeUs = estimate.timeUs;
    cost.memoryBoundFraction = estimate.memoryBoundFraction;
    return cost;
  };
  if (auto linear = dyn_cast<LinearOp>(op)) {
    auto input = linear.getInput().getType();
    auto weight = linear.getWeight().getType();
    if (!input.hasStaticShape() || !weight.hasStaticShape())
      return linear.emitError() << "braid-sim needs static shapes";
    return fromKernel(cost::estimateGemm(hw, input.getDimSize(0),
                                         weight.getDimSize(0),
                                         input.getDimSize(1),
                                         dtypeOf(input)));
  }
  if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
    auto table = SymbolTable::lookupNearestSymbolFrom<TableOp>(
        bag, bag.getTableAttr());
    auto result = cast<RankedTensorType>(bag.getResult().getType());
    if (!table || result.isDynamicDim(0))
      return bag.emitError() << "braid-sim needs the table and a static "
                                "number of bags";
    cost::EmbeddingBagShape shape;
    shape.bags = result.getDimSize(0);
    shape.poolingFactor = table.getPoolingFactor().convertToDouble();
    shape.dim = table.getDim();
    shape.elementBytes =
        std::max<int64_t>(1, table.getElementType().getIntOrFloatBitWidth() / 8);
    shape.rows = table.getNumRows();
    if (auto ratio = table.getUniqueRatio())
      shape.uniqueRatio = ratio->convertToDouble();
    return fromKernel(cost::estimateEmbeddingBag(hw, shape));
  }
  if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
    std::optional<double> inBytes = staticBytes(collective.getInput().getType());
    std::optional<double> outBytes = staticBytes(collective.getResultTensorType());
    if (!inBytes || !outBytes)
      return op.emitError() << "braid-sim needs statically shaped collectives";
    int64_t groupSize = collective.getStaticGroupSize().value_or(numRanks);
    // The nodes a group spans, from its first group's ranks.
    std::set<int64_t> nodes;
    if (ReplicaGroupsAttr groups = collective.getReplicaGroupsAttr())
      for (int64_t rank : groups.getGroup(0))
        nodes.insert(rank / ranksPerNode);
    else
      for (int64_t rank = 0; rank < numRanks; ++rank)
        nodes.insert(rank / ranksPerNode);
    cost::CollectiveKind kind = collectiveKind(&op);
    double bytes = kind == cost::CollectiveKind::all_gather ? *outBytes : *inBytes;
    cost::CollectiveEstimate estimate =
        cost::estimateCollective(hw, kind, bytes, groupSize, nodes.size());
    cost.kind = OpKind::comm;
    cost.timeUs = estimate.timeUs;
    cost.memoryGBps = cost::collectiveMemoryGBps(estimate);
    cost.async = collective.isAsync();
    return cost;
  }
  if (auto permute = dyn_cast<PermuteOp>(op)) {
    std::optional<double> bytes = staticBytes(permute.getInput().getType());
    if (!bytes)
      return op.emitError() << "braid-sim needs statically shaped collectives";
    // One send and one receive per rank: a broadcast-sized transfer.
    cost::CollectiveEstimate estimate = cost::estimateCollective(
        hw, cost::CollectiveKind::broadcast, *bytes, 2,
        numRanks > ranksPerNode ? 2 : 1);
    cost.kind = OpKind::comm;
    cost.timeUs = estimate.timeUs;
    cost.memoryGBps = cost::collectiveMemoryGBps(estimate);
    return cost;
  }
  if (isa<InteractionOp>(op) || op.getDialect()->getNamespace() == "arith" ||
      op.getDialect()->getNamespace() == "tensor") {
    if (isa<arith::ConstantOp>(op) || op.getNumResults() == 0)
      return cost;
    double bytes = 0;
    for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
      bytes += staticBytes(value.getType()).value_or(0);
    return fromKernel(cost::estimateElementwise(hw, bytes));
  }
  if (isa<RankOp, WorldSizeOp, WaitOp, func::ReturnOp>(op))
    return cost;
  return op.emitError() << "braid-sim cannot cost '" << op.getName() << "'";
}

FailureOr<std::vector<SimOp>>
mlir::braid::sim::buildSchedule(func::FuncOp func, const HardwareDesc &hw,
                                int64_t numRanks, int64_t ranksPerNode) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return func.emitError() << "braid-sim needs a function with one block";
  std::vector<SimOp> ops;
  // Per op of the function, its SimOp index on rank 0; rank r adds r * stride.
  llvm::DenseMap<Operation *, int64_t> indexOf;
  std::vector<Operation *> costed;
  std::vector<OpCost> costs;
  for (Operation &op : func.getBody().front()) {
    FailureOr<OpCost> cost = costOf(op, hw, numRanks, ranksPerNode);
    if (failed(cost))
      return failure();
    if (isa<func::ReturnOp>(op))
      continue;
    indexOf[&op] = costed.size();
    costed.push_back(&op);
    costs.push_back(*cost);
  }
  int64_t stride = costed.size();
  int64_t collectiveId = 0;
  std::vector<int64_t> collectiveOf(stride, -1);
  for (int64_t i = 0; i < stride; ++i)
    if (costs[i].kind == OpKind::comm)
      collectiveOf[i] = collectiveId++;
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    for (int64_t i = 0; i < stride; ++i) {
      Operation *op = costed[i];
      SimOp simOp;
      simOp.name = op->getName().stripDialect().str();
      if (auto bag = dyn_cast<EmbeddingBagOp>(op))
        simOp.name += " @" + bag.getTable().str();
      simOp.rank = rank;
      simOp.stream = costs[i].async ? 1 : 0;
      simOp.kind = costs[i].kind;
      simOp.durationUs = costs[i].timeUs;
      simOp.memoryBoundFraction = costs[i].memoryBoundFraction;
      simOp.memoryGBps = costs[i].memoryGBps;
      // Every rank's instance of one collective op starts together. Groups
      // could start independently; synchronizing all of them is exact for
      // SPMD programs, where every group reaches the op at the same time.
      simOp.collectiveId = collectiveOf[i];
      // Data dependencies on the same rank.
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (auto it = indexOf.find(def); it != indexOf.end())
            simOp.deps.push_back(rank * stride + it->second);
      ops.push_back(std::move(simOp));
    }
  }
  return ops;
}

std::vector<SimOp> mlir::braid::sim::buildPlanSchedule(const plan::PlanCost &cost) {
  struct Stage {
    const char *name;
    OpKind kind;
    bool perRank;
    double us;
  };
  const Stage stages[] = {
      {"index all_to_all", OpKind::comm, false, cost.indexExchangeUs},
      {"lookups", OpKind::compute, true, 0},
      {"output all_to_all", OpKind::comm, false, cost.outputExchangeUs},
      {"reduce_scatter", OpKind::comm, false, cost.reduceScatterUs}};
  std::vector<SimOp> ops;
  int64_t numRanks = cost.lookupUs.size();
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    int64_t previous = -1, collectiveId = 0;
    for (const Stage &stage : stages) {
      double us = stage.perRank ? cost.lookupUs[rank] : stage.us;
      bool isComm = stage.kind == OpKind::comm;
      if (us <= 0 && !stage.perRank)
        continue;
      SimOp op;
      op.name = stage.name;
      op.rank = rank;
      op.kind = stage.kind;
      op.durationUs = us;
      op.collectiveId = isComm ? collectiveId++ : -1;
      if (previous >= 0)
        op.deps.push_back(previous);
      previous = ops.size();
      ops.push_back(std::move(op));
    }
  }
  return ops;
}

FailureOr<double> mlir::braid::sim::estimateDenseStageUs(
    func::FuncOp func, const HardwareDesc &hw, int64_t batch, int64_t ranks) {
  if (batch < 1 || ranks < 1)
    return func.emitError() << "the dense stage needs a positive batch and "
                               "rank count";
  int64_t share = (batch + ranks - 1) / ranks;
  double fraction = double(share) / double(batch);
  double totalUs = 0;
  for (Operation &op : func.getBody().getOps()) {
    if (isa<EmbeddingBagOp, func::ReturnOp, arith::ConstantOp>(op))
      continue;
    if (auto linear = dyn_cast<LinearOp>(op)) {
      auto input = linear.getInput().getType();
      auto weight = linear.getWeight().getType();
      if (!input.hasStaticShape() || !weight.hasStaticShape())
        return linear.emitError() << "the dense stage needs static shapes";
      int64_t rows = (input.getDimSize(0) + ranks - 1) / ranks;
      totalUs += cost::estimateGemm(hw, rows, weight.getDimSize(0),
                                    input.getDimSize(1), dtypeOf(input))
                     .timeUs;
      continue;
    }
    if (isa<InteractionOp>(op) || op.getDialect()->getNamespace() == "arith" ||
        op.getDialect()->getNamespace() == "tensor") {
      double bytes = 0;
      for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
        bytes += staticBytes(value.getType()).value_or(0);
      totalUs += cost::estimateElementwise(hw, bytes * fraction).timeUs;
      continue;
    }
    return op.emitError() << "the dense stage cannot cost '" << op.getName()
                          << "'";
  }
  return totalUs;
}
