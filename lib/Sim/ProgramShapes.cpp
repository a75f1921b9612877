//===- ProgramShapes.cpp - Expected sizes of a per-rank program -----------===//
//
// This file binds the dynamic sizes of a per-rank program on one rank (see
// ProgramShapes.h): arguments from the batch split and the pooling factors,
// routed indices from the placements, exchanged rows from split_sizes, and
// every other op's rows from its operands'.
//
//===----------------------------------------------------------------------===//

#include "braid/Sim/ProgramShapes.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::sim;

TableOp RoutingTable::tableOf(Operation *op) {
  FlatSymbolRefAttr ref;
  if (auto bag = dyn_cast<EmbeddingBagOp>(op))
    ref = bag.getTableAttr();
  else if (auto bucketize = dyn_cast<BucketizeOp>(op))
    ref = bucketize.getTableAttr();
  else if (auto shard = dyn_cast<ShardEmbeddingBagOp>(op))
    ref = shard.getTableAttr();
  else if (auto combine = dyn_cast<CombineShardsOp>(op))
    ref = combine.getTableAttr();
  else if (isa<EmbeddingBagUpdateOp, ShardEmbeddingBagUpdateOp,
               EmbeddingBagGradOp, TableUpdateOp, CombineShardsGradOp>(op))
    ref = op->getAttrOfType<FlatSymbolRefAttr>("table");
  if (!ref)
    return nullptr;
  if (!tablesRead) {
    tablesRead = true;
    if (auto module = op->getParentOfType<ModuleOp>())
      for (TableOp table : module.getOps<TableOp>())
        tables[table.getSymNameAttr()] = table;
  }
  return tables.lookup(ref.getAttr());
}

/// The type whose sizes `value` has: a tensor, or a token's tensor.
static RankedTensorType shapedTypeOf(Value value) {
  Type type = value.getType();
  if (auto token = dyn_cast<TokenType>(type))
    type = token.getValueType();
  return dyn_cast<RankedTensorType>(type);
}

void ProgramShapes::setRows(Value value, double rows) {
  RankedTensorType type = shapedTypeOf(value);
  if (type && type.getRank() > 0 && type.isDynamicDim(0))
    boundRows[value] = rows;
}

std::optional<double> ProgramShapes::indexValueOf(Value value) const {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return double(constant.getSExtValue());
  Operation *def = value.getDefiningOp();
  if (auto dim = dyn_cast_if_present<tensor::DimOp>(def)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (index && *index == 0)
      return rows(dim.getSource());
    return std::nullopt;
  }
  // The rank, and a choice by it (a fused exchange's rows for this rank).
  if (isa_and_present<RankOp>(def))
    return double(rank);
  if (auto select = dyn_cast_if_present<arith::SelectOp>(def)) {
    auto compare = select.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!compare || (compare.getPredicate() != arith::CmpIPredicate::eq &&
                     compare.getPredicate() != arith::CmpIPredicate::ne))
      return std::nullopt;
    std::optional<double> a = indexValueOf(compare.getLhs());
    std::optional<double> b = indexValueOf(compare.getRhs());
    if (!a || !b)
      return std::nullopt;
    bool equal = *a == *b;
    bool taken =
        compare.getPredicate() == arith::CmpIPredicate::eq ? equal : !equal;
    return indexValueOf(taken ? select.getTrueValue() : select.getFalseValue());
  }
  if (!def || def->getNumOperands() != 2)
    return std::nullopt;
  std::optional<double> lhs = indexValueOf(def->getOperand(0));
  std::optional<double> rhs = indexValueOf(def->getOperand(1));
  if (!lhs || !rhs)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return *lhs + *rhs;
  if (isa<arith::SubIOp>(def))
    return *lhs - *rhs;
  if (isa<arith::MulIOp>(def))
    return *lhs * *rhs;
  if (isa<arith::MinUIOp>(def))
    return std::min(*lhs, *rhs);
  if (isa<arith::MaxUIOp>(def))
    return std::max(*lhs, *rhs);
  if (isa<arith::DivUIOp>(def) && *rhs > 0)
    return std::floor(*lhs / *rhs);
  if (isa<arith::RemUIOp>(def) && *rhs > 0)
    return std::fmod(*lhs, *rhs);
  return std::nullopt;
}

