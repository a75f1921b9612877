//===- PoolingKernel.cpp - The CPU backend's bag-pooling kernel -----------===//
//
// This file implements buildBagPooling. The kernel is row-major, the order a
// lookup's memory traffic wants: one `scf.forall` iteration per bag, and in
// it a loop over the bag's rows that reads each row as one vector (or a few
// vectors of at most kMaxVectorWidth lanes) and pools it into an
// accumulator held in registers. A row is read once, contiguously, and the
// result row is written once. Bufferization turns the forall into an
// `scf.parallel` that becomes an OpenMP loop; the vector reads become plain
// (or, for a shard narrower than the result, masked) vector loads.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/PoolingKernel.h"

#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Conversion/BraidToLoops/Prefetch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::braid;

/// The widest vector one accumulator holds: 64 f32 lanes are 8 AVX2 or 4
/// AVX-512 registers, so wider rows are pooled in column chunks rather than
/// spilling the accumulator.
static constexpr int64_t kMaxVectorWidth = 64;
/// How many entries ahead the kernel prefetches rows. A row read is a
/// random access into a table far larger than the caches, so the loop is
/// bound by memory latency, not bandwidth, unless rows are requested
/// early; 16 rows of 256 bytes stay well inside L1.
static constexpr int64_t kPrefetchDistance = 16;

namespace {
/// Emits one bag's pooling, chunk by chunk.
class BagEmitter {
public:
  BagEmitter(OpBuilder &b, Location loc, const BagPooling &pooling,
             Value tableBuffer, Value begin, Value end)
      : b(b), loc(loc), pooling(pooling), tableBuffer(tableBuffer),
        begin(begin), end(end) {
    int64_t tableCols =
        cast<RankedTensorType>(pooling.table.getType()).getDimSize(1);
    fullWidth = (!ShapedType::isDynamic(tableCols) &&
                 tableCols == pooling.resultType.getDimSize(1)) ||
                (pooling.rowsFullWidth && pooling.indexError);
    // The prefetches' clamps, once per bag rather than once per entry.
    auto last = [&](Value tensor, int64_t dim) -> Value {
      return arith::SubIOp::create(b, loc,
                                   tensor::DimOp::create(b, loc, tensor, dim),
                                   index(1));
    };
    lastEntry = last(pooling.rows, 0);
    lastRow = last(pooling.table, 0);
    lastColumn = last(pooling.table, 1);
  }

  /// Pools columns [column, column + lanes) and writes them into `row` at
  /// `writeColumn` (`column` when null); returns the updated row.
  Value poolChunk(Value row, Value column, int64_t lanes,
                  Value writeColumn = nullptr);

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value splat(VectorType type, double value) {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type,
                               b.getFloatAttr(type.getElementType(), value)));
  }

  /// Emits prefetches of the row entry `i + kPrefetchDistance` names
  /// (clamped to the last entry and the table), columns [column, column +
  /// lanes).
  void prefetchAhead(OpBuilder &lb, Location lloc, Value i, Value column,
                     int64_t lanes);

  OpBuilder &b;
  Location loc;
  const BagPooling &pooling;
  /// The table's buffer, read only, for prefetches.
  Value tableBuffer;
  Value begin, end;
  /// The last entry of `rows`, and the table's last row and column.
  Value lastEntry, lastRow, lastColumn;
  /// Whether the table is exactly as wide as the result (else reads are
  /// masked and columns past the table's are zeroed).
  bool fullWidth;
};
} // namespace

/// `value` as an index.
static Value asIndex(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isIndex())
    return value;
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

void BagEmitter::prefetchAhead(OpBuilder &lb, Location lloc, Value i,
                               Value column, int64_t lanes) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(lb, lloc, value);
  };
  Value entry = arith::MinUIOp::create(
      lb, lloc, arith::AddIOp::create(lb, lloc, i, constant(kPrefetchDistance)),
      lastEntry);
  Value row = arith::MinUIOp::create(
      lb, lloc,
      asIndex(lb, lloc, tensor::ExtractOp::create(lb, lloc, pooling.rows, entry)),
      lastRow);
  auto tableType = cast<RankedTensorType>(pooling.table.getType());
  int64_t perLine = elementsPerCacheLine(tableType.getElementTypeBitWidth());
  for (int64_t lane = 0; lane < lanes; lane += perLine) {
    Value at = arith::AddIOp::create(lb, lloc, column, constant(lane));
    if (!fullWidth) // a shard may be narrower than the chunk
      at = arith::MinUIOp::create(lb, lloc, at, lastColumn);
    memref::PrefetchOp::create(lb, lloc, tableBuffer, ValueRange{row, at},
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }
}

