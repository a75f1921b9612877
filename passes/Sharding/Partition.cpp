//===- Partition.cpp - The braid-partition pass ---------------------------===//
//
// This file implements braid-partition: the global program of a planned
// module becomes the program every rank runs (SPMD). The batch is split over
// the ranks; each lookup of a sharded table becomes an explicit exchange of
// bags to the shard owners, the owners' partial lookups and an exchange of
// pooled rows back (see Passes.td for the per-sharding layout). Dense
// layers placed tensor-parallel run on the whole batch with this rank's block
// of the weight (Megatron's column and row layouts), built from collectives
// along the batch dimension and local slices.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Sharding/Passes.h"
#include "braid/Sharding/PlanSharding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// Where the values of a tensor-parallel region live. Every such value has
/// the whole batch (B rows) on every rank.
enum class DenseLayout {
  /// The whole value on every rank.
  full,
  /// Column block `rank` of R equal blocks.
  columns,
  /// A partial sum: the value is the sum over the ranks.
  partial,
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

  /// Checks that `linear` can be laid out tensor-parallel.
  LogicalResult verifyTensorParallel(LinearOp linear,
                                     DensePlacementAttr placement) const;
  /// Rewrites a `column` or `row` placed layer on the rank's weight block.
  LogicalResult rewriteTensorParallel(LinearOp linear,
                                      DensePlacementAttr placement);
  /// `value` (local or tensor-parallel) with the whole batch on every rank.
  Value toFull(OpBuilder &b, Location loc, Value value);
  /// `value` as this rank's rows of the batch.
  Value toLocal(OpBuilder &b, Location loc, Value value);
  /// `value` as this rank's block of `blocks` column blocks.
  Value toColumns(OpBuilder &b, Location loc, Value value);
  /// The rank's offset `rank * size` as an index.
  Value rankOffset(OpBuilder &b, Location loc, int64_t size);
  /// Rows [rank * b, +b) of a whole-batch value, typed as a local value.
  Value rankRows(OpBuilder &b, Location loc, Value full);

  const BatchLayout &layout;
  MLIRContext *context;
  /// Values whose first dimension is now the rank's share of the batch.
  llvm::DenseSet<Value> local;
  /// The layout of every value a tensor-parallel layer produced.
  llvm::DenseMap<Value, DenseLayout> dense;
  /// The whole-batch form of a local or tensor-parallel value, made once.
  llvm::DenseMap<Value, Value> wholeOf;
  /// This rank's rows of a tensor-parallel value, made once.
  llvm::DenseMap<Value, Value> rowsOf;
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

LogicalResult
Partitioner::verifyTensorParallel(LinearOp linear,
                                  DensePlacementAttr placement) const {
  StringRef kind = stringifyDenseParallelism(placement.getParallelism());
  ArrayRef<int64_t> ranks = placement.getRanks();
  if (!llvm::equal(ranks, llvm::seq<int64_t>(0, layout.ranks)))
    return linear.emitError()
           << "braid-partition lays out a " << kind
           << "-parallel braid.linear over all " << layout.ranks
           << " ranks in order, but its placement names ranks ["
           << llvm::make_range(ranks.begin(), ranks.end()) << "]";
  if (layout.batch % layout.ranks != 0)
    return linear.emitError()
           << "a " << kind << "-parallel braid.linear needs the batch of "
           << layout.batch << " to divide evenly over " << layout.ranks
           << " ranks";
  auto weight = cast<RankedTensorType>(linear.getWeight().getType());
  int64_t dim = placement.getParallelism() == DenseParallelism::column ? 0 : 1;
  if (weight.isDynamicDim(dim) || weight.getDimSize(dim) % layout.ranks != 0)
    return linear.emitError()
           << "a " << kind << "-parallel braid.linear splits its "
           << (dim == 0 ? "output" : "input") << " features over "
           << layout.ranks << " ranks, but the weight has "
           << weight.getDimSize(dim);
  if (placement.getParallelism() == DenseParallelism::row &&
      linear.getActivation() != Activation::none)
    return linear.emitError()
           << "a row-parallel braid.linear must have no activation: it "
              "would apply to partial sums";
  if (!local.contains(linear.getInput()) && !dense.contains(linear.getInput()))
    return linear.emitError()
           << "a " << kind << "-parallel braid.linear needs a batch-shaped "
              "input";
  for (Value param : {linear.getWeight(), linear.getBias()})
    if (local.contains(param) || dense.contains(param))
      return linear.emitError() << "braid-partition needs the weights of "
                                   "braid.linear to be parameters";
  return success();
}

Value Partitioner::rankOffset(OpBuilder &b, Location loc, int64_t size) {
  Value rank = RankOp::create(b, loc, b.getIndexType());
  return arith::MulIOp::create(b, loc, rank,
                               arith::ConstantIndexOp::create(b, loc, size));
}

/// A static slice of `source` at `offsets` with `sizes`, unit strides.
static Value slice(OpBuilder &b, Location loc, Value source,
                   ArrayRef<OpFoldResult> offsets, ArrayRef<int64_t> sizes) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> sizeAttrs, strides(sizes.size(), b.getIndexAttr(1));
  for (int64_t size : sizes)
    sizeAttrs.push_back(b.getIndexAttr(size));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(sizes, type.getElementType()), source,
      offsets, sizeAttrs, strides);
}

