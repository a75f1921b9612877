//===- SplitFeatureGemm.cpp - A GEMM's early features beside an exchange --===//
//
// This file implements braid-split-feature-gemm. A dense layer that reads a
// `cat` interaction multiplies every feature column by its columns of the
// weight, and its output is the sum over the features. Some features are
// computed on the rank (the bottom MLP, data-parallel tables); the others
// arrive in an exchange. The pass splits the layer into a GEMM over the
// features already there, placed as soon as they are, and a GEMM over the
// rest, with the bias, where the layer stood; their sum is the layer's
// output. The first GEMM then runs while the exchange is in flight. The
// rewrite lands where the simulator predicts the function faster.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDSPLITFEATUREGEMMPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// Whether `value` is computed, in `block`, from data that arrives in an
/// exchange: a collective's result, started (then from its braid.wait,
/// which is added to `waits`) or not.
static bool collectWaitsBehind(Value value, Block &block,
                               llvm::SmallSetVector<Operation *, 8> &waits) {
  llvm::SmallPtrSet<Operation *, 32> seen;
  SmallVector<Value> work = {value};
  bool found = false;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def)
      continue;
    Operation *inBlock = block.findAncestorOpInBlock(*def);
    if (!inBlock || !seen.insert(inBlock).second)
      continue;
    if (isa<WaitOp>(inBlock))
      waits.insert(inBlock);
    if (isa<WaitOp, CollectiveOpInterface, AllToAllVOp>(inBlock))
      found = true;
    llvm::append_range(work, inBlock->getOperands());
  }
  return found;
}

namespace {
/// A data-parallel layer without an activation over a `cat` interaction,
/// with the interaction's operands (the dense features first) split into
/// those computed on the rank and those that arrive in an exchange.
struct FeatureSplit {
  LinearOp linear;
  InteractionOp interaction;
  /// (operand, its first column) for each side, in column order.
  SmallVector<std::pair<Value, int64_t>> early, late;
  /// The waits the late features are computed from that come after the
  /// early features are: where the rank may idle for an exchange. The
  /// last kMaxPlaces of them, in block order.
  SmallVector<Operation *> waits;
  /// The last op that computes an early feature or the weight (null: all
  /// are arguments).
  Operation *earlyReady = nullptr;
};

/// The most waits the early GEMM is tried before.
constexpr size_t kMaxPlaces = 4;
} // namespace

/// The last op of `block` that computes one of `values`; null when all are
/// arguments.
static Operation *lastDefinition(Block &block, ArrayRef<Value> values) {
  Operation *latest = nullptr;
  for (Value value : values)
    if (Operation *def = value.getDefiningOp())
      if (Operation *inBlock = block.findAncestorOpInBlock(*def))
        if (!latest || latest->isBeforeInBlock(inBlock))
          latest = inBlock;
  return latest;
}

/// The split of `linear`, when it applies: its input is a `cat`
/// interaction of static widths, it adds no activation, it is
/// data-parallel, and the interaction has operands on both sides.
static std::optional<FeatureSplit> featureSplitOf(LinearOp linear) {
  auto interaction = linear.getInput().getDefiningOp<InteractionOp>();
  if (!interaction || interaction.getKind() != InteractionKind::cat ||
      linear.getActivation() != Activation::none ||
      interaction->getBlock() != linear->getBlock())
    return std::nullopt;
  if (DensePlacementAttr placement = linear.getPlacementAttr();
      placement &&
      placement.getParallelism() != DenseParallelism::data_parallel)
    return std::nullopt;
  auto weight = cast<RankedTensorType>(linear.getWeight().getType());
  auto bias = cast<RankedTensorType>(linear.getBias().getType());
  if (!weight.hasStaticShape() || !bias.hasStaticShape())
    return std::nullopt;
  // In f32 the two GEMMs' sum differs from the one GEMM's by the order of
  // its additions alone; in a narrower type each part would be rounded to
  // it before the sum (about one bf16 ulp).
  if (!cast<RankedTensorType>(linear.getType()).getElementType().isF32())
    return std::nullopt;
  FeatureSplit split{linear, interaction, {}, {}, {}};
  Block &block = *linear->getBlock();
  int64_t column = 0;
  llvm::SmallSetVector<Operation *, 8> waits;
  for (Value operand : interaction->getOperands()) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getRank() != 2 || type.isDynamicDim(1))
      return std::nullopt;
    bool late = collectWaitsBehind(operand, block, waits);
    (late ? split.late : split.early).push_back({operand, column});
    column += type.getDimSize(1);
  }
  if (split.early.empty() || split.late.empty() ||
      column != weight.getDimSize(1))
    return std::nullopt;
  SmallVector<Value> earlyValues = {linear.getWeight()};
  for (auto [feature, first] : split.early)
    earlyValues.push_back(feature);
  split.earlyReady = lastDefinition(block, earlyValues);
  Operation *latest = split.earlyReady;
  for (Operation *wait : waits)
    if (!latest || latest->isBeforeInBlock(wait))
      split.waits.push_back(wait);
  llvm::sort(split.waits, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  if (split.waits.size() > kMaxPlaces)
    split.waits.erase(split.waits.begin(),
                      split.waits.end() - kMaxPlaces);
  return split;
}

