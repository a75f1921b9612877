//===- EmbeddingUpdateKernel.cpp - The fused embedding update -------------===//
//
// This file implements buildSegmentedRowUpdate: a lookup's backward fused
// with its table's optimizer, as FBGEMM's deterministic backward does it.
// The runtime first groups the lookup's entries by row (a stable sort of
// (row, bag) pairs, braidrt_segment_rows); the kernel is then a forall with
// one iteration per distinct row, which owns that row: it sums the row's
// gradient from its entries' bags in entry order and applies the optimizer
// to the row once. No two iterations touch one row, so the kernel needs no
// atomics, and on a given target its result does not depend on the thread
// count or the schedule. On a GPU each thread owns a row; on a CPU the
// forall is an OpenMP loop.
//
// The columns go in chunks of kUpdateLanes: a GPU thread holds one chunk's
// sums in registers, not a whole row. Row-wise Adagrad needs the whole
// row's mean square before it moves any column, so it sums each chunk's
// gradient twice (once for the mean square, once for the update) rather
// than keep the row.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/EmbeddingUpdateKernel.h"

#include "braid/Conversion/BraidToLoops/Prefetch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::braid;

/// Columns per chunk: 16 f64 sums are 32 registers of a GPU thread, and
/// four AVX-512 (eight AVX2) registers of a CPU core.
static constexpr int64_t kUpdateLanes = 16;
/// How many distinct rows ahead an iteration prefetches the row it will
/// move (and its state). Rows are random reads and writes into a table far
/// larger than the caches: without the prefetch a CPU core waits on each
/// one (bench/cpu_train_vs_torch's training step on 2 ranks: 54 ms without,
/// 41 ms with).
static constexpr int64_t kPrefetchRows = 16;

namespace {
/// Emits one iteration of the update: the row `row`, whose entries are the
/// sorted positions [start, end).
class RowUpdateEmitter {
public:
  RowUpdateEmitter(OpBuilder &b, Location loc, const SegmentedRowUpdate &update,
                   Value row, Value start, Value end)
      : b(b), loc(loc), update(update), row(row), start(start), end(end) {
    auto tableType = cast<MemRefType>(update.table.getType());
    element = tableType.getElementType();
    acc = element.isF32() ? b.getF32Type() : b.getF64Type();
    cols = memref::DimOp::create(b, loc, update.table, 1);
    staticCols = !tableType.isDynamicDim(1);
  }

  /// The row's gradient in columns [column, column + lanes), summed over
  /// its entries in `acc`; columns past the table's are zero.
  Value sumGradient(int64_t column, int64_t lanes);
  /// The mean square of the row's gradient (row-wise Adagrad's), in f64.
  Value meanSquare(int64_t width);
  /// Applies the optimizer to columns [column, column + lanes); `rowScale`
  /// is row-wise Adagrad's lr / (sqrt(state) + eps), else null.
  void updateChunk(int64_t column, int64_t lanes, Value rowScale);
  /// Row-wise Adagrad's state update and lr / (sqrt(state) + eps).
  Value rowwiseScale(Value meanSquare);

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value f64(double value) {
    return arith::ConstantFloatOp::create(b, loc, b.getF64Type(),
                                          APFloat(value));
  }
  Value splat(VectorType type, Value scalar) {
    return vector::BroadcastOp::create(b, loc, type, scalar);
  }
  Value loadIndex(OpBuilder &builder, Value buffer, Value at) {
    Value value = memref::LoadOp::create(builder, loc, buffer, at);
    return arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                      value);
  }
  /// Columns [column, column + lanes) that are the table's: null when all
  /// of them are (static columns), else a mask.
  Value maskOf(int64_t column, int64_t lanes) {
    if (staticCols)
      return Value();
    return vector::CreateMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()),
        ValueRange{
            arith::SubIOp::create(b, loc, cols, index(column)).getResult()});
  }
  Value read(Value buffer, ValueRange indices, VectorType type, Value mask) {
    Value padding =
        arith::ConstantOp::create(b, loc, type.getElementType(),
                                  b.getFloatAttr(type.getElementType(), 0.0));
    auto op = vector::TransferReadOp::create(b, loc, type, buffer, indices,
                                             padding, ArrayRef<bool>{true});
    if (mask)
      op.getMaskMutable().assign(mask);
    return op;
  }
  void write(Value vector, Value buffer, ValueRange indices, Value mask) {
    auto op = vector::TransferWriteOp::create(b, loc, vector, buffer, indices,
                                              ArrayRef<bool>{true});
    if (mask)
      op.getMaskMutable().assign(mask);
  }
  Value toF64(Value vector) {
    auto type = cast<VectorType>(vector.getType());
    if (type.getElementType().isF64())
      return vector;
    return arith::ExtFOp::create(
        b, loc, VectorType::get(type.getShape(), b.getF64Type()), vector);
  }

  OpBuilder &b;
  Location loc;
  const SegmentedRowUpdate &update;
  Value row, start, end, cols;
  Type element, acc;
  bool staticCols = false;
};
} // namespace