double ProgramShapes::rows(Value value) const {
  RankedTensorType type = shapedTypeOf(value);
  if (!type || type.getRank() == 0)
    return 1;
  if (!type.isDynamicDim(0))
    return type.getDimSize(0);
  auto it = boundRows.find(value);
  return it == boundRows.end() ? 0 : it->second;
}

double ProgramShapes::elements(Value value) const {
  RankedTensorType type = shapedTypeOf(value);
  if (!type)
    return 0;
  double count = type.getRank() ? rows(value) : 1;
  for (int64_t d = 1; d < type.getRank(); ++d)
    count *= type.getDimSize(d);
  return count;
}

ArrayRef<double> RoutingTable::perSample(BucketizeOp bucketize) {
  auto [it, inserted] = cache.try_emplace(bucketize);
  std::vector<double> &fractions = it->second;
  if (!inserted)
    return fractions;
  fractions.assign(numRanks, 0);
  TableOp table = this->tableOf(bucketize);
  if (!table || !table.getPlacementAttr())
    return fractions;
  double pooling = table.getPoolingFactor().convertToDouble();
  TablePlacementAttrInterface placement = table.getPlacementAttr();
  // Row ranges get the indices that fall in them, spread uniformly; a rank
  // holding all rows (table-wise, column-wise) gets every index.
  bool rowRanges = isa<RowWiseAttr, TableRowWiseAttr>(placement);
  std::vector<double> heldRows(numRanks, 0);
  std::vector<bool> holds(numRanks, false);
  for (const TableShard &shard :
       placement.getShards(table.getNumRows(), table.getDim()))
    if (shard.rank >= 0 && shard.rank < numRanks) {
      holds[shard.rank] = true;
      heldRows[shard.rank] += shard.rows;
    }
  for (int64_t to : bucketize.getDestinations()) {
    if (to < 0 || to >= numRanks || !holds[to])
      continue;
    fractions[to] = !rowRanges ? pooling
                    : table.getNumRows()
                        ? pooling * heldRows[to] / table.getNumRows()
                        : 0;
  }
  return fractions;
}

double ProgramShapes::routed(BucketizeOp bucketize, int64_t from,
                             int64_t to) const {
  if (batchSplit.empty())
    return 0;
  // A bucketize of a range of the bags (braid.slice_bags) routes that share
  // of every rank's batch: the ranks run the same program on the same
  // ranges of their batches.
  double share = 1, offsets = rows(bucketize.getOffsets());
  if (batchSplit[rank] > 0 && offsets > 0)
    share = std::clamp((offsets - 1) / batchSplit[rank], 0.0, 1.0);
  return share * batchSplit[from] * routing->perSample(bucketize)[to];
}

/// The bag offsets `use` feeds, and whether it is per index (indices or
/// per-sample weights) rather than the offsets themselves; a null value for
/// any other use.
static std::pair<Value, bool> bagOperandOf(OpOperand &use) {
  Operation *user = use.getOwner();
  Value operand = use.get();
  if (auto bag = dyn_cast<EmbeddingBagOp>(user))
    return {bag.getOffsets(), operand == bag.getIndices() ||
                                  operand == bag.getPerSampleWeights()};
  if (auto bucketize = dyn_cast<BucketizeOp>(user))
    return {bucketize.getOffsets(), operand == bucketize.getIndices()};
  if (auto combine = dyn_cast<CombineShardsOp>(user))
    return {combine.getOffsets(), false};
  if (auto slice = dyn_cast<SliceBagsOp>(user))
    return {slice.getOffsets(), operand == slice.getIndices()};
  return {Value(), false};
}

/// The table whose indices `use` feeds: its user's, or for a range of bags
/// (braid.slice_bags), that of a lookup of the range.
static TableOp tableOfIndices(OpOperand &use, RoutingTable &routing) {
  Operation *user = use.getOwner();
  if (auto slice = dyn_cast<SliceBagsOp>(user)) {
    for (OpOperand &next : slice.getResultIndices().getUses())
      if (TableOp table = tableOfIndices(next, routing))
        return table;
    return nullptr;
  }
  return routing.tableOf(user);
}