/// The side's features side by side, and its columns of the weight (the
/// columns of each feature, in the same order).
static std::pair<Value, Value>
gatherSide(OpBuilder &b, Location loc, Value weight,
           ArrayRef<std::pair<Value, int64_t>> side) {
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t out = weightType.getDimSize(0);
  SmallVector<Value> features, columns;
  int64_t width = 0;
  for (auto [feature, first] : side) {
    int64_t cols = cast<RankedTensorType>(feature.getType()).getDimSize(1);
    features.push_back(feature);
    columns.push_back(tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({out, cols}, weightType.getElementType()),
        weight,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(first)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(out), b.getIndexAttr(cols)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)}));
    width += cols;
  }
  auto sideBy = [&](ArrayRef<Value> pieces, int64_t rows) -> Value {
    if (pieces.size() == 1)
      return pieces.front();
    auto element = cast<RankedTensorType>(pieces.front().getType())
                       .getElementType();
    return tensor::ConcatOp::create(
        b, loc, RankedTensorType::get({rows, width}, element),
        /*dim=*/1, pieces);
  };
  // The features' rows: static only when every feature's are.
  int64_t rows = ShapedType::kDynamic;
  auto first = cast<RankedTensorType>(side.front().first.getType());
  if (!first.isDynamicDim(0) &&
      llvm::all_of(side, [&](const std::pair<Value, int64_t> &entry) {
        return cast<RankedTensorType>(entry.first.getType()).getDimSize(0) ==
               first.getDimSize(0);
      }))
    rows = first.getDimSize(0);
  return {sideBy(features, rows), sideBy(columns, out)};
}

/// Splits the layer: the early features' GEMM just before the split's
/// wait number `place`, or, with none, right after the early features are
/// computed; the late features' GEMM (with the bias) and the sum where the
/// layer was. The interaction stays for its other readers.
static void splitLayer(const FeatureSplit &split,
                       std::optional<size_t> place) {
  LinearOp linear = split.linear;
  InteractionOp interaction = split.interaction;
  Location loc = linear.getLoc();
  auto resultType = cast<RankedTensorType>(linear.getResult().getType());
  auto biasType = cast<RankedTensorType>(linear.getBias().getType());

  OpBuilder b(linear.getContext());
  if (place)
    b.setInsertionPoint(split.waits[*place]);
  else if (split.earlyReady)
    b.setInsertionPointAfter(split.earlyReady);
  else
    b.setInsertionPointToStart(linear->getBlock());
  auto [earlyInput, earlyWeight] =
      gatherSide(b, loc, linear.getWeight(), split.early);
  Value zeros = arith::ConstantOp::create(
      b, loc, biasType,
      DenseElementsAttr::get(biasType,
                             b.getZeroAttr(biasType.getElementType())));
  auto early = LinearOp::create(b, loc, resultType, earlyInput, earlyWeight,
                                zeros, Activation::none,
                                linear.getPlacementAttr());
  early->setAttr(BraidDialect::kFeaturePartAttrName,
                 b.getStringAttr("early"));

  b.setInsertionPoint(linear);
  auto [lateInput, lateWeight] =
      gatherSide(b, loc, linear.getWeight(), split.late);
  auto late = LinearOp::create(b, loc, resultType, lateInput, lateWeight,
                               linear.getBias(), Activation::none,
                               linear.getPlacementAttr());
  late->setAttr(BraidDialect::kFeaturePartAttrName, b.getStringAttr("late"));
  Value sum = arith::AddFOp::create(b, loc, early, late);
  linear.getResult().replaceAllUsesWith(sum);
  linear.erase();
  if (interaction->use_empty())
    interaction->erase();
}

/// Whether `op` is a layer this pass splits.
static bool isSplittable(Operation &op) {
  auto linear = dyn_cast<LinearOp>(op);
  return linear && featureSplitOf(linear);
}

namespace {
struct BraidSplitFeatureGemmPass
    : public braid::impl::BraidSplitFeatureGemmPassBase<
          BraidSplitFeatureGemmPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      // The early GEMM before each wait the rank may idle at, or right
      // after its features: the simulator keeps the fastest (with `force`,
      // the first, before the earliest such wait).
      auto alternativesAt = [&](int64_t position) {
        auto splitAt =
            [position](std::optional<size_t> place) -> FunctionRewrite {
          return [=](func::FuncOp copy) -> FailureOr<bool> {
            auto linear = dyn_cast_or_null<LinearOp>(opAt(copy, position));
            if (!linear)
              return false;
            std::optional<FeatureSplit> split = featureSplitOf(linear);
            if (!split || (place && *place >= split->waits.size()))
              return false;
            splitLayer(*split, place);
            return true;
          };
        };
        SmallVector<FunctionRewrite> alternatives;
        size_t places = 0;
        if (auto linear = dyn_cast_or_null<LinearOp>(opAt(func, position)))
          if (std::optional<FeatureSplit> split = featureSplitOf(linear))
            places = split->waits.size();
        for (size_t place = 0; place < places; ++place)
          alternatives.push_back(splitAt(place));
        alternatives.push_back(splitAt(std::nullopt));
        return alternatives;
      };
      auto record = [&](int64_t, RewriteOutcome outcome) {
        ++(outcome == RewriteOutcome::applied ? numSplit : numRejected);
      };
      auto candidates = [](Block &block) {
        return positionsWhere(block, isSplittable);
      };
      if (failed(rewriteEachCandidate(func, *predictor, force, candidates,
                                      alternativesAt, record)))
        return signalPassFailure();
    }
  }
};
} // namespace
