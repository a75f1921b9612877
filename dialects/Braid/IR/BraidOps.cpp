//===- BraidOps.cpp - Braid operations ------------------------------------===//
//
// This file implements the verifiers and canonicalizations of the Braid
// tables and compute operations, and the custom assembly directives the
// collectives use. The collectives' own rules live in CollectiveOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::braid;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// Parses an optional `groups [[0, 1], [2, 3]]`.
static ParseResult parseReplicaGroups(OpAsmParser &parser,
                                      ReplicaGroupsAttr &groups) {
  if (failed(parser.parseOptionalKeyword("groups")))
    return success();
  groups = ReplicaGroupsAttr::parseBody(parser);
  return success(groups != nullptr);
}

static void printReplicaGroups(OpAsmPrinter &printer, Operation *,
                               ReplicaGroupsAttr groups) {
  if (!groups)
    return;
  printer << "groups ";
  groups.printBody(printer);
}

/// Parses the source-target pairs of a permute: `[[0, 1], [1, 0]]`.
static ParseResult parsePairList(OpAsmParser &parser,
                                 ReplicaGroupsAttr &pairs) {
  pairs = ReplicaGroupsAttr::parseBody(parser);
  return success(pairs != nullptr);
}

static void printPairList(OpAsmPrinter &printer, Operation *,
                          ReplicaGroupsAttr pairs) {
  pairs.printBody(printer);
}

#define GET_OP_CLASSES
#include "braid/Dialect/Braid/IR/BraidOps.cpp.inc"

