//===- DenseKernels.cpp - Target-neutral dense kernels --------------------===//
//
// This file builds the dense layer (a linalg contraction, then bias and
// activation) on tensors and the DLRM feature interaction (cat or dot, a
// forall over the samples writing a buffer), for every target.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/DenseKernels.h"

#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Conversion/BraidToLoops/KernelNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::braid;

/// The type a kernel over `element` values sums in: f64 for 16-bit floats,
/// which the reference semantics sums in f64 and rounds once (summed in
/// their own type, a 64-wide f16 layer was 3e-3 off it, bf16 9e-3), the
/// element type otherwise.
static Type accumulatorTypeOf(Type element) {
  return element.isF16() || element.isBF16()
             ? Type(Float64Type::get(element.getContext()))
             : element;
}

/// `value` (a scalar or vector of floats) as `type`'s float type, widened
/// or narrowed as needed.
static Value castFloat(OpBuilder &b, Location loc, Value value, Type type) {
  Type from = getElementTypeOrSelf(value.getType());
  Type to = getElementTypeOrSelf(type);
  if (from == to)
    return value;
  auto withElement = [&](Type element) -> Type {
    if (auto vector = dyn_cast<VectorType>(value.getType()))
      return vector.clone(element);
    return element;
  };
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, withElement(to), value);
  // f64 to bf16 goes through f32: the runtime libraries have no
  // __truncdfbf2 (rounding twice differs from once only where the f32 lands
  // on a bf16 tie, about one value in 2^29).
  if (to.isBF16() && from.isF64())
    value = arith::TruncFOp::create(b, loc, withElement(b.getF32Type()), value);
  return arith::TruncFOp::create(b, loc, withElement(to), value);
}

Value mlir::braid::buildLinearKernel(OpBuilder &b, LinearOp linear) {
  Location loc = linear.getLoc();
  auto resultType = cast<RankedTensorType>(linear.getResult().getType());
  Type element = resultType.getElementType();
  // Summed, biased and activated in the accumulator's type, rounded once.
  Type acc = accumulatorTypeOf(element);
  auto accType = resultType.clone(acc);
  Value input = linear.getInput();
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(
        tensor::DimOp::create(b, loc, input, 0).getResult());
  Value empty =
      tensor::EmptyOp::create(b, loc, accType, dynamicSizes).getResult();
  Value zero =
      arith::ConstantOp::create(b, loc, acc, b.getFloatAttr(acc, 0.0));
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  MLIRContext *ctx = b.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto maps = SmallVector<AffineMap>{
      AffineMap::get(3, 0, {m, k}, ctx), AffineMap::get(3, 0, {n, k}, ctx),
      AffineMap::get(3, 0, {m, n}, ctx)};
  SmallVector<utils::IteratorType> iterators = {
      utils::IteratorType::parallel, utils::IteratorType::parallel,
      utils::IteratorType::reduction};
  auto contraction = linalg::GenericOp::create(
      b, loc, accType, ValueRange{input, linear.getWeight()},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = arith::MulFOp::create(
            nb, nloc, castFloat(nb, nloc, args[0], acc),
            castFloat(nb, nloc, args[1], acc));
        linalg::YieldOp::create(nb, nloc,
                                arith::AddFOp::create(nb, nloc, args[2], product)
                                    .getResult());
      });
  AffineExpr i, j;
  bindDims(ctx, i, j);
  auto epilogueMaps = SmallVector<AffineMap>{
      AffineMap::get(2, 0, {j}, ctx), AffineMap::get(2, 0, {i, j}, ctx)};
  Activation activation = linear.getActivation();
  // In place when the accumulator is the element type; into a tensor of
  // the result's type when it is wider.
  Value epilogueInit =
      acc == element
          ? contraction.getResult(0)
          : tensor::EmptyOp::create(b, loc, resultType, dynamicSizes)
                .getResult();
  SmallVector<Value> epilogueInputs = {linear.getBias()};
  if (acc != element) {
    epilogueMaps.insert(epilogueMaps.begin() + 1,
                        AffineMap::get(2, 0, {i, j}, ctx));
    epilogueInputs.push_back(contraction.getResult(0));
  }
  auto epilogue = linalg::GenericOp::create(
      b, loc, resultType, epilogueInputs, ValueRange{epilogueInit},
      epilogueMaps,
      {utils::IteratorType::parallel, utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // args: the bias, the sum (the output itself when in place).
        Value value = arith::AddFOp::create(nb, nloc, args[1],
                                            castFloat(nb, nloc, args[0], acc));
        Value zeroValue =
            arith::ConstantOp::create(nb, nloc, acc, nb.getFloatAttr(acc, 0.0));
        if (activation == Activation::relu) {
          value = arith::MaximumFOp::create(nb, nloc, value, zeroValue);
        } else if (activation == Activation::sigmoid) {
          Value one = arith::ConstantOp::create(nb, nloc, acc,
                                                nb.getFloatAttr(acc, 1.0));
          Value negated = arith::NegFOp::create(nb, nloc, value);
          Value exp = math::ExpOp::create(nb, nloc, negated);
          value = arith::DivFOp::create(
              nb, nloc, one, arith::AddFOp::create(nb, nloc, one, exp));
        }
        linalg::YieldOp::create(nb, nloc, castFloat(nb, nloc, value, element));
      });
  return epilogue.getResult(0);
}

