//===- GradientRules.cpp - Each op's gradient rule ------------------------===//
//
// This file attaches GradientOpInterface to every op a forward program
// differentiates through: Braid's compute ops, partitioned lookups and
// collectives, and the arith ops models use. Each rule is the op's adjoint
// in SPMD form: the loss is the sum over ranks of each rank's part, so the
// adjoint of a collective is the collective that moves gradients back
// (all_to_all reversed, all_gather for reduce_scatter and back, all_reduce
// for all_reduce). Lookups end in a fused update of the rows they read.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::braid;

/// The type of `value`'s gradient: its shape in f32.
static RankedTensorType gradientType(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.clone(Float32Type::get(value.getContext()));
}

/// A constant of zeros of `type`.
static Value zerosOf(OpBuilder &b, Location loc, RankedTensorType type) {
  return arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
}

/// Zeros of `type`, its dynamic sizes read off `like` (a value of that
/// shape): a splat, since a constant's shape is static.
static Value zerosShapedLike(OpBuilder &b, Location loc, RankedTensorType type,
                             Value like) {
  Value scalar =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, like, d));
  return tensor::SplatOp::create(b, loc, type, scalar, sizes);
}

namespace {
/// The common shape of a rule: the op, and its `build` filling the operand
/// gradients.
template <typename ConcreteModel, typename OpTy>
struct Rule : GradientOpInterface::ExternalModel<ConcreteModel, OpTy> {};

struct LinearRule : Rule<LinearRule, LinearOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto linear = cast<LinearOp>(op);
    auto grads = LinearGradOp::create(
        b, op->getLoc(), gradientType(linear.getInput()),
        gradientType(linear.getWeight()), gradientType(linear.getBias()),
        linear.getInput(), linear.getWeight(), linear.getResult(),
        resultGrads[0], linear.getActivation());
    operandGrads.assign(
        {grads.getInputGrad(), grads.getWeightGrad(), grads.getBiasGrad()});
    return success();
  }
};

struct InteractionRule : Rule<InteractionRule, InteractionOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto interaction = cast<InteractionOp>(op);
    SmallVector<Type> types;
    for (Value feature : op->getOperands())
      types.push_back(gradientType(feature));
    auto grads = InteractionGradOp::create(
        b, op->getLoc(), types, interaction.getKind(), resultGrads[0],
        interaction.getDense(), interaction.getEmbeddings());
    llvm::append_range(operandGrads, grads.getFeatureGrads());
    return success();
  }
};

/// A lookup of a whole table: a fused update where one rank holds the
/// table's gradient; for a table replicated on several ranks, its gradient,
/// summed over the replicas, then the update.
struct EmbeddingBagRule : Rule<EmbeddingBagRule, EmbeddingBagOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &context,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto bag = cast<EmbeddingBagOp>(op);
    if (bag.getPerSampleWeights())
      return op->emitOpError()
             << "has no gradient rule with per-sample weights yet";
    operandGrads.assign(op->getNumOperands(), Value());
    Location loc = op->getLoc();
    if (context.numRanks == 1) {
      EmbeddingBagUpdateOp::create(b, loc, bag.getTable(),
                                   bag.getIndices(), bag.getOffsets(),
                                   resultGrads[0], bag.getMode(),
                                   context.embeddingOptimizer);
      return success();
    }
    auto table =
        SymbolTable::lookupNearestSymbolFrom<TableOp>(op, bag.getTableAttr());
    auto placement =
        table ? dyn_cast_or_null<DataParallelAttr>(table.getPlacementAttr())
              : DataParallelAttr();
    if (!placement || int64_t(placement.getRanks().size()) != context.numRanks)
      return op->emitOpError()
             << "looks up a whole table in a program on " << context.numRanks
             << " ranks: the table must be data_parallel on all of them";
    auto gradType = RankedTensorType::get(
        {table.getNumRows(), table.getDim()}, b.getF32Type());
    Value local = EmbeddingBagGradOp::create(
        b, loc, gradType, bag.getTable(), bag.getIndices(),
        bag.getOffsets(), resultGrads[0], bag.getMode());
    Value summed = AllReduceOp::create(
        b, loc, gradType, ReductionKind::sum, local,
        ReplicaGroupsAttr::get(b.getContext(), context.numRanks,
                               placement.getRanks()));
    TableUpdateOp::create(b, loc, bag.getTable(), summed,
                          context.embeddingOptimizer);
    return success();
  }
};

