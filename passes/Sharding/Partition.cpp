//===- Partition.cpp - The braid-partition pass ---------------------------===//
//
// This file implements braid-partition: the global program of a planned
// module becomes the program every rank runs (SPMD). The batch is split over
// the ranks; each lookup of a sharded table becomes an explicit exchange of
// bags to the shard owners, the owners' partial lookups and an exchange of
// pooled rows back (see Passes.td for the per-sharding layout).
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Sharding/Passes.h"
#include "braid/Sharding/PlanSharding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDPARTITIONPASS
#include "braid/Sharding/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

static constexpr int64_t kDynamic = ShapedType::kDynamic;

namespace {
/// How the global batch is laid out over the ranks.
struct BatchLayout {
  int64_t batch = 0, ranks = 1, ranksPerNode = 1;
  /// Bag slots every rank gets in an exchange: ceil(batch / ranks).
  int64_t slots = 0;
  /// Samples of each rank: the first batch % ranks ranks get one more.
  SmallVector<int64_t> perRank;

  BatchLayout(int64_t batch, int64_t ranks, int64_t ranksPerNode)
      : batch(batch), ranks(ranks), ranksPerNode(ranksPerNode),
        slots((batch + ranks - 1) / ranks) {
    for (int64_t r = 0; r < ranks; ++r)
      perRank.push_back(batch / ranks + (r < batch % ranks ? 1 : 0));
  }
  int64_t nodes() const { return ranks / ranksPerNode; }
};

/// Rewrites the functions of one module.
class Partitioner {
public:
  Partitioner(MLIRContext *context, const BatchLayout &layout)
      : layout(layout), context(context) {}

  LogicalResult partitionFunction(func::FuncOp func);

private:
  /// `type` with a dynamic first dimension.
  static Type localType(Type type);
  /// A row-major R x R split_sizes matrix with `slots` where `sends(i, j)`.
  DenseI64ArrayAttr
  exchangeMatrix(llvm::function_ref<bool(int64_t, int64_t)> sends) const;
  ReplicaGroupsAttr groupsOf(int64_t groupSize) const;
  LogicalResult rewriteShardedBag(EmbeddingBagOp bag, TableOp table);

  const BatchLayout &layout;
  MLIRContext *context;
  /// Values whose first dimension is now the rank's share of the batch.
  llvm::DenseSet<Value> local;
};
} // namespace

Type Partitioner::localType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0)
    return type;
  SmallVector<int64_t> shape = llvm::to_vector(tensor.getShape());
  shape[0] = kDynamic;
  return RankedTensorType::get(shape, tensor.getElementType());
}

DenseI64ArrayAttr Partitioner::exchangeMatrix(
    llvm::function_ref<bool(int64_t, int64_t)> sends) const {
  SmallVector<int64_t> matrix;
  for (int64_t i = 0; i < layout.ranks; ++i)
    for (int64_t j = 0; j < layout.ranks; ++j)
      matrix.push_back(sends(i, j) ? layout.slots : 0);
  return DenseI64ArrayAttr::get(context, matrix);
}

ReplicaGroupsAttr Partitioner::groupsOf(int64_t groupSize) const {
  SmallVector<int64_t> ranks;
  for (int64_t r = 0; r < layout.ranks; ++r)
    ranks.push_back(r);
  return ReplicaGroupsAttr::get(context, groupSize, ranks);
}

