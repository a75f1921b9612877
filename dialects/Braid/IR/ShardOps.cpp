//===- ShardOps.cpp - Ops of partitioned embeddings -----------------------===//
//
// This file implements the verifiers of the ops braid-partition emits for
// sharded tables: bucketize, all_to_all_v, shard_embedding_bag and
// combine_shards.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"

using namespace mlir;
using namespace mlir::braid;

static bool isStatic(int64_t size) { return !ShapedType::isDynamic(size); }

Type mlir::braid::getAccumulationType(TableOp table) {
  Type element = table.getElementType();
  if (element.isF16() || element.isBF16())
    return Float32Type::get(table.getContext());
  return element;
}

int64_t mlir::braid::getWidestShardCols(TableOp table) {
  auto placement = table.getPlacementAttr();
  if (!placement)
    return table.getDim();
  int64_t widest = 0;
  for (const TableShard &shard :
       placement.getShards(table.getNumRows(), table.getDim()))
    widest = std::max(widest, shard.cols);
  return widest;
}

SmallVector<TableShard> mlir::braid::getReceivedParts(TableOp table) {
  if (!isa_and_present<ColumnWiseAttr>(table.getPlacementAttr()))
    return {{0, 0, table.getNumRows(), 0, table.getDim()}};
  SmallVector<TableShard> parts =
      table.getPlacementAttr().getShards(table.getNumRows(), table.getDim());
  llvm::sort(parts, [](const TableShard &a, const TableShard &b) {
    return a.rank < b.rank;
  });
  return parts;
}

/// The table `op` names, which must have a placement other than
/// data-parallel.
static FailureOr<TableOp> lookupShardedTable(Operation *op,
                                             FlatSymbolRefAttr name,
                                             SymbolTableCollection &symbols) {
  auto table = symbols.lookupNearestSymbolFrom<TableOp>(op, name);
  if (!table)
    return op->emitOpError() << "'" << name.getValue()
                             << "' does not name a braid.table";
  auto placement = table.getPlacementAttr();
  if (!placement || isa<DataParallelAttr>(placement))
    return op->emitOpError() << "table '" << name.getValue()
                             << "' needs a placement other than data_parallel";
  return table;
}

/// Checks `type` against the partial results of `table`.
static LogicalResult verifyPartialType(Operation *op, TableOp table,
                                       RankedTensorType type, StringRef what) {
  if (type.getElementType() != getAccumulationType(table))
    return op->emitOpError() << what << " element type " << type.getElementType()
                             << " is not the accumulation type "
                             << getAccumulationType(table) << " of table '"
                             << table.getSymName() << "'";
  int64_t widest = getWidestShardCols(table);
  if (isStatic(type.getDimSize(1)) && type.getDimSize(1) != widest)
    return op->emitOpError() << what << " has " << type.getDimSize(1)
                             << " columns but the widest shard of table '"
                             << table.getSymName() << "' has " << widest;
  return success();
}

/// Checks a static offsets size against `bagsPerRank` slots.
static LogicalResult verifyBagsPerRank(Operation *op, int64_t bagsPerRank,
                                       RankedTensorType offsets) {
  if (bagsPerRank < 0 || bagsPerRank > kMaxBagsPerRank)
    return op->emitOpError() << "bags_per_rank must be between 0 and "
                             << kMaxBagsPerRank << ", got " << bagsPerRank;
  int64_t numOffsets = offsets.getDimSize(0);
  if (numOffsets == 0)
    return op->emitOpError() << "offsets must have at least one entry";
  if (isStatic(numOffsets) && numOffsets - 1 > bagsPerRank)
    return op->emitOpError() << "there are " << numOffsets - 1
                             << " local bags but bags_per_rank is only "
                             << bagsPerRank;
  return success();
}

//===----------------------------------------------------------------------===//
// BucketizeOp
//===----------------------------------------------------------------------===//