Value BagEmitter::poolChunk(Value row, Value column, int64_t lanes,
                            Value writeColumn) {
  Type acc = pooling.accumulatorType;
  auto tableType = cast<RankedTensorType>(pooling.table.getType());
  auto readType = VectorType::get({lanes}, tableType.getElementType());
  auto accType = VectorType::get({lanes}, acc);
  bool isMax = pooling.mode == PoolingMode::max;
  Value identity =
      splat(accType, isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  Value padding = arith::ConstantOp::create(
      b, loc, tableType.getElementType(),
      b.getFloatAttr(tableType.getElementType(), 0.0));
  Value tableRows = tensor::DimOp::create(b, loc, pooling.table, 0);
  auto loop = scf::ForOp::create(
      b, loc, begin, end, index(1), ValueRange{identity},
      [&](OpBuilder &lb, Location lloc, Value i, ValueRange sum) {
        Value tableRow = asIndex(
            lb, lloc, tensor::ExtractOp::create(lb, lloc, pooling.rows, i));
        if (pooling.indexError)
          emitIndexCheck(lb, lloc, pooling.indexError, tableRow, tableRows);
        prefetchAhead(lb, lloc, i, column, lanes);
        Value values = vector::TransferReadOp::create(
            lb, lloc, readType, pooling.table, ValueRange{tableRow, column},
            padding, ArrayRef<bool>{fullWidth});
        if (readType != accType)
          values = arith::ExtFOp::create(lb, lloc, Type(accType), values);
        if (pooling.weights) {
          Value weight = tensor::ExtractOp::create(lb, lloc, pooling.weights, i);
          if (weight.getType() != acc)
            weight = arith::ExtFOp::create(lb, lloc, acc, weight);
          values = arith::MulFOp::create(
              lb, lloc, values,
              vector::BroadcastOp::create(lb, lloc, Type(accType), weight));
        }
        Value next =
            isMax ? arith::MaximumFOp::create(lb, lloc, sum[0], values).getResult()
                  : arith::AddFOp::create(lb, lloc, sum[0], values).getResult();
        scf::YieldOp::create(lb, lloc, next);
      });
  Value pooled = loop.getResult(0);
  Value zero = splat(accType, 0.0);
  Value size = arith::SubIOp::create(b, loc, end, begin);
  Value empty =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, index(0));
  if (pooling.finish && pooling.mode == PoolingMode::mean) {
    Value count = arith::UIToFPOp::create(
        b, loc, acc, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), size));
    Value mean = arith::DivFOp::create(
        b, loc, pooled, vector::BroadcastOp::create(b, loc, Type(accType), count));
    pooled = arith::SelectOp::create(b, loc, empty, zero, mean);
  } else if (pooling.finish && isMax) {
    pooled = arith::SelectOp::create(b, loc, empty, zero, pooled);
  }
  if (!fullWidth) {
    // Columns past the table's are zero (a narrower column shard).
    Value cols = tensor::DimOp::create(b, loc, pooling.table, 1);
    Value inTable = vector::CreateMaskOp::create(
        b, loc, Type(VectorType::get({lanes}, b.getI1Type())),
        ValueRange{arith::SubIOp::create(b, loc, cols, column).getResult()});
    pooled = arith::SelectOp::create(b, loc, inTable, pooled, zero);
  }
  Type element = pooling.resultType.getElementType();
  if (element != acc)
    pooled = arith::TruncFOp::create(
        b, loc, Type(VectorType::get({lanes}, element)), pooled);
  Value at = writeColumn ? writeColumn : column;
  return vector::TransferWriteOp::create(b, loc, pooled, row,
                                         ValueRange{index(0), at},
                                         ArrayRef<bool>{true})
      .getResult();
}