LogicalResult Partitioner::rewriteShardedBag(EmbeddingBagOp bag,
                                             TableOp table) {
  if (bag.getPerSampleWeights())
    return bag.emitError() << "braid-partition does not shard per-sample "
                              "weights yet; place table '"
                           << table.getSymName() << "' data_parallel";
  TablePlacementAttrInterface placement = table.getPlacementAttr();
  SmallVector<TableShard> shards =
      placement.getShards(table.getNumRows(), table.getDim());
  SmallVector<int64_t> owners;
  for (const TableShard &shard : shards)
    owners.push_back(shard.rank);
  // The table verifier keeps every rank inside the cluster.
  llvm::sort(owners);

  int64_t R = layout.ranks, c = layout.slots, g = layout.ranksPerNode;
  bool rowWise = isa<RowWiseAttr>(placement);
  auto tableRowWise = dyn_cast<TableRowWiseAttr>(placement);
  // Who receives bags: every rank for row-wise (each must add its partial
  // to the reduce_scatter), the owner's node for table-row-wise, else the
  // owners.
  SmallVector<int64_t> destinations;
  if (rowWise) {
    for (int64_t r = 0; r < R; ++r)
      destinations.push_back(r);
  } else if (tableRowWise) {
    for (int64_t k = 0; k < g; ++k)
      destinations.push_back(tableRowWise.getNode() * g + k);
  } else {
    destinations = owners;
  }
  bool everyRankReceives = int64_t(destinations.size()) == R;
  auto isDestination = [&](int64_t rank) {
    return llvm::is_contained(destinations, rank);
  };

  OpBuilder b(bag);
  Location loc = bag.getLoc();
  Type i64 = b.getI64Type();
  Type indexElement = bag.getIndices().getType().getElementType();
  int64_t numDestinations = destinations.size();
  auto bucketize = BucketizeOp::create(
      b, loc, RankedTensorType::get({numDestinations * c}, i64),
      RankedTensorType::get({kDynamic}, indexElement),
      RankedTensorType::get({R}, i64), bag.getTableAttr(), bag.getIndices(),
      bag.getOffsets(), b.getDenseI64ArrayAttr(destinations),
      b.getI64IntegerAttr(c));

  ReplicaGroupsAttr world = groupsOf(R);
  int64_t receivedBags = everyRankReceives ? R * c : kDynamic;
  auto lengths = AllToAllOp::create(
      b, loc, RankedTensorType::get({receivedBags}, i64),
      bucketize.getLengths(), /*split_dim=*/0, /*concat_dim=*/0,
      exchangeMatrix([&](int64_t, int64_t to) { return isDestination(to); }),
      world);
  auto values = AllToAllVOp::create(b, loc, bucketize.getValues().getType(),
                                    bucketize.getValues(),
                                    bucketize.getSendCounts());

  Type accumulation = getAccumulationType(table);
  int64_t width = getWidestShardCols(table);
  PoolingMode mode = bag.getMode();
  PoolingMode partialMode =
      mode == PoolingMode::max ? PoolingMode::max : PoolingMode::sum;
  auto partial = ShardEmbeddingBagOp::create(
      b, loc, RankedTensorType::get({receivedBags, width}, accumulation),
      bag.getTable(), values.getResult(), lengths.getResult(), partialMode);

  // Every path leaves this rank's c slots (per part) in `received`.
  auto slotsType = RankedTensorType::get({c, width}, accumulation);
  ReductionKind reduction =
      mode == PoolingMode::max ? ReductionKind::max : ReductionKind::sum;
  Value received;
  if (rowWise || (tableRowWise && layout.nodes() == 1)) {
    received = ReduceScatterOp::create(
        b, loc, slotsType, reduction, partial.getResult(), /*dim=*/0, world);
  } else if (tableRowWise) {
    // Two levels: reduce inside the owner's node (the only one holding
    // partials; the other nodes' ranks are in no group and take no part),
    // then node rank k sends each of its nodes() ranks' slots.
    int64_t node = tableRowWise.getNode(), nodes = layout.nodes();
    SmallVector<int64_t> ownerNode;
    for (int64_t r = node * g; r < (node + 1) * g; ++r)
      ownerNode.push_back(r);
    auto nodeSlots = ReduceScatterOp::create(
        b, loc, RankedTensorType::get({kDynamic, width}, accumulation),
        reduction, partial.getResult(), /*dim=*/0,
        ReplicaGroupsAttr::get(context, g, ownerNode));
    received = AllToAllOp::create(
        b, loc, slotsType, nodeSlots.getResult(), 0, 0,
        exchangeMatrix([&](int64_t from, int64_t to) {
          return from / g == node && to / nodes == from % g;
        }),
        world);
  } else {
    received = AllToAllOp::create(
        b, loc,
        RankedTensorType::get({int64_t(owners.size()) * c, width},
                              accumulation),
        partial.getResult(), 0, 0,
        exchangeMatrix([&](int64_t from, int64_t) {
          return llvm::is_contained(owners, from);
        }),
        world);
  }
  auto combined = CombineShardsOp::create(
      b, loc, localType(bag.getResult().getType()), bag.getTable(), received,
      bag.getOffsets(), mode, c);
  bag.getResult().replaceAllUsesWith(combined.getResult());
  local.insert(combined.getResult());
  bag.erase();
  return success();
}