struct ShardEmbeddingBagRule
    : Rule<ShardEmbeddingBagRule, ShardEmbeddingBagOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &context,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto bag = cast<ShardEmbeddingBagOp>(op);
    // Row-wise Adagrad averages a row's squared gradient over all its
    // columns, which a shard of some columns does not see.
    auto table =
        SymbolTable::lookupNearestSymbolFrom<TableOp>(op, bag.getTableAttr());
    StringRef type =
        context.embeddingOptimizer.getAs<StringAttr>("type").getValue();
    if (table && table.getPlacementAttr() && type == "rowwise_adagrad" &&
        getWidestShardCols(table) != table.getDim())
      return op->emitOpError()
             << "cannot train table '" << table.getSymName()
             << "' with rowwise_adagrad: its shards hold some of its "
                "columns, and the row's mean squared gradient needs all of "
                "them (not supported yet; use adagrad or sgd, or a sharding "
                "that keeps rows whole)";
    ShardEmbeddingBagUpdateOp::create(
        b, op->getLoc(), bag.getTable(), bag.getValues(),
        bag.getLengths(), resultGrads[0], bag.getMode(),
        context.embeddingOptimizer);
    operandGrads.assign(op->getNumOperands(), Value());
    return success();
  }
};

struct CombineShardsRule : Rule<CombineShardsRule, CombineShardsOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto combine = cast<CombineShardsOp>(op);
    Value grad = CombineShardsGradOp::create(
        b, op->getLoc(), gradientType(combine.getReceived()),
        combine.getTable(), resultGrads[0], combine.getOffsets(),
        combine.getMode(), combine.getBagsPerRank());
    operandGrads.assign({grad, Value()});
    return success();
  }
};

/// all_to_all: the same exchange with senders and receivers swapped.
struct AllToAllRule : Rule<AllToAllRule, AllToAllOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto exchange = cast<AllToAllOp>(op);
    DenseI64ArrayAttr reversed;
    if (auto sizes = exchange.getSplitSizesAttr()) {
      int64_t groupSize = *exchange.getStaticGroupSize();
      SmallVector<int64_t> transposed(sizes.size());
      for (int64_t i = 0; i < groupSize; ++i)
        for (int64_t j = 0; j < groupSize; ++j)
          transposed[j * groupSize + i] = sizes[i * groupSize + j];
      reversed = b.getDenseI64ArrayAttr(transposed);
    }
    Value grad = AllToAllOp::create(
        b, op->getLoc(), gradientType(exchange.getInput()), resultGrads[0],
        exchange.getConcatDim(), exchange.getSplitDim(), reversed,
        exchange.getReplicaGroupsAttr());
    operandGrads.assign({grad});
    return success();
  }
};