LogicalResult BucketizeOp::verify() {
  ArrayRef<int64_t> destinations = getDestinations();
  for (size_t i = 0; i < destinations.size(); ++i)
    if (destinations[i] < 0 || (i > 0 && destinations[i] <= destinations[i - 1]))
      return emitOpError() << "destinations must be non-negative and strictly "
                              "increasing";
  if (failed(verifyBagsPerRank(*this, getBagsPerRank(),
                               getOffsets().getType())))
    return failure();
  int64_t numLengths = getLengths().getType().getDimSize(0);
  int64_t expected = getBagsPerRank() * int64_t(destinations.size());
  if (isStatic(numLengths) && numLengths != expected)
    return emitOpError() << "lengths have " << numLengths << " entries but "
                         << destinations.size() << " destinations of "
                         << getBagsPerRank() << " bags need " << expected;
  if (getValues().getType().getElementType() !=
      getIndices().getType().getElementType())
    return emitOpError() << "values must have the indices' element type "
                         << getIndices().getType().getElementType();
  int64_t numCounts = getSendCounts().getType().getDimSize(0);
  if (!isStatic(numCounts))
    return emitOpError() << "send_counts must be static (one per rank)";
  if (!destinations.empty() && numCounts <= destinations.back())
    return emitOpError() << "send_counts has " << numCounts
                         << " entries but destination " << destinations.back()
                         << " needs more";
  return success();
}

LogicalResult BucketizeOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = lookupShardedTable(*this, getTableAttr(), symbols);
  if (failed(table))
    return failure();
  for (int64_t rank : table->getPlacementAttr().getPlacementRanks())
    if (!llvm::is_contained(getDestinations(), rank))
      return emitOpError() << "rank " << rank << " holds a shard of table '"
                           << getTable() << "' but is not a destination";
  return success();
}

//===----------------------------------------------------------------------===//
// AllToAllVOp
//===----------------------------------------------------------------------===//

/// The checks all_to_all_v and all_to_all_v_start share; `resultType` is
/// the result's, or the token's value type.
static LogicalResult verifyAllToAllV(Operation *op, Type inputType,
                                     Type resultType, Type countsType) {
  auto input = cast<RankedTensorType>(inputType);
  auto result = dyn_cast<RankedTensorType>(resultType);
  if (input.getRank() == 0)
    return op->emitOpError() << "the input needs at least one dimension";
  if (!result || input.getElementType() != result.getElementType() ||
      input.getRank() != result.getRank())
    return op->emitOpError() << "the result must have the input's element "
                                "type and rank, got "
                             << resultType << " for " << input;
  for (int64_t d = 1; d < input.getRank(); ++d)
    if (isStatic(input.getDimSize(d)) && isStatic(result.getDimSize(d)) &&
        input.getDimSize(d) != result.getDimSize(d))
      return op->emitOpError() << "the result differs from the input along "
                                  "dimension "
                               << d << ": " << result << " for " << input;
  if (!isStatic(cast<RankedTensorType>(countsType).getDimSize(0)))
    return op->emitOpError() << "send_counts must be static (one per rank)";
  return success();
}

LogicalResult AllToAllVOp::verify() {
  return verifyAllToAllV(*this, getInput().getType(), getResult().getType(),
                         getSendCounts().getType());
}

LogicalResult AllToAllVStartOp::verify() {
  if (failed(verifyAllToAllV(*this, getInput().getType(),
                             getToken().getType().getValueType(),
                             getSendCounts().getType())))
    return failure();
  return verifyTokensWaitedOnce(*this);
}