Value Partitioner::rankRows(OpBuilder &b, Location loc, Value full) {
  auto type = cast<RankedTensorType>(full.getType());
  int64_t rows = layout.batch / layout.ranks;
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  offsets[0] = rankOffset(b, loc, rows);
  SmallVector<int64_t> sizes(type.getShape());
  sizes[0] = rows;
  Value mine = slice(b, loc, full, offsets, sizes);
  return tensor::CastOp::create(b, loc, localType(type), mine);
}

Value Partitioner::toFull(OpBuilder &b, Location loc, Value value) {
  auto it = dense.find(value);
  if (it != dense.end() && it->second == DenseLayout::full)
    return value;
  if (Value known = wholeOf.lookup(value))
    return known;
  if (it == dense.end()) {
    // A local value: its rows from every rank.
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = layout.batch / layout.ranks;
    Value mine = tensor::CastOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value);
    shape[0] = layout.batch;
    Value all = AllGatherOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), mine,
        b.getI64IntegerAttr(0), groupsOf(layout.ranks));
    dense[all] = DenseLayout::full;
    wholeOf[value] = all;
    return all;
  }
  Value partial = value;
  if (it->second == DenseLayout::columns) {
    // Each rank's block in its place among zeros: the sum over the ranks is
    // the whole value.
    auto type = cast<RankedTensorType>(value.getType());
    int64_t cols = type.getDimSize(1);
    auto wide = RankedTensorType::get({type.getDimSize(0), cols * layout.ranks},
                                      type.getElementType());
    Value zeros = arith::ConstantOp::create(
        b, loc, wide, DenseElementsAttr::get(wide, b.getZeroAttr(type.getElementType())));
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                         rankOffset(b, loc, cols)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(type.getDimSize(0)),
                                       b.getIndexAttr(cols)};
    SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
    partial = tensor::InsertSliceOp::create(b, loc, value, zeros, offsets,
                                            sizes, strides);
  }
  Value whole = AllReduceOp::create(b, loc, partial.getType(),
                                    ReductionKind::sum, partial,
                                    groupsOf(layout.ranks));
  dense[whole] = DenseLayout::full;
  wholeOf[value] = whole;
  return whole;
}

Value Partitioner::toLocal(OpBuilder &b, Location loc, Value value) {
  if (!dense.contains(value))
    return value;
  Value &rows = rowsOf[value];
  if (!rows) {
    rows = rankRows(b, loc, toFull(b, loc, value));
    local.insert(rows);
  }
  return rows;
}