Value RowUpdateEmitter::sumGradient(int64_t column, int64_t lanes) {
  auto accType = VectorType::get({lanes}, acc);
  auto gradType = VectorType::get({lanes}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, accType, DenseElementsAttr::get(accType, b.getFloatAttr(acc, 0)));
  Value mask = maskOf(column, lanes);
  auto loop = scf::ForOp::create(
      b, loc, start, end, index(1), ValueRange{zeros},
      [&](OpBuilder &lb, Location, Value k, ValueRange sum) {
        // The helpers build with `b`: point it into the loop's body.
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        Value bag = loadIndex(b, update.sortedBags, k);
        Value g =
            read(update.grad, ValueRange{bag, index(column)}, gradType, mask);
        if (acc != b.getF32Type())
          g = arith::ExtFOp::create(b, loc, accType, g);
        if (update.mode == PoolingMode::mean) {
          // The bag's share: 1 / its size, rounded to the sums' type.
          Value size;
          if (update.boundsAreLengths) {
            size = memref::LoadOp::create(b, loc, update.bounds, bag);
          } else {
            Value next = arith::AddIOp::create(b, loc, bag, index(1));
            Value first = memref::LoadOp::create(b, loc, update.bounds, bag);
            Value last = memref::LoadOp::create(b, loc, update.bounds, next);
            size = arith::SubIOp::create(b, loc, last, first);
          }
          Value scale = arith::DivFOp::create(
              b, loc, f64(1.0),
              arith::SIToFPOp::create(b, loc, b.getF64Type(), size));
          if (acc != b.getF64Type())
            scale = arith::TruncFOp::create(b, loc, acc, scale);
          g = arith::MulFOp::create(b, loc, g, splat(accType, scale));
        }
        scf::YieldOp::create(
            b, loc, arith::AddFOp::create(b, loc, sum[0], g).getResult());
      });
  return loop.getResult(0);
}

Value RowUpdateEmitter::meanSquare(int64_t width) {
  Value total = f64(0.0);
  for (int64_t column = 0; column < width; column += kUpdateLanes) {
    int64_t lanes = std::min(kUpdateLanes, width - column);
    Value g = toF64(sumGradient(column, lanes));
    Value squares = arith::MulFOp::create(b, loc, g, g);
    // Chained chunk by chunk; within a chunk the targets' vector lowering
    // sums as a tree (reassociated). Either order is fixed at compile time,
    // so every run of a program sums the same way.
    total = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                        squares, total);
  }
  Value n = arith::SIToFPOp::create(
      b, loc, b.getF64Type(),
      arith::IndexCastOp::create(b, loc, b.getI64Type(), cols));
  return arith::DivFOp::create(b, loc, total, n);
}

Value RowUpdateEmitter::rowwiseScale(Value meanSquare) {
  Value state = memref::LoadOp::create(b, loc, update.state, row);
  Value sum = arith::AddFOp::create(
      b, loc, arith::ExtFOp::create(b, loc, b.getF64Type(), state), meanSquare);
  memref::StoreOp::create(b, loc,
                          arith::TruncFOp::create(b, loc, b.getF32Type(), sum),
                          update.state, row);
  Value root = arith::AddFOp::create(b, loc, math::SqrtOp::create(b, loc, sum),
                                     f64(update.eps));
  return arith::DivFOp::create(b, loc, f64(update.lr), root);
}

void RowUpdateEmitter::updateChunk(int64_t column, int64_t lanes,
                                   Value rowScale) {
  auto wide = VectorType::get({lanes}, b.getF64Type());
  Value g = toF64(sumGradient(column, lanes));
  Value mask = maskOf(column, lanes);
  SmallVector<Value> indices = {row, index(column)};
  Value weights = toF64(
      read(update.table, indices, VectorType::get({lanes}, element), mask));
  Value delta;
  switch (update.optimizer) {
  case EmbeddingOptimizer::sgd:
    delta = arith::MulFOp::create(b, loc, splat(wide, f64(update.lr)), g);
    break;
  case EmbeddingOptimizer::adagrad: {
    auto stateType = VectorType::get({lanes}, b.getF32Type());
    Value state = toF64(read(update.state, indices, stateType, mask));
    Value sum = arith::AddFOp::create(b, loc, state,
                                      arith::MulFOp::create(b, loc, g, g));
    write(arith::TruncFOp::create(b, loc, stateType, sum), update.state,
          indices, mask);
    Value root =
        arith::AddFOp::create(b, loc, math::SqrtOp::create(b, loc, sum),
                              splat(wide, f64(update.eps)));
    delta = arith::DivFOp::create(
        b, loc, arith::MulFOp::create(b, loc, splat(wide, f64(update.lr)), g),
        root);
    break;
  }
  case EmbeddingOptimizer::rowwiseAdagrad:
    delta = arith::MulFOp::create(b, loc, splat(wide, rowScale), g);
    break;
  }
  Value moved = arith::SubFOp::create(b, loc, weights, delta);
  // Rounded as the runtime rounds: bf16 through f32 (its conversion is from
  // a float), f32 and f16 directly.
  Value rounded;
  if (element.isBF16()) {
    rounded = arith::TruncFOp::create(
        b, loc, VectorType::get({lanes}, b.getF32Type()), moved);
    rounded = arith::TruncFOp::create(b, loc, VectorType::get({lanes}, element),
                                      rounded);
  } else {
    rounded = arith::TruncFOp::create(b, loc, VectorType::get({lanes}, element),
                                      moved);
  }
  write(rounded, update.table, indices, mask);
}