LogicalResult Partitioner::partitionFunction(func::FuncOp func) {
  if (func.isExternal())
    return success();
  if (!llvm::hasSingleElement(func.getBody()))
    return func.emitError() << "braid-partition needs functions with one block";
  Block &body = func.getBody().front();

  // Inputs: bags and batch-shaped features become the rank's share.
  llvm::DenseSet<Value> bagOperands;
  func.walk([&](EmbeddingBagOp bag) {
    bagOperands.insert(bag.getIndices());
    bagOperands.insert(bag.getOffsets());
    if (bag.getPerSampleWeights())
      bagOperands.insert(bag.getPerSampleWeights());
  });
  for (BlockArgument arg : body.getArguments()) {
    if (!func.getArgAttr(arg.getArgNumber(), "braid.input"))
      continue;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0)
      continue;
    if (bagOperands.contains(arg) || type.getDimSize(0) == layout.batch) {
      arg.setType(localType(type));
      local.insert(arg);
    }
  }

  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
      auto table = SymbolTable::lookupNearestSymbolFrom<TableOp>(
          bag, bag.getTableAttr());
      if (!table)
        return bag.emitError() << "'" << bag.getTable()
                               << "' does not name a braid.table";
      if (!table.getPlacementAttr())
        return table.emitError() << "table '" << table.getSymName()
                                 << "' has no placement; run "
                                    "braid-plan-sharding first";
      for (Value operand : bag->getOperands())
        if (!local.contains(operand))
          return bag.emitError() << "braid-partition needs the bags' indices "
                                    "and offsets to be braid.input arguments";
      // On one rank every placement holds the whole table there: the lookup
      // stays local.
      if (isa<DataParallelAttr>(table.getPlacementAttr()) || layout.ranks == 1) {
        bag.getResult().setType(
            cast<RankedTensorType>(localType(bag.getResult().getType())));
        local.insert(bag.getResult());
        continue;
      }
      if (failed(rewriteShardedBag(bag, table)))
        return failure();
      continue;
    }
    if (isa<func::ReturnOp>(op))
      continue;
    bool usesLocal = llvm::any_of(op.getOperands(), [&](Value operand) {
      return local.contains(operand);
    });
    if (!usesLocal)
      continue;
    // Row-wise ops: their results keep the operands' rows.
    bool rowWiseOp = isa<LinearOp, InteractionOp>(op) ||
                     (op.getDialect() && op.getDialect()->getNamespace() ==
                                             arith::ArithDialect::getDialectNamespace());
    if (!rowWiseOp)
      return op.emitError() << "braid-partition does not know how to split '"
                            << op.getName() << "' over the batch";
    if (auto linear = dyn_cast<LinearOp>(op);
        linear && (local.contains(linear.getWeight()) ||
                   local.contains(linear.getBias())))
      return op.emitError() << "braid-partition needs the weights of "
                               "braid.linear to be parameters";
    for (OpResult result : op.getResults()) {
      result.setType(localType(result.getType()));
      local.insert(result);
    }
  }
  func.setType(FunctionType::get(
      context, body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
  return success();
}

namespace {
struct BraidPartitionPass
    : braid::impl::BraidPartitionPassBase<BraidPartitionPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto cluster =
        module->getAttrOfType<ClusterAttr>(BraidDialect::kClusterAttrName);
    if (!cluster) {
      module.emitError() << "braid-partition needs a braid.cluster; run "
                            "braid-plan-sharding first";
      return signalPassFailure();
    }
    FailureOr<int64_t> batch = getGlobalBatch(module);
    if (failed(batch))
      return signalPassFailure();
    BatchLayout layout(*batch, cluster.getWorldSize(),
                       cluster.getRanksPerNode());
    Partitioner partitioner(&getContext(), layout);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (failed(partitioner.partitionFunction(func)))
        return signalPassFailure();
    module->setAttr(BraidDialect::kBatchSplitAttrName,
                    DenseI64ArrayAttr::get(&getContext(), layout.perRank));
  }
};
} // namespace
