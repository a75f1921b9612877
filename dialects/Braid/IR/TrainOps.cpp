//===- TrainOps.cpp - Ops of the training step ----------------------------===//
//
// This file implements the verifiers of the ops braid-differentiate emits:
// the loss, the gradients of linear layers and interactions, the fused
// embedding updates and the dense optimizer update.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Dialect/Braid/IR/Optimizers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::braid;

static bool isStatic(int64_t size) { return !ShapedType::isDynamic(size); }

/// True when two sizes may be equal: either is dynamic or they match.
static bool compatible(int64_t a, int64_t b) {
  return !isStatic(a) || !isStatic(b) || a == b;
}

/// The table `op` names, with a placement check: `dataParallel` true
/// needs a data-parallel table, false one that is not, nullopt any.
static FailureOr<TableOp> lookupTable(Operation *op, FlatSymbolRefAttr name,
                                      SymbolTableCollection &symbols,
                                      std::optional<bool> dataParallel) {
  auto table = symbols.lookupNearestSymbolFrom<TableOp>(op, name);
  if (!table)
    return op->emitOpError() << "'" << name.getValue()
                             << "' does not name a braid.table";
  if (!dataParallel)
    return table;
  bool isDataParallel = isa_and_nonnull<DataParallelAttr>(
      table.getPlacementAttr());
  if (*dataParallel && !isDataParallel)
    return op->emitOpError() << "table '" << name.getValue()
                             << "' needs a data_parallel placement";
  if (!*dataParallel && (isDataParallel || !table.getPlacementAttr()))
    return op->emitOpError() << "table '" << name.getValue()
                             << "' needs a placement other than data_parallel";
  return table;
}

static LogicalResult verifyEmbeddingOptimizer(Operation *op,
                                              DictionaryAttr optimizer) {
  return braid::detail::verifyOptimizerPart(op, optimizer, "embedding",
                                     getEmbeddingOptimizerTypes());
}

/// Checks a [bags, cols] gradient against a table's `cols` columns.
static LogicalResult verifyColumns(Operation *op, RankedTensorType type,
                                   int64_t cols, StringRef what,
                                   TableOp table) {
  if (!compatible(type.getDimSize(1), cols))
    return op->emitOpError() << what << " has " << type.getDimSize(1)
                             << " columns but table '" << table.getSymName()
                             << "' needs " << cols;
  return success();
}

/// Checks a whole-table gradient's type: the table's [rows, dim].
static LogicalResult verifyTableGradient(Operation *op, RankedTensorType grad,
                                         TableOp table) {
  if (grad.getDimSize(0) != table.getNumRows() ||
      grad.getDimSize(1) != table.getDim())
    return op->emitOpError() << "table_grad must be [" << table.getNumRows()
                             << ", " << table.getDim() << "], got " << grad;
  return success();
}

//===----------------------------------------------------------------------===//
// Loss and dense gradients
//===----------------------------------------------------------------------===//

LogicalResult BceWithLogitsOp::verify() {
  RankedTensorType logits = getLogits().getType();
  if (!compatible(logits.getDimSize(1), 1))
    return emitOpError() << "logits must be [batch, 1], got " << logits;
  if (!compatible(logits.getDimSize(0), getLabels().getType().getDimSize(0)))
    return emitOpError() << "logits have " << logits.getDimSize(0)
                         << " rows but there are "
                         << getLabels().getType().getDimSize(0) << " labels";
  if (getLogitsGrad().getType() != logits)
    return emitOpError() << "logits_grad must have the logits' type "
                         << logits;
  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale) || scale <= 0)
    return emitOpError() << "scale must be finite and positive, got "
                         << scale;
  return success();
}