/// g = dy * act'(y) for relu (its mask) or sigmoid (y (1 - y) in f64, as
/// the reference rounds it) over the [B, out] elements as one dimension: a
/// GPU target maps a 1-D parallel loop onto blocks of threads, adjacent
/// threads on adjacent elements; the reshapes are views of the same
/// contiguous buffers.
static Value buildPreActivationGrad(OpBuilder &b, Location loc,
                                    Value resultGrad, Value result,
                                    Activation activation) {
  auto resultType = cast<RankedTensorType>(resultGrad.getType());
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  auto flatType = RankedTensorType::get(
      {resultType.hasStaticShape() ? resultType.getNumElements()
                                   : ShapedType::kDynamic},
      f32);
  SmallVector<ReassociationIndices> groups = {{0, 1}};
  Value flatGrad =
      tensor::CollapseShapeOp::create(b, loc, flatType, resultGrad, groups);
  Value flatResult =
      tensor::CollapseShapeOp::create(b, loc, flatType, result, groups);
  SmallVector<Value> dynamic;
  if (flatType.isDynamicDim(0))
    dynamic.push_back(tensor::DimOp::create(b, loc, flatGrad, 0));
  Value empty = tensor::EmptyOp::create(b, loc, flatType, dynamic);
  SmallVector<AffineMap> maps(3, b.getMultiDimIdentityMap(1));
  auto pointwise = linalg::GenericOp::create(
      b, loc, TypeRange{flatType}, ValueRange{flatGrad, flatResult},
      ValueRange{empty}, maps, {utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value grad = args[0], value = args[1];
        if (activation == Activation::relu) {
          Value zero = arith::ConstantOp::create(nb, nloc, f32,
                                                 nb.getFloatAttr(f32, 0.0));
          Value positive = arith::CmpFOp::create(
              nb, nloc, arith::CmpFPredicate::OGT, value, zero);
          grad = arith::SelectOp::create(nb, nloc, positive, grad, zero);
        } else {
          // (dy * y) * (1 - y) in f64, rounded once.
          Value wideGrad = arith::ExtFOp::create(nb, nloc, f64, grad);
          Value wideValue = arith::ExtFOp::create(nb, nloc, f64, value);
          Value one = arith::ConstantOp::create(nb, nloc, f64,
                                                nb.getFloatAttr(f64, 1.0));
          Value product = arith::MulFOp::create(nb, nloc, wideGrad, wideValue);
          Value complement = arith::SubFOp::create(nb, nloc, one, wideValue);
          Value scaled = arith::MulFOp::create(nb, nloc, product, complement);
          grad = arith::TruncFOp::create(nb, nloc, f32, scaled);
        }
        linalg::YieldOp::create(nb, nloc, grad);
      });
  return tensor::ExpandShapeOp::create(b, loc, resultType,
                                       pointwise.getResult(0), groups,
                                       tensor::getMixedSizes(b, loc,
                                                             resultGrad));
}