/// reduce_scatter sum: every rank's part of the gradient comes back to all
/// contributors (all_gather). For max, only the contributors whose value
/// is the reduced maximum get it.
struct ReduceScatterRule : Rule<ReduceScatterRule, ReduceScatterOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto scatter = cast<ReduceScatterOp>(op);
    ReductionKind kind = scatter.getReduction();
    if (kind != ReductionKind::sum && kind != ReductionKind::max)
      return op->emitOpError() << "has no gradient rule for a "
                               << stringifyReductionKind(kind) << " reduction";
    Location loc = op->getLoc();
    RankedTensorType type = gradientType(scatter.getInput());
    Value grad =
        AllGatherOp::create(b, loc, type, resultGrads[0], scatter.getDim(),
                            scatter.getReplicaGroupsAttr());
    if (kind == ReductionKind::max) {
      if (!scatter.getInput().getType().getElementType().isF32())
        return op->emitOpError() << "has a gradient rule for max of f32 only";
      // The planner never splits a max-pooled table's rows for a training
      // step; a plan that does (forced, given, or the only one that fits)
      // is told what it trains.
      auto lookup = scatter.getInput().getDefiningOp<ShardEmbeddingBagOp>();
      op->emitWarning()
          << "the maximum of row shards"
          << (lookup ? " of table '" + lookup.getTable().str() + "'"
                     : std::string())
          << ": where it is tied across shards, "
             "each tied shard's row gets the gradient, where the global "
             "step gives it to the first row of the bag (docs/design.md, "
             "Known limits); the planner does not split a max-pooled "
             "table's rows for training";
      Value reduced = AllGatherOp::create(b, loc, type, scatter.getResult(),
                                          scatter.getDim(),
                                          scatter.getReplicaGroupsAttr());
      Value isMax = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          scatter.getInput(), reduced);
      Value zero = zerosShapedLike(b, loc, type, grad);
      grad = arith::SelectOp::create(b, loc, isMax, grad, zero);
    }
    operandGrads.assign({grad});
    return success();
  }
};

struct AllGatherRule : Rule<AllGatherRule, AllGatherOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto gather = cast<AllGatherOp>(op);
    operandGrads.assign({ReduceScatterOp::create(
        b, op->getLoc(), gradientType(gather.getInput()), ReductionKind::sum,
        resultGrads[0], gather.getDim(), gather.getReplicaGroupsAttr())});
    return success();
  }
};

struct AllReduceRule : Rule<AllReduceRule, AllReduceOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto reduce = cast<AllReduceOp>(op);
    if (reduce.getReduction() != ReductionKind::sum)
      return op->emitOpError() << "has a gradient rule for sum only";
    operandGrads.assign({AllReduceOp::create(
        b, op->getLoc(), gradientType(reduce.getInput()), ReductionKind::sum,
        resultGrads[0], reduce.getReplicaGroupsAttr())});
    return success();
  }
};

/// Casts between float types pass the (f32) gradient through.
template <typename OpTy>
struct FloatCastRule : Rule<FloatCastRule<OpTy>, OpTy> {
  LogicalResult buildGradients(Operation *, OpBuilder &,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    operandGrads.assign({resultGrads[0]});
    return success();
  }
};

struct AddFRule : Rule<AddFRule, arith::AddFOp> {
  LogicalResult buildGradients(Operation *, OpBuilder &,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    operandGrads.assign({resultGrads[0], resultGrads[0]});
    return success();
  }
};

struct SubFRule : Rule<SubFRule, arith::SubFOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    operandGrads.assign(
        {resultGrads[0],
         arith::NegFOp::create(b, op->getLoc(), resultGrads[0])});
    return success();
  }
};

struct MulFRule : Rule<MulFRule, arith::MulFOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto mul = cast<arith::MulFOp>(op);
    if (!getElementTypeOrSelf(mul.getType()).isF32())
      return op->emitOpError() << "has a gradient rule for f32 only";
    Location loc = op->getLoc();
    operandGrads.assign(
        {arith::MulFOp::create(b, loc, resultGrads[0], mul.getRhs()),
         arith::MulFOp::create(b, loc, resultGrads[0], mul.getLhs())});
    return success();
  }
};
/// A scalar condition picks one operand; its gradient goes back there.
struct SelectRule : Rule<SelectRule, arith::SelectOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto select = cast<arith::SelectOp>(op);
    if (isa<ShapedType>(select.getCondition().getType()))
      return op->emitOpError() << "has a gradient rule for a scalar "
                                  "condition only";
    Location loc = op->getLoc();
    auto type = cast<RankedTensorType>(resultGrads[0].getType());
    Value zeros = type.hasStaticShape()
                      ? zerosOf(b, loc, type)
                      : zerosShapedLike(b, loc, type, resultGrads[0]);
    Value condition = select.getCondition();
    operandGrads.assign(
        {Value(),
         arith::SelectOp::create(b, loc, condition, resultGrads[0], zeros),
         arith::SelectOp::create(b, loc, condition, zeros, resultGrads[0])});
    return success();
  }
};