/// Returns true when two static sizes are known to differ.
static bool staticMismatch(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

//===----------------------------------------------------------------------===//
// TableOp
//===----------------------------------------------------------------------===//

LogicalResult TableOp::verify() {
  RankedTensorType type = getTableType();
  if (type.getRank() != 2 || !type.hasStaticShape())
    return emitOpError() << "table type must be a statically shaped rank-2 "
                            "tensor [rows, dim], got "
                         << type;
  if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(
          type.getElementType()))
    return emitOpError() << "table element type must be f16, bf16, f32 or "
                            "f64, got "
                         << type.getElementType();
  if (!isFileNameSafe(getSymName()))
    return emitOpError() << "table name '" << getSymName()
                         << "' cannot name a file in a folder (braid-run reads "
                            "and writes it as NAME.npy): no '/', '\\' or NUL, "
                            "and no leading '.'";
  if (getNumRows() < 1 || getDim() < 1)
    return emitOpError() << "table must have at least one row and one "
                            "column, got "
                         << type;
  if (getNumRows() > kMaxTableRows ||
      getDim() > kMaxTableElements / getNumRows())
    return emitOpError() << "table may have at most " << kMaxTableRows
                         << " rows and " << kMaxTableElements
                         << " elements, got " << type;
  double pooling = getPoolingFactor().convertToDouble();
  if (!std::isfinite(pooling) || pooling < 0 || pooling > kMaxPoolingFactor)
    return emitOpError() << "pooling_factor must be finite, not negative and "
                            "at most "
                         << int64_t(kMaxPoolingFactor) << ", got " << pooling;
  if (std::optional<APFloat> ratio = getUniqueRatio()) {
    double value = ratio->convertToDouble();
    if (!(value > 0 && value <= 1))
      return emitOpError() << "unique_ratio must be in (0, 1], got " << value;
  }
  TablePlacementAttrInterface placement = getPlacementAttr();
  if (!placement)
    return success();
  auto emitError = [&]() { return emitOpError() << "placement: "; };
  if (failed(placement.verifyForTable(getNumRows(), getDim(), emitError)))
    return failure();
  auto module = (*this)->getParentOfType<ModuleOp>();
  auto cluster = module ? module->getAttrOfType<ClusterAttr>(
                              BraidDialect::kClusterAttrName)
                        : ClusterAttr();
  if (!cluster)
    return success();
  for (int64_t rank : placement.getPlacementRanks())
    if (rank >= cluster.getWorldSize())
      return emitOpError() << "placement uses rank " << rank
                           << " but the cluster has "
                           << cluster.getWorldSize() << " ranks";
  if (auto trw = dyn_cast<TableRowWiseAttr>(placement)) {
    if (trw.getNode() >= cluster.getNodes())
      return emitOpError() << "table_row_wise node " << trw.getNode()
                           << " is not a node of the cluster ("
                           << cluster.getNodes() << " nodes)";
    for (int64_t rank : trw.getRanks())
      if (rank / cluster.getRanksPerNode() != trw.getNode())
        return emitOpError()
               << "table_row_wise rank " << rank << " is on node "
               << rank / cluster.getRanksPerNode() << ", not on node "
               << trw.getNode();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// EmbeddingBagOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingBagOp::verify() {
  auto resultType = cast<RankedTensorType>(getResult().getType());
  int64_t numOffsets = getOffsets().getType().getDimSize(0);
  if (numOffsets == 0)
    return emitOpError() << "offsets must have at least one entry (B + 1 "
                            "for B bags)";
  if (staticMismatch(numOffsets, resultType.getDimSize(0) + 1) &&
      !resultType.isDynamicDim(0))
    return emitOpError() << "offsets have " << numOffsets
                         << " entries, so there are " << numOffsets - 1
                         << " bags, but the result has "
                         << resultType.getDimSize(0) << " rows";
  if (Value weights = getPerSampleWeights()) {
    auto weightsType = cast<RankedTensorType>(weights.getType());
    if (weightsType.getElementType() != resultType.getElementType())
      return emitOpError() << "per_sample_weights element type "
                           << weightsType.getElementType()
                           << " differs from the result's "
                           << resultType.getElementType();
    if (staticMismatch(weightsType.getDimSize(0),
                       getIndices().getType().getDimSize(0)))
      return emitOpError() << "per_sample_weights have "
                           << weightsType.getDimSize(0)
                           << " entries but there are "
                           << getIndices().getType().getDimSize(0)
                           << " indices";
    if (getMode() != PoolingMode::sum)
      return emitOpError() << "per_sample_weights need mode sum, got "
                           << stringifyPoolingMode(getMode());
  }
  return success();
}

LogicalResult SliceBagsOp::verify() {
  int64_t start = getStartAttr().getInt(), count = getCountAttr().getInt();
  if (start < 0)
    return emitOpError() << "start must not be negative, got " << start;
  if (count < 1)
    return emitOpError() << "count must be positive, got " << count;
  if (count > std::numeric_limits<int64_t>::max() - start)
    return emitOpError() << "start + count overflows a 64-bit integer";
  for (auto [operand, result, name] :
       {std::tuple<Value, Value, StringRef>{getIndices(), getResultIndices(),
                                           "indices"},
        std::tuple<Value, Value, StringRef>{getOffsets(), getResultOffsets(),
                                           "offsets"}}) {
    auto from = cast<RankedTensorType>(operand.getType());
    auto to = cast<RankedTensorType>(result.getType());
    if (from.getElementType() != to.getElementType())
      return emitOpError() << "result " << name << " have element type "
                           << to.getElementType() << ", not the operand's "
                           << from.getElementType();
    if (!to.isDynamicDim(0))
      return emitOpError() << "result " << name
                           << " must have a dynamic size: how many a range of "
                              "bags holds depends on the batch";
  }
  return success();
}

LogicalResult
EmbeddingBagOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto table =
      symbolTable.lookupNearestSymbolFrom<TableOp>(*this, getTableAttr());
  if (!table)
    return emitOpError() << "'" << getTable()
                         << "' does not name a braid.table";
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (staticMismatch(resultType.getDimSize(1), table.getDim()))
    return emitOpError() << "result has " << resultType.getDimSize(1)
                         << " columns but table '" << getTable()
                         << "' has dim " << table.getDim();
  if (resultType.getElementType() != table.getElementType())
    return emitOpError() << "result element type "
                         << resultType.getElementType() << " differs from table '"
                         << getTable() << "' element type "
                         << table.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType weight = getWeight().getType();
  RankedTensorType bias = getBias().getType();
  auto result = cast<RankedTensorType>(getResult().getType());
  Type elementType = input.getElementType();
  if (weight.getElementType() != elementType ||
      bias.getElementType() != elementType ||
      result.getElementType() != elementType)
    return emitOpError() << "input, weight, bias and result must share one "
                            "element type, got "
                         << elementType << ", " << weight.getElementType()
                         << ", " << bias.getElementType() << " and "
                         << result.getElementType();
  if (staticMismatch(input.getDimSize(1), weight.getDimSize(1)))
    return emitOpError() << "input has " << input.getDimSize(1)
                         << " features but weight [out, in] expects "
                         << weight.getDimSize(1);
  if (staticMismatch(bias.getDimSize(0), weight.getDimSize(0)))
    return emitOpError() << "bias has " << bias.getDimSize(0)
                         << " entries but weight [out, in] has "
                         << weight.getDimSize(0) << " outputs";
  if (staticMismatch(result.getDimSize(1), weight.getDimSize(0)))
    return emitOpError() << "result has " << result.getDimSize(1)
                         << " columns but weight [out, in] has "
                         << weight.getDimSize(0) << " outputs";
  if (staticMismatch(result.getDimSize(0), input.getDimSize(0)))
    return emitOpError() << "result has " << result.getDimSize(0)
                         << " rows but input has " << input.getDimSize(0);
  return success();
}