LogicalResult FusedAllToAllVStartOp::verify() {
  size_t members = getInputs().size();
  if (members == 0 || getSendCounts().size() != members ||
      getTokens().size() != members)
    return emitOpError() << "needs as many inputs, send_counts and tokens, "
                            "at least one; got "
                         << members << ", " << getSendCounts().size()
                         << " and " << getTokens().size();
  Type element =
      cast<RankedTensorType>(getInputs().front().getType()).getElementType();
  int64_t ranks =
      cast<RankedTensorType>(getSendCounts().front().getType()).getDimSize(0);
  for (size_t m = 0; m < members; ++m) {
    auto input = cast<RankedTensorType>(getInputs()[m].getType());
    auto counts = cast<RankedTensorType>(getSendCounts()[m].getType());
    if (input.getElementType() != element)
      return emitOpError() << "member " << m << " sends " << input
                           << " but member 0 sends elements of " << element;
    if (counts.getDimSize(0) != ranks)
      return emitOpError() << "member " << m << " has send_counts " << counts
                           << " but member 0 has "
                           << getSendCounts().front().getType();
    auto token = cast<TokenType>(getTokens()[m].getType());
    if (failed(verifyAllToAllV(*this, input, token.getValueType(), counts)))
      return failure();
  }
  if (std::optional<Type> wire = getWireType()) {
    auto narrow = dyn_cast<IntegerType>(*wire);
    auto wide = dyn_cast<IntegerType>(element);
    if (!narrow || !narrow.isSignless() || !wide ||
        narrow.getWidth() >= wide.getWidth())
      return emitOpError() << "wire_type must be a signless integer type "
                              "narrower than the inputs' "
                           << element << ", got " << *wire;
  }
  return verifyTokensWaitedOnce(*this);
}

//===----------------------------------------------------------------------===//
// ShardEmbeddingBagOp
//===----------------------------------------------------------------------===//

LogicalResult ShardEmbeddingBagOp::verify() {
  if (getMode() == PoolingMode::mean)
    return emitOpError() << "mode must be sum or max; combine_shards "
                            "finishes mean";
  return success();
}

LogicalResult
ShardEmbeddingBagOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = lookupShardedTable(*this, getTableAttr(), symbols);
  if (failed(table))
    return failure();
  return verifyPartialType(*this, *table,
                           cast<RankedTensorType>(getResult().getType()),
                           "result");
}

//===----------------------------------------------------------------------===//
// CombineShardsOp
//===----------------------------------------------------------------------===//

LogicalResult CombineShardsOp::verify() {
  if (getBagsPerRank() <= 0)
    return emitOpError() << "bags_per_rank must be positive, got "
                         << getBagsPerRank();
  RankedTensorType offsets = getOffsets().getType();
  if (failed(verifyBagsPerRank(*this, getBagsPerRank(), offsets)))
    return failure();
  int64_t rows = getReceived().getType().getDimSize(0);
  if (isStatic(rows) && rows % getBagsPerRank() != 0)
    return emitOpError() << "received has " << rows
                         << " rows, not a multiple of bags_per_rank "
                         << getBagsPerRank();
  auto result = cast<RankedTensorType>(getResult().getType());
  if (isStatic(offsets.getDimSize(0)) && isStatic(result.getDimSize(0)) &&
      result.getDimSize(0) != offsets.getDimSize(0) - 1)
    return emitOpError() << "the result has " << result.getDimSize(0)
                         << " rows but there are " << offsets.getDimSize(0) - 1
                         << " local bags";
  return success();
}

LogicalResult CombineShardsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = lookupShardedTable(*this, getTableAttr(), symbols);
  if (failed(table))
    return failure();
  if (failed(verifyPartialType(*this, *table, getReceived().getType(),
                               "received")))
    return failure();
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getElementType() != table->getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from table '" << getTable()
                         << "' element type " << table->getElementType();
  if (isStatic(result.getDimSize(1)) && result.getDimSize(1) != table->getDim())
    return emitOpError() << "result has " << result.getDimSize(1)
                         << " columns but table '" << getTable()
                         << "' has dim " << table->getDim();
  int64_t rows = getReceived().getType().getDimSize(0);
  int64_t parts = isa<ColumnWiseAttr>(table->getPlacementAttr())
                      ? int64_t(table->getPlacementAttr().getPlacementRanks().size())
                      : 1;
  if (isStatic(rows) && rows != parts * int64_t(getBagsPerRank()))
    return emitOpError() << "received has " << rows << " rows but "
                         << parts << " part(s) of " << getBagsPerRank()
                         << " bags need " << parts * getBagsPerRank();
  return success();
}