std::pair<Value, Value>
mlir::braid::buildLinearGradPointwise(OpBuilder &b, LinearGradOp op,
                                      int64_t biasColumns) {
  Location opLoc = op.getLoc();
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  // Without an activation g is the result's gradient itself.
  Activation activation = op.getActivation();
  Value g = activation == Activation::none
                ? op.getResultGrad()
                : buildPreActivationGrad(
                      b,
                      withKernelSuffix(opLoc,
                                       stringifyActivation(activation)),
                      op.getResultGrad(), op.getResult(), activation);
  if (op.getBiasGrad().use_empty())
    return {g, Value()};
  Location loc = withKernelSuffix(opLoc, "bias");

  // db[o]: the batch summed in order in f64, `biasColumns` adjacent columns
  // per iteration, read as one vector of a row of g and summed into a
  // vector of f64 accumulators: each column's sum is the same, in the same
  // order, whatever the width; a wider one keeps that many independent
  // additions in flight (one column's chain of dependent f64 additions is
  // latency-bound) and reads rows contiguously.
  auto biasType = cast<RankedTensorType>(op.getBiasGrad().getType());
  auto gType = cast<RankedTensorType>(g.getType());
  // No wider than a narrow layer's columns (rounded up to a power of two).
  if (!gType.isDynamicDim(1))
    biasColumns = std::min<int64_t>(
        biasColumns, int64_t(llvm::PowerOf2Ceil(
                         uint64_t(std::max<int64_t>(1, gType.getDimSize(1))))));
  biasColumns = std::max<int64_t>(1, biasColumns);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value width = arith::ConstantIndexOp::create(b, loc, biasColumns);
  Value batch = tensor::DimOp::create(b, loc, g, 0);
  Value columns = tensor::DimOp::create(b, loc, g, 1);
  Value gBuffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(gType.getShape(), gType.getElementType()), g,
      /*read_only=*/b.getUnitAttr());
  SmallVector<Value> biasSizes;
  if (biasType.isDynamicDim(0))
    biasSizes.push_back(columns);
  Value out = memref::AllocOp::create(
      b, loc, MemRefType::get(biasType.getShape(), f32), biasSizes);
  Value blocks = arith::DivUIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, columns,
          arith::ConstantIndexOp::create(b, loc, biasColumns - 1)),
      width);
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{OpFoldResult(blocks)}, ValueRange{},
      /*mapping=*/std::nullopt);
  OpBuilder body = OpBuilder::atBlockBegin(forall.getBody());
  Value first =
      arith::MulIOp::create(body, loc, forall.getInductionVar(0), width);
  auto wideType = VectorType::get({biasColumns}, f64);
  auto narrowType = VectorType::get({biasColumns}, f32);
  Value zero = arith::ConstantOp::create(
      body, loc, wideType,
      DenseElementsAttr::get(wideType, body.getFloatAttr(f64, 0.0)));
  Value padding =
      arith::ConstantOp::create(body, loc, f32, body.getFloatAttr(f32, 0.0));
  // The last block may pass the columns' end: its reads give 0 there and
  // its write stops at the end (transfers not in bounds).
  bool inBounds = !gType.isDynamicDim(1) &&
                  gType.getDimSize(1) % biasColumns == 0;
  auto sum = scf::ForOp::create(
      body, loc, c0, batch, c1, ValueRange{zero},
      [&](OpBuilder &lb, Location lloc, Value row, ValueRange acc) {
        Value element = vector::TransferReadOp::create(
            lb, lloc, narrowType, gBuffer, ValueRange{row, first}, padding,
            ArrayRef<bool>{inBounds});
        Value wide = arith::ExtFOp::create(lb, lloc, wideType, element);
        scf::YieldOp::create(
            lb, lloc, arith::AddFOp::create(lb, lloc, acc[0], wide).getResult());
      });
  Value narrow =
      arith::TruncFOp::create(body, loc, narrowType, sum.getResult(0));
  vector::TransferWriteOp::create(body, loc, narrow, out, ValueRange{first},
                                  ArrayRef<bool>{inBounds});
  Value biasGrad = bufferization::ToTensorOp::create(b, loc, biasType, out,
                                                     /*restrict=*/true,
                                                     /*writable=*/true);
  return {g, biasGrad};
}