/// Whether `arg` is used as bag offsets (bound before the indices).
static bool isOffsets(BlockArgument arg) {
  return llvm::any_of(arg.getUses(), [&](OpOperand &use) {
    auto [offsets, perIndex] = bagOperandOf(use);
    return !perIndex && offsets == arg;
  });
}

LogicalResult ProgramShapes::bindArgument(BlockArgument arg) {
  RankedTensorType type = shapedTypeOf(arg);
  // An argument nothing reads needs no size (a pipelined form's inputs of
  // this batch that only its input distribution read).
  if (!type || !type.getRank() || !type.isDynamicDim(0) || arg.use_empty())
    return success();
  double samples = batchSplit.empty() ? 0 : batchSplit[rank];
  // What the argument is follows from its users: offsets have one more
  // entry than the rank has samples, indices (and per-sample weights) the
  // table's pooling factor per bag (the offsets are bound first), everything
  // else a row per sample.
  for (OpOperand &use : arg.getUses()) {
    auto [offsets, perIndex] = bagOperandOf(use);
    if (!offsets)
      continue;
    if (perIndex) {
      TableOp table = tableOfIndices(use, *routing);
      if (!table)
        return emitError(arg.getLoc())
               << "cannot bind the size of argument " << arg.getArgNumber()
               << ": its bags feed no lookup of a table";
      double pooling = table.getPoolingFactor().convertToDouble();
      setRows(arg, std::max(0.0, rows(offsets) - 1) * pooling);
      return success();
    }
    if (offsets == arg) {
      setRows(arg, samples + 1);
      return success();
    }
  }
  if (batchSplit.empty())
    return emitError(arg.getLoc())
           << "cannot bind the size of argument " << arg.getArgNumber()
           << ": without a batch split (braid.batch_split of a per-rank "
              "program) only embedding indices may have dynamic sizes";
  setRows(arg, samples);
  return success();
}