LogicalResult
mlir::braid::buildSegmentedRowUpdate(OpBuilder &b, Location loc,
                                     const SegmentedRowUpdate &update) {
  auto tableType = cast<MemRefType>(update.table.getType());
  Type element = tableType.getElementType();
  if (!element.isF32() && !element.isF16() && !element.isBF16())
    return emitError(loc) << "the embedding update kernel trains f32, f16 and "
                             "bf16 tables, not "
                          << element;
  if (update.mode == PoolingMode::max)
    return emitError(loc) << "the embedding update kernel takes sum and mean "
                             "pooling; max goes to the runtime";
  auto gradType = cast<MemRefType>(update.grad.getType());
  int64_t width = gradType.getDimSize(1);
  if (ShapedType::isDynamic(width))
    return emitError(loc) << "the embedding update kernel needs a pooled "
                             "gradient of static width, not "
                          << gradType;
  if (!tableType.isDynamicDim(1) && tableType.getDimSize(1) > width)
    return emitError(loc) << "the pooled gradient " << gradType
                          << " is narrower than the table " << tableType;
  // A static table narrower than the gradient: its own columns only.
  if (!tableType.isDynamicDim(1))
    width = tableType.getDimSize(1);
  if ((update.optimizer != EmbeddingOptimizer::sgd) != bool(update.state))
    return emitError(loc) << "the embedding update kernel needs an optimizer "
                             "state exactly for Adagrad and row-wise Adagrad";

  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{OpFoldResult(update.count)}, ValueRange{},
      /*mapping=*/std::nullopt);
  OpBuilder body = OpBuilder::atBlockBegin(forall.getBody());
  Value segment = forall.getInductionVar(0);
  auto loadIndex = [&](Value buffer, Value at) -> Value {
    Value value = memref::LoadOp::create(body, loc, buffer, at);
    return arith::IndexCastOp::create(body, loc, body.getIndexType(), value);
  };
  Value one = arith::ConstantIndexOp::create(body, loc, 1);
  Value start = loadIndex(update.segmentStarts, segment);
  Value end = loadIndex(update.segmentStarts,
                        arith::AddIOp::create(body, loc, segment, one));
  Value row = loadIndex(update.segmentRows, segment);
  // The row kPrefetchRows iterations on (the last row at the end), every
  // cache line of it and of its state, for writing.
  Value last = arith::SubIOp::create(body, loc, update.count, one);
  Value ahead = arith::MinUIOp::create(
      body, loc,
      arith::AddIOp::create(
          body, loc, segment,
          arith::ConstantIndexOp::create(body, loc, kPrefetchRows)),
      last);
  Value rowAhead = loadIndex(update.segmentRows, ahead);
  Value lastColumn = arith::SubIOp::create(
      body, loc, memref::DimOp::create(body, loc, update.table, 1), one);
  auto prefetchRow = [&](Value buffer, Value at, bool isWrite) {
    auto type = cast<MemRefType>(buffer.getType());
    if (type.getRank() == 1) {
      memref::PrefetchOp::create(body, loc, buffer, ValueRange{at}, isWrite,
                                 /*localityHint=*/3, /*isDataCache=*/true);
      return;
    }
    int64_t perLine = elementsPerCacheLine(type.getElementTypeBitWidth());
    for (int64_t lane = 0; lane < width; lane += perLine) {
      Value column = arith::MinUIOp::create(
          body, loc, arith::ConstantIndexOp::create(body, loc, lane),
          lastColumn);
      memref::PrefetchOp::create(body, loc, buffer, ValueRange{at, column},
                                 isWrite, /*localityHint=*/3,
                                 /*isDataCache=*/true);
    }
  };
  prefetchRow(update.table, rowAhead, /*isWrite=*/true);
  if (update.state)
    prefetchRow(update.state, rowAhead, /*isWrite=*/true);
  // And the gradient row of that row's first entry: the entries come in
  // row order, so their bags' gradient rows are random reads too.
  Value bagAhead =
      loadIndex(update.sortedBags, loadIndex(update.segmentStarts, ahead));
  prefetchRow(update.grad, bagAhead, /*isWrite=*/false);
  RowUpdateEmitter emitter(body, loc, update, row, start, end);
  Value rowScale;
  if (update.optimizer == EmbeddingOptimizer::rowwiseAdagrad)
    rowScale = emitter.rowwiseScale(emitter.meanSquare(width));
  for (int64_t column = 0; column < width; column += kUpdateLanes)
    emitter.updateChunk(column, std::min(kUpdateLanes, width - column),
                        rowScale);
  return success();
}