LogicalResult LinearGradOp::verify() {
  RankedTensorType x = getInput().getType(), w = getWeight().getType(),
                   y = getResult().getType(), dy = getResultGrad().getType();
  if (!compatible(x.getDimSize(1), w.getDimSize(1)))
    return emitOpError() << "input has " << x.getDimSize(1)
                         << " columns but weight has " << w.getDimSize(1);
  for (RankedTensorType out : {y, dy})
    if (!compatible(out.getDimSize(0), x.getDimSize(0)) ||
        !compatible(out.getDimSize(1), w.getDimSize(0)))
      return emitOpError() << "result and result_grad must be [batch, "
                           << w.getDimSize(0) << "], got " << out;
  auto expect = [&](Value grad, ArrayRef<int64_t> shape,
                    StringRef what) -> LogicalResult {
    auto type = cast<RankedTensorType>(grad.getType());
    if (type.getRank() != int64_t(shape.size()) ||
        !llvm::all_of(llvm::zip(type.getShape(), shape), [](auto pair) {
          return compatible(std::get<0>(pair), std::get<1>(pair));
        }))
      return emitOpError() << what << " has shape of " << type
                           << ", expected that of its forward value";
    return success();
  };
  if (failed(expect(getInputGrad(), x.getShape(), "input_grad")) ||
      failed(expect(getWeightGrad(), w.getShape(), "weight_grad")) ||
      failed(expect(getBiasGrad(), {w.getDimSize(0)}, "bias_grad")))
    return failure();
  // One part of a split gradient (braid-defer-weight-gradients): the
  // backends compute only that part, so the other's results go unread.
  // (The dialect verifies the attribute's value.)
  if (auto name = (*this)->getAttrOfType<StringAttr>(
          BraidDialect::kGradPartAttrName)) {
    if (name.getValue() == "input" &&
        !(getWeightGrad().use_empty() && getBiasGrad().use_empty()))
      return emitOpError() << "computes only its input gradient ("
                           << BraidDialect::kGradPartAttrName
                           << " = \"input\"), but its weight or bias "
                              "gradient is used";
    if (name.getValue() == "params" && !getInputGrad().use_empty())
      return emitOpError() << "computes only its weight and bias gradients ("
                           << BraidDialect::kGradPartAttrName
                           << " = \"params\"), but its input gradient is "
                              "used";
  }
  return success();
}

LogicalResult InteractionGradOp::verify() {
  SmallVector<Value> features = {getDense()};
  llvm::append_range(features, getEmbeddings());
  if (getFeatureGrads().size() != features.size())
    return emitOpError() << "has " << getFeatureGrads().size()
                         << " results for " << features.size()
                         << " features";
  int64_t total = 0, dim = 0;
  for (auto [feature, grad] : llvm::zip(features, getFeatureGrads())) {
    auto type = cast<RankedTensorType>(feature.getType());
    auto gradType = cast<RankedTensorType>(grad.getType());
    if (gradType.getShape() != type.getShape())
      return emitOpError() << "gradient " << gradType
                           << " does not have its feature's shape " << type;
    int64_t cols = type.getDimSize(1);
    if (!isStatic(cols))
      return emitOpError() << "features need static widths";
    if (cols < 1)
      return emitOpError() << "features need at least one column, got "
                           << type;
    // A dot interaction's features are rows of one width (the reference and
    // the kernels index every feature with the first one's).
    if (getKind() == InteractionKind::dot && feature != features.front() &&
        cols != dim)
      return emitOpError() << "dot interaction needs every feature to have "
                              "the dense dim "
                           << dim << ", but a feature is " << type;
    total += cols;
    if (feature == features.front())
      dim = cols;
  }
  int64_t n = features.size();
  int64_t width =
      getKind() == InteractionKind::cat ? total : dim + n * (n - 1) / 2;
  if (!compatible(getResultGrad().getType().getDimSize(1), width))
    return emitOpError() << "result_grad has "
                         << getResultGrad().getType().getDimSize(1)
                         << " columns but the interaction has " << width;
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding updates
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingBagUpdateOp::verify() {
  return verifyEmbeddingOptimizer(*this, getOptimizer());
}

LogicalResult
EmbeddingBagUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table =
      lookupTable(*this, getTableAttr(), symbols, std::nullopt);
  if (failed(table))
    return failure();
  return verifyColumns(*this, getPooledGrad().getType(), table->getDim(),
                       "pooled_grad", *table);
}

LogicalResult ShardEmbeddingBagUpdateOp::verify() {
  if (getMode() == PoolingMode::mean)
    return emitOpError() << "mode must be sum or max (combine_shards_grad "
                            "finishes mean)";
  return verifyEmbeddingOptimizer(*this, getOptimizer());
}

LogicalResult
ShardEmbeddingBagUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbols, false);
  if (failed(table))
    return failure();
  return verifyColumns(*this, getPooledGrad().getType(),
                       getWidestShardCols(*table), "pooled_grad", *table);
}

LogicalResult CombineShardsGradOp::verify() {
  if (getBagsPerRank() <= 0 || getBagsPerRank() > kMaxBagsPerRank)
    return emitOpError() << "bags_per_rank must be between 1 and "
                         << kMaxBagsPerRank << ", got " << getBagsPerRank();
  return success();
}

LogicalResult
CombineShardsGradOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbols, false);
  if (failed(table))
    return failure();
  if (failed(verifyColumns(*this, getResultGrad().getType(), table->getDim(),
                           "result_grad", *table)))
    return failure();
  return verifyColumns(*this, getReceivedGrad().getType(),
                       getWidestShardCols(*table), "received_grad", *table);
}