LogicalResult ProgramShapes::bindOp(Operation &op) {
  auto positionIn = [&](ReplicaGroupsAttr groups, int64_t &groupSize) {
    groupSize = numRanks;
    if (!groups)
      return rank;
    groupSize = groups.getGroupSize();
    for (int64_t g = 0; g < groups.getNumGroups(); ++g) {
      ArrayRef<int64_t> members = groups.getGroup(g);
      auto it = llvm::find(members, rank);
      if (it != members.end())
        return int64_t(it - members.begin());
    }
    return int64_t(-1);
  };
  if (auto bucketize = dyn_cast<BucketizeOp>(op)) {
    double sent = 0;
    for (int64_t to = 0; to < numRanks; ++to)
      sent += routed(bucketize, rank, to);
    setRows(bucketize.getValues(), sent);
    setRows(bucketize.getLengths(),
            double(bucketize.getDestinations().size()) *
                bucketize.getBagsPerRank());
    return success();
  }
  // An exchange of routed indices (or each member of a fused one) receives
  // what every rank's bucketize routes to this rank.
  auto bindReceived = [&](Value input, Value result) -> LogicalResult {
    auto bucketize = input.getDefiningOp<BucketizeOp>();
    if (!bucketize)
      return op.emitError() << "cannot bind the received size: the input "
                               "does not come from braid.bucketize";
    double received = 0;
    for (int64_t from = 0; from < numRanks; ++from)
      received += routed(bucketize, from, rank);
    setRows(result, received);
    return success();
  };
  if (isa<AllToAllVOp, AllToAllVStartOp>(op))
    return bindReceived(op.getOperand(0), op.getResult(0));
  if (auto fused = dyn_cast<FusedAllToAllVStartOp>(op)) {
    for (auto [input, token] :
         llvm::zip_equal(fused.getInputs(), fused.getTokens()))
      if (failed(bindReceived(input, token)))
        return failure();
    return success();
  }
  if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
    int64_t groupSize;
    int64_t position = positionIn(collective.getReplicaGroupsAttr(), groupSize);
    double in = rows(collective.getInput()), out = in;
    if (position < 0) {
      // In no group: the rank keeps its input.
    } else if (isa<AllToAllOp, AllToAllStartOp>(op)) {
      auto sizes = op.getAttrOfType<DenseI64ArrayAttr>("split_sizes");
      if (sizes && position >= 0) {
        out = 0;
        for (int64_t i = 0; i < groupSize; ++i)
          out += sizes[i * groupSize + position];
      }
    } else if (isa<ReduceScatterOp, ReduceScatterStartOp>(op)) {
      if (op.getAttrOfType<IntegerAttr>("dim").getInt() == 0)
        out = in / std::max<int64_t>(1, groupSize);
    } else if (isa<AllGatherOp, AllGatherStartOp>(op)) {
      if (op.getAttrOfType<IntegerAttr>("dim").getInt() == 0)
        out = in * groupSize;
    }
    setRows(op.getResult(0), out);
    return success();
  }
  if (auto wait = dyn_cast<WaitOp>(op)) {
    setRows(wait.getResult(), rows(wait.getToken()));
    return success();
  }
  if (auto shard = dyn_cast<ShardEmbeddingBagOp>(op)) {
    setRows(shard.getResult(), rows(shard.getLengths()));
    return success();
  }
  if (auto slice = dyn_cast<SliceBagsOp>(op)) {
    double bags = std::max(0.0, rows(slice.getOffsets()) - 1);
    double taken =
        std::clamp(bags - double(slice.getStartAttr().getInt()), 0.0,
                   double(slice.getCountAttr().getInt()));
    setRows(slice.getResultOffsets(), taken + 1);
    setRows(slice.getResultIndices(),
            bags > 0 ? rows(slice.getIndices()) * taken / bags : 0);
    return success();
  }
  if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
    setRows(bag.getResult(), rows(bag.getOffsets()) - 1);
    return success();
  }
  if (auto combine = dyn_cast<CombineShardsOp>(op)) {
    setRows(combine.getResult(), rows(combine.getOffsets()) - 1);
    return success();
  }
  // A splat of a dynamic size (a training step's mask) has the rows of the
  // value whose size it takes.
  if (auto splat = dyn_cast<tensor::SplatOp>(op)) {
    if (splat.getType().getRank() && splat.getType().isDynamicDim(0) &&
        !splat.getDynamicSizes().empty())
      if (auto dim = splat.getDynamicSizes().front().getDefiningOp<tensor::DimOp>())
        if (std::optional<int64_t> index = dim.getConstantIndex();
            index && *index == 0) {
          setRows(splat.getResult(), rows(dim.getSource()));
          return success();
        }
  }
  // A slice whose first size is computed from other values' rows (the
  // local bags of a fused combine: the offsets' rows less one).
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    OpFoldResult size = slice.getMixedSizes().front();
    if (auto value = dyn_cast<Value>(size))
      if (std::optional<double> bound = indexValueOf(value)) {
        setRows(slice.getResult(), *bound);
        return success();
      }
  }
  // A concatenation along dimension 0 has its operands' rows.
  if (auto concat = dyn_cast<tensor::ConcatOp>(op);
      concat && concat.getDim() == 0) {
    double total = 0;
    for (Value input : concat.getInputs())
      total += rows(input);
    setRows(concat.getResult(), total);
    return success();
  }
  // An expand_shape whose first size is an index value has that many rows.
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    if (!expand.getOutputShape().empty() &&
        expand.getResultType().isDynamicDim(0))
      if (std::optional<double> bound =
              indexValueOf(expand.getOutputShape().front())) {
        setRows(expand.getResult(), *bound);
        return success();
      }
  // A reshape keeps the elements: rows times the static rest of a row.
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op)) {
    auto rowElements = [](RankedTensorType type) {
      double elements = 1;
      for (int64_t d = 1; d < type.getRank(); ++d)
        elements *= type.getDimSize(d);
      return elements;
    };
    auto source = cast<RankedTensorType>(op.getOperand(0).getType());
    auto result = cast<RankedTensorType>(op.getResult(0).getType());
    if (result.getRank() && result.isDynamicDim(0) &&
        llvm::none_of(result.getShape().drop_front(), ShapedType::isDynamic) &&
        llvm::none_of(source.getShape().drop_front(), ShapedType::isDynamic)) {
      setRows(op.getResult(0), rows(op.getOperand(0)) * rowElements(source) /
                                   rowElements(result));
      return success();
    }
  }
  // A cast to a dynamic first dimension keeps the source's rows (a rank's
  // rows of a tensor-parallel layer's output).
  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    setRows(cast.getResult(), rows(cast.getSource()));
    return success();
  }
  // Row-wise ops (dense layers, the interaction, elementwise ops) keep
  // their operands' rows.
  for (Value result : op.getResults()) {
    RankedTensorType type = shapedTypeOf(result);
    if (!type || !type.getRank() || !type.isDynamicDim(0))
      continue;
    for (int64_t d = 1; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        return op.emitError() << "cannot bind the sizes of " << type
                              << ": only the first dimension may be dynamic";
    auto operand = llvm::find_if(op.getOperands(), [&](Value v) {
      RankedTensorType t = shapedTypeOf(v);
      return t && t.getRank() && t.isDynamicDim(0);
    });
    if (operand == op.getOperands().end())
      return op.emitError() << "cannot bind the rows of a result of '"
                            << op.getName()
                            << "': no operand has a dynamic first dimension";
    setRows(result, rows(*operand));
  }
  return success();
}