/// A slice's gradient is the whole source's, zero outside the slice.
struct ExtractSliceRule : Rule<ExtractSliceRule, tensor::ExtractSliceOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    RankedTensorType type = gradientType(slice.getSource());
    if (!type.hasStaticShape())
      return op->emitOpError() << "has a gradient rule for a static source "
                                  "only";
    Location loc = op->getLoc();
    Value grad = tensor::InsertSliceOp::create(
        b, loc, resultGrads[0], zerosOf(b, loc, type), slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = grad;
    return success();
  }
};

/// An inserted block's gradient is the result's gradient over the block;
/// the destination's is the result's outside it (none for a constant
/// destination, such as the zeros a column-parallel layer's block is set
/// among).
struct InsertSliceRule : Rule<InsertSliceRule, tensor::InsertSliceOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads, const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    Location loc = op->getLoc();
    RankedTensorType sourceType = gradientType(insert.getSource());
    Value sourceGrad = tensor::ExtractSliceOp::create(
        b, loc, sourceType, resultGrads[0], insert.getMixedOffsets(),
        insert.getMixedSizes(), insert.getMixedStrides());
    operandGrads.assign(op->getNumOperands(), Value());
    operandGrads[0] = sourceGrad;
    if (!matchPattern(insert.getDest(), m_Constant()))
      operandGrads[1] = tensor::InsertSliceOp::create(
          b, loc, zerosShapedLike(b, loc, sourceType, sourceGrad),
          resultGrads[0], insert.getMixedOffsets(), insert.getMixedSizes(),
          insert.getMixedStrides());
    return success();
  }
};

/// A cast's gradient is cast back to the source's type.
struct CastRule : Rule<CastRule, tensor::CastOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ValueRange resultGrads,
                               const GradientContext &,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto cast = llvm::cast<tensor::CastOp>(op);
    operandGrads.assign({tensor::CastOp::create(
        b, op->getLoc(), gradientType(cast.getSource()), resultGrads[0])});
    return success();
  }
};
} // namespace

void mlir::braid::registerGradientRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, BraidDialect *) {
    LinearOp::attachInterface<LinearRule>(*context);
    InteractionOp::attachInterface<InteractionRule>(*context);
    EmbeddingBagOp::attachInterface<EmbeddingBagRule>(*context);
    ShardEmbeddingBagOp::attachInterface<ShardEmbeddingBagRule>(*context);
    CombineShardsOp::attachInterface<CombineShardsRule>(*context);
    AllToAllOp::attachInterface<AllToAllRule>(*context);
    ReduceScatterOp::attachInterface<ReduceScatterRule>(*context);
    AllGatherOp::attachInterface<AllGatherRule>(*context);
    AllReduceOp::attachInterface<AllReduceRule>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    arith::AddFOp::attachInterface<AddFRule>(*context);
    arith::SubFOp::attachInterface<SubFRule>(*context);
    arith::MulFOp::attachInterface<MulFRule>(*context);
    arith::ExtFOp::attachInterface<FloatCastRule<arith::ExtFOp>>(*context);
    arith::TruncFOp::attachInterface<FloatCastRule<arith::TruncFOp>>(*context);
    arith::SelectOp::attachInterface<SelectRule>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::ExtractSliceOp::attachInterface<ExtractSliceRule>(*context);
    tensor::InsertSliceOp::attachInterface<InsertSliceRule>(*context);
    tensor::CastOp::attachInterface<CastRule>(*context);
  });
}