Value Partitioner::toColumns(OpBuilder &b, Location loc, Value value) {
  auto it = dense.find(value);
  if (it != dense.end() && it->second == DenseLayout::columns)
    return value;
  Value full = toFull(b, loc, value);
  auto type = cast<RankedTensorType>(full.getType());
  int64_t cols = type.getDimSize(1) / layout.ranks;
  Value block = slice(b, loc, full, {b.getIndexAttr(0), rankOffset(b, loc, cols)},
                      {type.getDimSize(0), cols});
  dense[block] = DenseLayout::columns;
  return block;
}

LogicalResult
Partitioner::rewriteTensorParallel(LinearOp linear,
                                   DensePlacementAttr placement) {
  if (failed(verifyTensorParallel(linear, placement)))
    return failure();
  OpBuilder b(linear);
  Location loc = linear.getLoc();
  auto weightType = cast<RankedTensorType>(linear.getWeight().getType());
  int64_t out = weightType.getDimSize(0), in = weightType.getDimSize(1);
  Type element = weightType.getElementType();
  bool column = placement.getParallelism() == DenseParallelism::column;
  Value input, weight, bias;
  int64_t resultCols;
  if (column) {
    // Output features [rank * c, +c) for the whole batch.
    int64_t c = out / layout.ranks;
    input = toFull(b, loc, linear.getInput());
    Value offset = rankOffset(b, loc, c);
    weight = slice(b, loc, linear.getWeight(), {offset, b.getIndexAttr(0)},
                   {c, in});
    bias = slice(b, loc, linear.getBias(), {offset}, {c});
    resultCols = c;
  } else {
    // Input features [rank * c, +c): a partial sum of every output. The
    // bias is added once, by rank 0.
    int64_t c = in / layout.ranks;
    input = toColumns(b, loc, linear.getInput());
    weight = slice(b, loc, linear.getWeight(),
                   {b.getIndexAttr(0), rankOffset(b, loc, c)}, {out, c});
    Value rank = RankOp::create(b, loc, b.getIndexType());
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, rank,
        arith::ConstantIndexOp::create(b, loc, 0));
    auto biasType = cast<RankedTensorType>(linear.getBias().getType());
    Value zeros = arith::ConstantOp::create(
        b, loc, biasType,
        DenseElementsAttr::get(biasType, b.getZeroAttr(element)));
    bias = arith::SelectOp::create(b, loc, first, linear.getBias(), zeros);
    resultCols = out;
  }
  auto resultType = RankedTensorType::get(
      {layout.batch, resultCols},
      cast<RankedTensorType>(linear.getType()).getElementType());
  auto tp = LinearOp::create(b, loc, resultType, input, weight, bias,
                             linear.getActivation(), placement);
  dense[tp.getResult()] =
      column ? DenseLayout::columns : DenseLayout::partial;
  linear.getResult().replaceAllUsesWith(tp.getResult());
  linear.erase();
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
      // A replicated table is looked up on every rank, so every rank must
      // hold it.
      if (auto replicated =
              dyn_cast<DataParallelAttr>(table.getPlacementAttr());
          replicated &&
          !llvm::all_of(llvm::seq<int64_t>(0, layout.ranks), [&](int64_t rank) {
            return llvm::is_contained(replicated.getRanks(), rank);
          }))
        return table.emitError()
               << "table '" << table.getSymName()
               << "' is data_parallel on ranks that are not all "
               << layout.ranks << " of the program: every rank looks it up";
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
    if (auto linear = dyn_cast<LinearOp>(op)) {
      DensePlacementAttr placement = linear.getPlacementAttr();
      if (placement && layout.ranks > 1 &&
          placement.getParallelism() != DenseParallelism::data_parallel) {
        if (failed(rewriteTensorParallel(linear, placement)))
          return failure();
        continue;
      }
    }
    // Every other use of a tensor-parallel value reads this rank's rows.
    for (OpOperand &operand : op.getOpOperands())
      if (dense.contains(operand.get())) {
        OpBuilder b(&op);
        operand.set(toLocal(b, op.getLoc(), operand.get()));
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