FailureOr<ProgramShapes> ProgramShapes::bind(func::FuncOp func, int64_t rank,
                                             int64_t numRanks,
                                             ArrayRef<int64_t> batchSplit,
                                             RoutingTable &routing) {
  if (!batchSplit.empty() && int64_t(batchSplit.size()) != numRanks)
    return func.emitError() << "the batch split has " << batchSplit.size()
                            << " entries for " << numRanks << " ranks";
  ProgramShapes shapes(rank, numRanks, batchSplit, routing);
  if (func.isExternal())
    return shapes;
  // A pipelined form's carried arguments (braid-pipeline-input-dist) have
  // the sizes of the values its input distribution function returns.
  if (failed(shapes.bindCarried(func)))
    return failure();
  // Offsets first: indices are bound from their bags.
  for (bool offsetsPass : {true, false})
    for (BlockArgument arg : func.getArguments())
      if (!func.getArgAttr(arg.getArgNumber(),
                           BraidDialect::kCarriedAttrName) &&
          isOffsets(arg) == offsetsPass && failed(shapes.bindArgument(arg)))
        return failure();
  for (Operation &op : func.getBody().getOps())
    if (failed(shapes.bindOp(op)))
      return failure();
  return shapes;
}

LogicalResult ProgramShapes::bindCarried(func::FuncOp func) {
  auto symbol =
      func->getAttrOfType<FlatSymbolRefAttr>(BraidDialect::kInputDistAttrName);
  if (!symbol)
    return success();
  auto inputDist =
      SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(func, symbol);
  // Its carried values come from a function of its own (the verifier
  // holds this too; a cycle would never end).
  if (!inputDist || inputDist.isExternal() || inputDist == func ||
      inputDist->hasAttr(BraidDialect::kInputDistAttrName))
    return func.emitError() << "'" << BraidDialect::kInputDistAttrName
                            << "' names " << symbol
                            << ", which is no input distribution function "
                               "with a body";
  FailureOr<ProgramShapes> produced =
      bind(inputDist, rank, numRanks, batchSplit, *routing);
  if (failed(produced))
    return failure();
  llvm::StringMap<Value> byName;
  Operation *ret = inputDist.getBody().front().getTerminator();
  for (unsigned index = 0; index < inputDist.getNumResults(); ++index)
    if (auto name = inputDist.getResultAttrOfType<StringAttr>(
            index, BraidDialect::kCarriedAttrName))
      byName[name.getValue()] = ret->getOperand(index);
  for (BlockArgument arg : func.getArguments()) {
    auto name = func.getArgAttrOfType<StringAttr>(
        arg.getArgNumber(), BraidDialect::kCarriedAttrName);
    if (!name)
      continue;
    Value value = byName.lookup(name.getValue());
    if (!value)
      return emitError(arg.getLoc())
             << "the carried argument '" << name.getValue() << "' is no result of "
             << symbol;
    if (RankedTensorType type = shapedTypeOf(arg);
        type && type.getRank() && type.isDynamicDim(0))
      setRows(arg, produced->rows(value));
  }
  return success();
}