//===----------------------------------------------------------------------===//
// InteractionOp
//===----------------------------------------------------------------------===//

LogicalResult InteractionOp::verify() {
  if (getEmbeddings().empty())
    return emitOpError() << "needs at least one embedding";
  RankedTensorType dense = getDense().getType();
  auto result = cast<RankedTensorType>(getResult().getType());
  int64_t batch = dense.getDimSize(0);
  int64_t columns = dense.getDimSize(1);
  // A feature of no columns has nothing to interact (and the kernels'
  // vectors of its width would have no element).
  if (dense.getDimSize(1) == 0)
    return emitOpError() << "dense needs at least one column, got " << dense;
  for (auto [index, embedding] : llvm::enumerate(getEmbeddings())) {
    auto type = cast<RankedTensorType>(embedding.getType());
    if (type.getDimSize(1) == 0)
      return emitOpError() << "embedding " << index
                           << " needs at least one column, got " << type;
    if (type.getElementType() != dense.getElementType())
      return emitOpError() << "embedding " << index << " has element type "
                           << type.getElementType() << " but dense has "
                           << dense.getElementType();
    if (staticMismatch(type.getDimSize(0), batch))
      return emitOpError() << "embedding " << index << " has "
                           << type.getDimSize(0) << " rows but dense has "
                           << batch;
    if (getKind() == InteractionKind::dot &&
        staticMismatch(type.getDimSize(1), dense.getDimSize(1)))
      return emitOpError() << "dot interaction needs every embedding to have "
                              "the dense dim "
                           << dense.getDimSize(1) << ", but embedding "
                           << index << " has " << type.getDimSize(1);
    if (getKind() == InteractionKind::cat) {
      if (type.isDynamicDim(1) || ShapedType::isDynamic(columns))
        columns = ShapedType::kDynamic;
      else
        columns += type.getDimSize(1);
    }
  }
  if (result.getElementType() != dense.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from the operands' "
                         << dense.getElementType();
  if (staticMismatch(result.getDimSize(0), batch))
    return emitOpError() << "result has " << result.getDimSize(0)
                         << " rows but dense has " << batch;
  if (getKind() == InteractionKind::dot && !ShapedType::isDynamic(columns)) {
    int64_t numFeatures = getEmbeddings().size();
    columns += numFeatures * (numFeatures + 1) / 2;
  }
  if (staticMismatch(result.getDimSize(1), columns))
    return emitOpError() << stringifyInteractionKind(getKind())
                         << " interaction of these operands has " << columns
                         << " columns, but the result has "
                         << result.getDimSize(1);
  return success();
}

//===----------------------------------------------------------------------===//
// PermuteOp
//===----------------------------------------------------------------------===//

LogicalResult PermuteOp::verify() {
  ReplicaGroupsAttr pairs = getSourceTargetPairs();
  if (pairs.getGroupSize() != 2)
    return emitOpError() << "pairs must each list a source and a target, got "
                            "lists of "
                         << pairs.getGroupSize();
  llvm::SmallDenseSet<int64_t> sources, targets;
  for (int64_t pair = 0, e = pairs.getNumGroups(); pair < e; ++pair) {
    ArrayRef<int64_t> sourceTarget = pairs.getGroup(pair);
    if (!sources.insert(sourceTarget[0]).second)
      return emitOpError() << "rank " << sourceTarget[0]
                           << " is the source of two pairs";
    if (!targets.insert(sourceTarget[1]).second)
      return emitOpError() << "rank " << sourceTarget[1]
                           << " is the target of two pairs";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// WaitOp
//===----------------------------------------------------------------------===//

namespace {
/// `wait(X_start(x))` over groups of one rank is `x`: the collective is the
/// identity, so neither the start nor the wait needs to run.
struct FoldTrivialAsyncCollective : OpRewritePattern<WaitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WaitOp wait,
                                PatternRewriter &rewriter) const override {
    auto start = wait.getToken().getDefiningOp<CollectiveOpInterface>();
    if (!start || start.getStaticGroupSize() != 1 ||
        start.getInput().getType() != wait.getResult().getType())
      return failure();
    rewriter.replaceOp(wait, start.getInput());
    if (start->use_empty())
      rewriter.eraseOp(start);
    return success();
  }
};
} // namespace

void WaitOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<FoldTrivialAsyncCollective>(context);
}