/// Copies columns [srcColumn, srcColumn + width) of every row of `src` to
/// columns [dstColumn, dstColumn + width) of `dst` as one 2-D loop over
/// (row, group of `lanes` columns), `lanes` dividing `width`; both buffers
/// hold one element type (a cat's result its features', a cat gradient's
/// parts the f32 result gradient's). On a GPU the loop's flattening puts
/// consecutive groups of a row on consecutive threads.
static void emitLaneCopy(OpBuilder &b, Location loc, Value src,
                         int64_t srcColumn, Value dst, int64_t dstColumn,
                         int64_t width, Value rows, int64_t lanes) {
  Type element = cast<MemRefType>(src.getType()).getElementType();
  assert(element == cast<MemRefType>(dst.getType()).getElementType() &&
         "a lane copy moves one element type");
  Value groups = arith::ConstantIndexOp::create(b, loc, width / lanes);
  auto copy = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{OpFoldResult(rows), groups},
      ValueRange{}, /*mapping=*/std::nullopt);
  OpBuilder body = OpBuilder::atBlockBegin(copy.getBody());
  Value row = copy.getInductionVar(0);
  Value first =
      arith::MulIOp::create(body, loc, copy.getInductionVar(1),
                            arith::ConstantIndexOp::create(body, loc, lanes));
  auto at = [&](int64_t column) -> Value {
    return arith::AddIOp::create(
        body, loc, first, arith::ConstantIndexOp::create(body, loc, column));
  };
  Value padding = arith::ConstantOp::create(body, loc, element,
                                            body.getFloatAttr(element, 0.0));
  Value vector = vector::TransferReadOp::create(
      body, loc, VectorType::get({lanes}, element), src,
      ValueRange{row, at(srcColumn)}, padding, ArrayRef<bool>{true});
  vector::TransferWriteOp::create(body, loc, vector, dst,
                                  ValueRange{row, at(dstColumn)},
                                  ArrayRef<bool>{true});
}