LogicalResult
EmbeddingBagGradOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbols, true);
  if (failed(table))
    return failure();
  if (failed(verifyColumns(*this, getPooledGrad().getType(), table->getDim(),
                           "pooled_grad", *table)))
    return failure();
  return verifyTableGradient(*this, getTableGrad().getType(), *table);
}

LogicalResult TableUpdateOp::verify() {
  return verifyEmbeddingOptimizer(*this, getOptimizer());
}

LogicalResult TableUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TableOp> table = lookupTable(*this, getTableAttr(), symbols, true);
  if (failed(table))
    return failure();
  return verifyTableGradient(*this, getTableGrad().getType(), *table);
}

//===----------------------------------------------------------------------===//
// Dense update
//===----------------------------------------------------------------------===//

LogicalResult DenseUpdateOp::verify() {
  if (failed(braid::detail::verifyOptimizerPart(*this, getOptimizer(), "dense",
                                         getDenseOptimizerTypes())))
    return failure();
  RankedTensorType param = getParam().getType();
  if (getNewParam().getType() != param)
    return emitOpError() << "new_param must have the parameter's type "
                         << param;
  auto sameShape = [&](Value value) {
    return cast<RankedTensorType>(value.getType()).getShape() ==
           param.getShape();
  };
  if (!sameShape(getGrad()))
    return emitOpError() << "grad " << getGrad().getType()
                         << " does not have the parameter's shape";
  StringRef type = getOptimizer().getAs<StringAttr>("type").getValue();
  int64_t expected = getDenseOptimizerStateSuffixes(type).size();
  if (int64_t(getState().size()) != expected ||
      int64_t(getNewState().size()) != expected)
    return emitOpError() << type << " keeps " << expected
                         << " state tensor(s), got " << getState().size()
                         << " operand(s) and " << getNewState().size()
                         << " result(s)";
  for (auto [state, next] : llvm::zip(getState(), getNewState()))
    if (!sameShape(state) || state.getType() != next.getType())
      return emitOpError() << "state " << state.getType()
                           << " must have the parameter's shape and its "
                              "result's type";
  return success();
}

LogicalResult FusedDenseUpdateOp::verify() {
  if (failed(braid::detail::verifyOptimizerPart(*this, getOptimizer(), "dense",
                                                getDenseOptimizerTypes())))
    return failure();
  ValueRange params = getParams();
  ArrayRef<int64_t> offsets = getOffsets();
  if (params.empty())
    return emitOpError() << "needs at least one parameter";
  if (offsets.size() != params.size())
    return emitOpError() << "has " << offsets.size() << " offset(s) for "
                         << params.size() << " parameter(s)";
  StringRef type = getOptimizer().getAs<StringAttr>("type").getValue();
  size_t perMember = getDenseOptimizerStateSuffixes(type).size();
  if (getState().size() != perMember * params.size() ||
      getUpdated().size() != params.size() + getState().size())
    return emitOpError() << type << " keeps " << perMember
                         << " state tensor(s) per parameter: " << params.size()
                         << " parameter(s) need " << perMember * params.size()
                         << " state operand(s), and a result for each "
                            "parameter and state; got "
                         << getState().size() << " state operand(s) and "
                         << getUpdated().size() << " result(s)";
  auto grads = cast<RankedTensorType>(getGrads().getType());
  if (grads.isDynamicDim(0))
    return emitOpError() << "grads must have a static size";
  // Each member's elements, [offset, offset + numel), inside the buffer and
  // apart from every other member's.
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (auto [index, param, offset] : llvm::enumerate(params, offsets)) {
    auto paramType = cast<RankedTensorType>(param.getType());
    if (!paramType.hasStaticShape())
      return emitOpError() << "parameter " << index << " " << paramType
                           << " must have a static shape";
    if (getNewParams()[index].getType() != paramType)
      return emitOpError() << "new parameter " << index
                           << " must have the parameter's type " << paramType;
    int64_t size = paramType.getNumElements();
    if (offset < 0 || offset > grads.getDimSize(0) - size)
      return emitOpError() << "parameter " << index << "'s " << size
                           << " gradient element(s) at offset " << offset
                           << " do not lie inside grads " << grads;
    ranges.push_back({offset, offset + size});
    for (size_t k = 0; k < perMember; ++k) {
      Value state = getState()[index * perMember + k];
      if (state.getType() != paramType ||
          getNewState()[index * perMember + k].getType() != paramType)
        return emitOpError() << "state " << k << " of parameter " << index
                             << " and its result must have the parameter's "
                                "type "
                             << paramType;
    }
  }
  llvm::sort(ranges);
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      return emitOpError() << "two parameters' gradients overlap at element "
                           << ranges[i].first;
  return success();
}