FailureOr<Value> mlir::braid::buildBagPooling(OpBuilder &b, Location loc,
                                              const BagPooling &pooling) {
  RankedTensorType resultType = pooling.resultType;
  int64_t width = resultType.getDimSize(1);
  if (ShapedType::isDynamic(width))
    return emitError(loc) << "the CPU backend pools rows of static width only, "
                             "not "
                          << resultType;
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value numBags = arith::SubIOp::create(
      b, loc, tensor::DimOp::create(b, loc, pooling.starts, c0), c1);
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(numBags);
  Value init = tensor::EmptyOp::create(b, loc, resultType, dynamicSizes);
  auto tableType = cast<RankedTensorType>(pooling.table.getType());
  Value tableBuffer = bufferization::ToBufferOp::create(
      b, loc,
      MemRefType::get(tableType.getShape(), tableType.getElementType()),
      pooling.table, /*read_only=*/b.getUnitAttr());
  int64_t columnLanes = pooling.columnLanes;
  bool splitColumns = columnLanes > 0 && columnLanes < width &&
                      width % columnLanes == 0;
  // With split columns the loop runs over (bag, column group) pairs, the
  // groups of a bag consecutive: consecutive GPU threads then read
  // consecutive 16-byte pieces of one row (a warp a 128-float row).
  Value groups = arith::ConstantIndexOp::create(
      b, loc, splitColumns ? width / columnLanes : 1);
  Value iterations =
      splitColumns ? arith::MulIOp::create(b, loc, numBags, groups).getResult()
                   : numBags;
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{OpFoldResult(iterations)},
      ValueRange{init}, /*mapping=*/std::nullopt);
  OpBuilder body = OpBuilder::atBlockBegin(forall.getBody());
  Value bag = forall.getInductionVar(0);
  Value out = forall.getRegionIterArgs()[0];
  // The columns this iteration pools and writes: a group's, or the row.
  Value firstColumn = c0;
  int64_t sliceWidth = width;
  if (splitColumns) {
    // One iteration: `columnLanes` columns of one bag, read from every row
    // of the bag and written once. The sum over a column runs over the
    // bag's rows in entry order, as in the whole-row form: the same result.
    Value iteration = bag;
    bag = arith::DivUIOp::create(body, loc, iteration, groups);
    firstColumn = arith::MulIOp::create(
        body, loc, arith::RemUIOp::create(body, loc, iteration, groups),
        arith::ConstantIndexOp::create(body, loc, columnLanes));
    sliceWidth = columnLanes;
  }
  Value begin = asIndex(
      body, loc, tensor::ExtractOp::create(body, loc, pooling.starts, bag));
  Value end = asIndex(
      body, loc,
      tensor::ExtractOp::create(body, loc, pooling.starts,
                                arith::AddIOp::create(body, loc, bag, c1)
                                    .getResult()));
  SmallVector<OpFoldResult> offsets = {
      OpFoldResult(bag), splitColumns ? OpFoldResult(firstColumn)
                                      : OpFoldResult(body.getIndexAttr(0))};
  SmallVector<OpFoldResult> sizes = {body.getIndexAttr(1),
                                     body.getIndexAttr(sliceWidth)};
  SmallVector<OpFoldResult> strides = {body.getIndexAttr(1),
                                       body.getIndexAttr(1)};
  auto rowType =
      RankedTensorType::get({1, sliceWidth}, resultType.getElementType());
  Value row = tensor::ExtractSliceOp::create(body, loc, rowType, out, offsets,
                                             sizes, strides);
  BagEmitter emitter(body, loc, pooling, tableBuffer, begin, end);
  auto finish = [&](Value written) {
    OpBuilder terminator =
        OpBuilder::atBlockEnd(&forall.getTerminator().getRegion().front());
    tensor::ParallelInsertSliceOp::create(terminator, loc, written, out,
                                          offsets, sizes, strides);
    return forall.getResult(0);
  };
  if (splitColumns)
    return finish(emitter.poolChunk(row, firstColumn, columnLanes,
                                    /*writeColumn=*/c0));
  int64_t lanes = std::min(width, kMaxVectorWidth);
  int64_t chunks = width / lanes, tail = width % lanes;
  if (chunks == 1) {
    row = emitter.poolChunk(row, c0, lanes);
  } else {
    Value step = arith::ConstantIndexOp::create(body, loc, lanes);
    Value last = arith::ConstantIndexOp::create(body, loc, chunks * lanes);
    auto loop = scf::ForOp::create(
        body, loc, c0, last, step, ValueRange{row},
        [&](OpBuilder &lb, Location lloc, Value column, ValueRange carried) {
          BagEmitter inner(lb, lloc, pooling, tableBuffer, begin, end);
          scf::YieldOp::create(lb, lloc,
                               inner.poolChunk(carried[0], column, lanes));
        });
    row = loop.getResult(0);
  }
  if (tail)
    row = emitter.poolChunk(
        row, arith::ConstantIndexOp::create(body, loc, chunks * lanes), tail);
  return finish(row);
}