FailureOr<Value>
mlir::braid::buildInteractionKernel(OpBuilder &b, InteractionOp interaction,
                                   func::FuncOp rowsError, int64_t catLanes) {
  Location loc = interaction.getLoc();
  auto resultType = cast<RankedTensorType>(interaction.getResult().getType());
  Type element = resultType.getElementType();
  SmallVector<Value> features = {interaction.getDense()};
  llvm::append_range(features, interaction.getEmbeddings());
  for (Value feature : features)
    if (cast<RankedTensorType>(feature.getType()).isDynamicDim(1))
      return interaction.emitError()
             << "the CPU backend needs features of static width";
  // One forall iteration per sample: its features are read as vectors
  // once, straight from the operands' buffers (no concatenated copy), and
  // its result row is written once, into a buffer the result tensor then
  // wraps. Buffers rather than a chain of tensor writes: a thousand-table
  // cat would otherwise give one-shot bufferization a thousand aliasing
  // writes to check pairwise (minutes of compile time).
  Value rows = tensor::DimOp::create(b, loc, interaction.getDense(), 0);
  // Every feature's rows are read at the dense features' indices.
  emitSameRowsCheck(b, loc, rowsError, interaction.getEmbeddings(), rows);
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(rows);
  Value out = memref::AllocOp::create(
      b, loc, MemRefType::get(resultType.getShape(), element), dynamicSizes);
  SmallVector<Value> featureBuffers;
  for (Value feature : features) {
    auto type = cast<RankedTensorType>(feature.getType());
    featureBuffers.push_back(bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()),
        feature, /*read_only=*/b.getUnitAttr()));
  }
  auto wrap = [&]() -> Value {
    return bufferization::ToTensorOp::create(b, loc, resultType, out,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  };
  auto widthOf = [](Value buffer) {
    return cast<MemRefType>(buffer.getType()).getDimSize(1);
  };
  if (interaction.getKind() == InteractionKind::cat && catLanes > 0 &&
      llvm::all_of(featureBuffers, [&](Value feature) {
        return widthOf(feature) % catLanes == 0;
      })) {
    // One 2-D loop per feature over (sample, group of catLanes columns):
    // flattened for a GPU, consecutive threads copy consecutive groups of
    // one row, so a warp's loads and stores are contiguous. A copy: the
    // bytes are the same whatever the loop's shape.
    int64_t column = 0;
    for (Value feature : featureBuffers) {
      emitLaneCopy(b, loc, feature, 0, out, column, widthOf(feature), rows,
                   catLanes);
      column += widthOf(feature);
    }
    return wrap();
  }
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{OpFoldResult(rows)}, ValueRange{},
      /*mapping=*/std::nullopt);
  OpBuilder body = OpBuilder::atBlockBegin(forall.getBody());
  Value row = forall.getInductionVar(0);
  Value c0 = arith::ConstantIndexOp::create(body, loc, 0);
  auto write = [&](Value vector, int64_t column) {
    vector::TransferWriteOp::create(
        body, loc, vector, out,
        ValueRange{row, arith::ConstantIndexOp::create(body, loc, column)},
        ArrayRef<bool>{true});
  };
  Value padding = arith::ConstantOp::create(body, loc, element,
                                            body.getFloatAttr(element, 0.0));
  auto read = [&](Value feature) -> Value {
    auto type = VectorType::get(
        {cast<MemRefType>(feature.getType()).getDimSize(1)}, element);
    return vector::TransferReadOp::create(body, loc, type, feature,
                                          ValueRange{row, c0}, padding,
                                          ArrayRef<bool>{true});
  };
  if (interaction.getKind() == InteractionKind::cat) {
    // Each feature is written as soon as it is read, so one feature's row
    // is live at a time (a GPU thread holding all 27 rows of 128 lanes of
    // a DCNv2 sample would spill).
    int64_t column = 0;
    for (Value feature : featureBuffers) {
      Value vector = read(feature);
      write(vector, column);
      column += cast<VectorType>(vector.getType()).getDimSize(0);
    }
  } else {
    SmallVector<Value> vectors;
    for (Value feature : featureBuffers)
      vectors.push_back(read(feature));
    // dot: columns [0, d) are the dense vector; column d + p is the dot
    // product of the p-th pair (i, k), i > k, in row-major order.
    write(vectors[0], 0);
    SmallVector<Value> products;
    // 16-bit features multiply and sum in f64 and round once, as the
    // reference semantics does (in their own type a pair's dot product was
    // 5e-4 off it).
    Type acc = accumulatorTypeOf(element);
    for (size_t i = 1; i < vectors.size(); ++i)
      for (size_t k = 0; k < i; ++k)
        products.push_back(castFloat(
            body, loc,
            vector::ReductionOp::create(
                body, loc, vector::CombiningKind::ADD,
                arith::MulFOp::create(body, loc,
                                      castFloat(body, loc, vectors[i], acc),
                                      castFloat(body, loc, vectors[k], acc))),
            element));
    if (!products.empty())
      write(vector::FromElementsOp::create(
                body, loc,
                VectorType::get({int64_t(products.size())}, element),
                products),
            cast<VectorType>(vectors[0].getType()).getDimSize(0));
  }
  return wrap();
}

/// Columns of a dot interaction's feature gradient one block of its kernel
/// accumulates: 16 doubles are 4 AVX2 registers, so the accumulator and a
/// widened operand stay in registers.
static constexpr int64_t kGradColumns = 16;

FailureOr<SmallVector<Value>>
mlir::braid::buildInteractionGradKernel(OpBuilder &b, InteractionGradOp op,
                                       func::FuncOp rowsError,
                                       int64_t catLanes) {
  Location loc = op.getLoc();
  SmallVector<Value> features = {op.getDense()};
  llvm::append_range(features, op.getEmbeddings());
  Type f32 = b.getF32Type();
  SmallVector<int64_t> widths;
  for (Value feature : features) {
    int64_t width = cast<RankedTensorType>(feature.getType()).getDimSize(1);
    if (ShapedType::isDynamic(width))
      return op.emitError() << "the CPU backend needs features of static "
                               "width";
    widths.push_back(width);
  }
  bool dot = op.getKind() == InteractionKind::dot;
  if (!dot && op.getKind() != InteractionKind::cat)
    return op.emitError() << "the CPU backend builds the gradients of cat and "
                             "dot interactions";
  // Like the forward kernel: one forall iteration per sample reads the
  // result's gradient row (and for dot the sample's features) as vectors
  // and writes each feature's gradient row once, into buffers the results
  // then wrap; no concatenated copy of the features.
  Value rows = tensor::DimOp::create(b, loc, op.getResultGrad(), 0);
  emitSameRowsCheck(b, loc, rowsError, features, rows);
  auto readOnly = [&](Value tensor) -> Value {
    auto type = cast<RankedTensorType>(tensor.getType());
    return bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
        /*read_only=*/b.getUnitAttr());
  };
  Value dy = readOnly(op.getResultGrad());
  SmallVector<Value> featureBuffers, outs;
  for (auto [feature, result] : llvm::zip(features, op.getFeatureGrads())) {
    if (dot)
      featureBuffers.push_back(readOnly(feature));
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<Value> dynamicSizes;
    if (type.isDynamicDim(0))
      dynamicSizes.push_back(rows);
    outs.push_back(memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), f32), dynamicSizes));
  }
  auto wrap = [&]() {
    SmallVector<Value> results;
    for (auto [out, result] : llvm::zip(outs, op.getFeatureGrads()))
      results.push_back(bufferization::ToTensorOp::create(
          b, loc, result.getType(), out, /*restrict=*/true,
          /*writable=*/true));
    return results;
  };
  if (!dot && catLanes > 0 && llvm::all_of(widths, [&](int64_t width) {
        return width % catLanes == 0;
      })) {
    // cat with catLanes: each feature's gradient is its columns of the
    // result's gradient, copied by a 2-D loop of its own, as the forward
    // cat writes them.
    int64_t column = 0;
    for (auto [width, out] : llvm::zip(widths, outs)) {
      emitLaneCopy(b, loc, dy, column, out, 0, width, rows, catLanes);
      column += width;
    }
    return wrap();
  }
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{OpFoldResult(rows)}, ValueRange{},
      /*mapping=*/std::nullopt);
  OpBuilder body = OpBuilder::atBlockBegin(forall.getBody());
  Value row = forall.getInductionVar(0);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(body, loc, value);
  };
  auto read = [&](Value buffer, int64_t column, int64_t width) -> Value {
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    Value padding = arith::ConstantOp::create(
        body, loc, element, body.getFloatAttr(element, 0.0));
    Value vector = vector::TransferReadOp::create(
        body, loc, VectorType::get({width}, element), buffer,
        ValueRange{row, index(column)}, padding, ArrayRef<bool>{true});
    if (element != f32)
      vector = arith::ExtFOp::create(body, loc, VectorType::get({width}, f32),
                                     vector);
    return vector;
  };
  auto write = [&](Value vector, Value buffer) {
    vector::TransferWriteOp::create(body, loc, vector, buffer,
                                    ValueRange{row, index(0)},
                                    ArrayRef<bool>{true});
  };
  if (!dot) {
    // cat: each feature's columns of the result's gradient.
    int64_t column = 0;
    for (auto [width, out] : llvm::zip(widths, outs)) {
      write(read(dy, column, width), out);
      column += width;
    }
  } else {
    // dot: the dense vector's own columns, then the gradient g of the
    // pair (i, k), i > k (row-major, from column d), adds g * f_k to f_i's
    // gradient and g * f_i to f_k's. Accumulated in f64 and rounded once,
    // as the reference semantics does: a 16-bit table's update rounds these
    // gradients' last bits into its values.
    //
    // One feature's gradient at a time, and of it one block of columns at
    // a time: it sums g(i, m) * f_m over the other features m in ascending
    // order, which is the order the pairs' loop (i ascending, then k < i)
    // adds them in, so every sum is the same bit for bit. Holding every
    // feature's f64 row and gradient at once (18 rows of 64 doubles for 9
    // features) spilled out of the registers and made this kernel 4x its
    // memory time on the CPU; so did one whole row of 64 doubles (16 AVX2
    // registers, the accumulator alone). A block of kGradColumns columns
    // keeps the accumulator and one widened operand in registers. Each
    // feature is read again where it is used; the reads hit L1.
    int64_t dim = widths.front();
    for (int64_t width : widths)
      if (width != dim)
        return op.emitError() << "dot interaction features must share one "
                                 "width";
    Type f64 = body.getF64Type();
    int64_t count = featureBuffers.size();
    // The result column of the pair (i, k), i > k.
    auto pairColumn = [&](int64_t i, int64_t k) {
      return dim + i * (i - 1) / 2 + k;
    };
    // Each pair's gradient, widened once per sample.
    llvm::DenseMap<int64_t, Value> pairs;
    auto pairGrad = [&](int64_t column) {
      Value &pair = pairs[column];
      if (!pair)
        pair = arith::ExtFOp::create(
            body, loc, f64,
            memref::LoadOp::create(body, loc, dy,
                                   ValueRange{row, index(column)})
                .getResult());
      return pair;
    };
    for (int64_t i = 0; i < count; ++i) {
      for (int64_t first = 0; first < dim; first += kGradColumns) {
        int64_t width = std::min(kGradColumns, dim - first);
        auto wide = VectorType::get({width}, f64);
        auto widen = [&](Value vector) -> Value {
          return arith::ExtFOp::create(body, loc, wide, vector);
        };
        Value grad =
            i == 0 ? widen(read(dy, first, width))
                   : arith::ConstantOp::create(
                         body, loc, wide,
                         DenseElementsAttr::get(wide, body.getF64FloatAttr(0)));
        for (int64_t m = 0; m < count; ++m) {
          if (m == i)
            continue;
          Value splat = vector::BroadcastOp::create(
              body, loc, wide,
              pairGrad(i > m ? pairColumn(i, m) : pairColumn(m, i)));
          grad = vector::FMAOp::create(
              body, loc, splat, widen(read(featureBuffers[m], first, width)),
              grad);
        }
        vector::TransferWriteOp::create(
            body, loc,
            arith::TruncFOp::create(body, loc, VectorType::get({width}, f32),
                                    grad),
            outs[i], ValueRange{row, index(first)}, ArrayRef<bool>{true});
      }
    }
  }
  return wrap();
}
