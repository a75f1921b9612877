//===- ShardKernels.cpp - Target-neutral kernels of sharded lookups -------===//
//
// This file builds, on tensors, the kernels of the ops braid-partition emits
// that need no communication: a rank's partial pooling over its shard
// (shard_embedding_bag: bag starts from the received lengths, then the
// pooling kernel with each received row checked) and the assembly of the
// pooled rows (combine_shards: column parts concatenated, padding slots
// dropped, mean and max finished) and its backward (combine_shards_grad).
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/ShardKernels.h"

#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Conversion/BraidToLoops/PoolingKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::braid;

Value mlir::braid::buildConstantVector(OpBuilder &b, Location loc,
                                       ArrayRef<int64_t> values, Type element) {
  auto type = RankedTensorType::get({int64_t(values.size())}, element);
  if (element.isIndex())
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, values));
  SmallVector<APInt> bits;
  for (int64_t v : values)
    bits.push_back(
        APInt(element.getIntOrFloatBitWidth(), v, /*isSigned=*/true));
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, bits));
}

FailureOr<Value> mlir::braid::buildShardLookupKernel(OpBuilder &b,
                                                     ShardEmbeddingBagOp op,
                                                     Value table,
                                                     func::FuncOp indexError,
                                                     int64_t columnLanes) {
  Location loc = op.getLoc();
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Type acc = type.getElementType();
  Value values = op.getValues(), lengths = op.getLengths();
  Value numBags = tensor::DimOp::create(b, loc, lengths, 0);
  // Bag starts: an exclusive prefix sum of the lengths.
  Value starts0 = tensor::EmptyOp::create(
      b, loc, RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType()),
      ValueRange{arith::AddIOp::create(b, loc, numBags, index(1))});
  auto prefix = scf::ForOp::create(
      b, loc, index(0), numBags, index(1),
      ValueRange{tensor::InsertOp::create(b, loc, index(0), starts0, index(0))
                     .getResult(),
                 index(0)},
      [&](OpBuilder &lb, Location lloc, Value bag, ValueRange acc) {
        Value length = arith::IndexCastOp::create(
            lb, lloc, lb.getIndexType(),
            tensor::ExtractOp::create(lb, lloc, lengths, bag));
        Value next = arith::AddIOp::create(lb, lloc, acc[1], length);
        Value at = arith::AddIOp::create(
            lb, lloc, bag, arith::ConstantIndexOp::create(lb, lloc, 1));
        scf::YieldOp::create(
            lb, lloc,
            ValueRange{tensor::InsertOp::create(lb, lloc, next, acc[0], at)
                           .getResult(),
                       next});
      });
  Value starts = prefix.getResult(0);
  BagPooling pooling;
  pooling.table = table;
  pooling.rows = values;
  pooling.starts = starts;
  pooling.resultType = type;
  pooling.accumulatorType = acc;
  pooling.mode = op.getMode();
  pooling.finish = false;
  // The rows arrived from other ranks: each is checked as it is read.
  pooling.indexError = indexError;
  // Unless the table is split by columns, every shard holds its rows whole,
  // so a row that passes the check is read unmasked (masked reads of a
  // dynamic width made the CPU's lookups 15-20% slower than a whole table's).
  auto tableOp =
      SymbolTable::lookupNearestSymbolFrom<TableOp>(op, op.getTableAttr());
  pooling.rowsFullWidth =
      tableOp && tableOp.getPlacementAttr() &&
      llvm::all_of(
          tableOp.getPlacementAttr().getShards(tableOp.getNumRows(),
                                               tableOp.getDim()),
          [&](const TableShard &shard) {
            return shard.cols == type.getDimSize(1);
          });
  pooling.columnLanes = columnLanes;
  return buildBagPooling(b, loc, pooling);
}

FailureOr<Value> mlir::braid::buildCombineShardsKernel(OpBuilder &b,
                                                       CombineShardsOp op) {
  Location loc = op.getLoc();
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto table =
      SymbolTable::lookupNearestSymbolFrom<TableOp>(op, op.getTableAttr());
  int64_t dim = table.getDim(), slots = op.getBagsPerRank();
  // For each output column: the part holding it and its column there.
  SmallVector<int64_t> partOf(dim, 0), localColumn(dim);
  for (int64_t c = 0; c < dim; ++c)
    localColumn[c] = c;
  for (auto [p, part] : llvm::enumerate(getReceivedParts(table)))
    for (int64_t c = 0; c < part.cols; ++c) {
      partOf[part.colOffset + c] = p;
      localColumn[part.colOffset + c] = c;
    }
  Value partTensor = buildConstantVector(b, loc, partOf, b.getIndexType());
  Value columnTensor =
      buildConstantVector(b, loc, localColumn, b.getIndexType());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Type element = type.getElementType();
  Value received = op.getReceived(), offsets = op.getOffsets();
  Type acc = cast<RankedTensorType>(received.getType()).getElementType();
  Value numBags = arith::SubIOp::create(
      b, loc, tensor::DimOp::create(b, loc, offsets, 0), index(1));
  SmallVector<Value> dynamic;
  if (type.isDynamicDim(0))
    dynamic.push_back(numBags);
  PoolingMode mode = op.getMode();
  auto generate = tensor::GenerateOp::create(
      b, loc, type, dynamic, [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        Value bag = ivs[0], column = ivs[1];
        Value part = tensor::ExtractOp::create(nb, nloc, partTensor, column);
        Value local = tensor::ExtractOp::create(nb, nloc, columnTensor, column);
        Value row = arith::AddIOp::create(
            nb, nloc, bag,
            arith::MulIOp::create(
                nb, nloc, part,
                arith::ConstantIndexOp::create(nb, nloc, slots)));
        Value v = tensor::ExtractOp::create(nb, nloc, received,
                                            ValueRange{row, local});
        auto offsetAt = [&](Value at) -> Value {
          return arith::IndexCastOp::create(
              nb, nloc, nb.getIndexType(),
              tensor::ExtractOp::create(nb, nloc, offsets, at));
        };
        Value size = arith::SubIOp::create(
            nb, nloc,
            offsetAt(arith::AddIOp::create(
                nb, nloc, bag, arith::ConstantIndexOp::create(nb, nloc, 1))),
            offsetAt(bag));
        Value empty =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, size,
                                  arith::ConstantIndexOp::create(nb, nloc, 0));
        Value zero =
            arith::ConstantOp::create(nb, nloc, acc, nb.getFloatAttr(acc, 0.0));
        if (mode == PoolingMode::mean) {
          Value count = arith::UIToFPOp::create(
              nb, nloc, acc,
              arith::IndexCastUIOp::create(nb, nloc, nb.getI64Type(), size));
          v = arith::SelectOp::create(
              nb, nloc, empty, zero, arith::DivFOp::create(nb, nloc, v, count));
        } else if (mode == PoolingMode::max) {
          v = arith::SelectOp::create(nb, nloc, empty, zero, v);
        }
        if (v.getType() != element)
          v = arith::TruncFOp::create(nb, nloc, element, v);
        tensor::YieldOp::create(nb, nloc, v);
      });
  return generate.getResult();
}

FailureOr<Value>
mlir::braid::buildCombineShardsGradKernel(OpBuilder &b, CombineShardsGradOp op,
                                          ArrayRef<int64_t> parts,
                                          func::FuncOp bagsError) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getReceivedGrad().getType());
  if (!type.hasStaticShape())
    return op.emitError() << "the combine_shards_grad kernel needs a static "
                             "number of received rows";
  int64_t slots = op.getBagsPerRank();
  SmallVector<int64_t> offsetOf, colsOf;
  for (size_t p = 0; p + 1 < parts.size(); p += 2) {
    offsetOf.push_back(parts[p]);
    colsOf.push_back(parts[p + 1]);
  }
  Value offsetTensor = buildConstantVector(b, loc, offsetOf, b.getIndexType());
  Value colsTensor = buildConstantVector(b, loc, colsOf, b.getIndexType());
  Value dy = op.getResultGrad(), offsets = op.getOffsets();
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value bags = arith::SubIOp::create(
      b, loc, tensor::DimOp::create(b, loc, offsets, 0), c1);
  Value slotsValue = arith::ConstantIndexOp::create(b, loc, slots);
  emitAbortIf(b, loc, bagsError,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, bags,
                                    slotsValue),
              bags, slotsValue);
  PoolingMode mode = op.getMode();
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  auto generate = tensor::GenerateOp::create(
      b, loc, type, ValueRange{},
      [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        auto index = [&](int64_t value) -> Value {
          return arith::ConstantIndexOp::create(nb, nloc, value);
        };
        Value slotCount = index(slots);
        Value part = arith::DivUIOp::create(nb, nloc, ivs[0], slotCount);
        Value bag = arith::RemUIOp::create(nb, nloc, ivs[0], slotCount);
        Value column = ivs[1];
        Value cols = tensor::ExtractOp::create(nb, nloc, colsTensor, part);
        Value inBags = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::ult, bag, bags);
        Value inPart = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::ult, column, cols);
        Value valid = arith::AndIOp::create(nb, nloc, inBags, inPart);
        // Reads only where the element is a bag's: an empty lookup has no
        // gradient rows to read.
        auto read = scf::IfOp::create(
            nb, nloc, valid,
            [&](OpBuilder &tb, Location tloc) {
              auto offsetAt = [&](Value at) -> Value {
                return arith::IndexCastOp::create(
                    tb, tloc, tb.getIndexType(),
                    tensor::ExtractOp::create(tb, tloc, offsets, at));
              };
              Value next = arith::AddIOp::create(
                  tb, tloc, bag, arith::ConstantIndexOp::create(tb, tloc, 1));
              Value first = offsetAt(bag);
              Value last = offsetAt(next);
              Value size = arith::SubIOp::create(tb, tloc, last, first);
              Value offset =
                  tensor::ExtractOp::create(tb, tloc, offsetTensor, part);
              Value at = arith::AddIOp::create(tb, tloc, offset, column);
              Value g =
                  tensor::ExtractOp::create(tb, tloc, dy, ValueRange{bag, at});
              Value zero = arith::ConstantOp::create(tb, tloc, f32,
                                                     tb.getF32FloatAttr(0));
              Value empty = arith::CmpIOp::create(
                  tb, tloc, arith::CmpIPredicate::eq, size,
                  arith::ConstantIndexOp::create(tb, tloc, 0));
              if (mode == PoolingMode::mean) {
                Value count = arith::SIToFPOp::create(
                    tb, tloc, f64,
                    arith::IndexCastOp::create(tb, tloc, tb.getI64Type(),
                                               size));
                // g x (1 / size) in f64, rounded once, as the reference.
                Value one = arith::ConstantFloatOp::create(
                    tb, tloc, cast<FloatType>(f64), APFloat(1.0));
                Value scale = arith::DivFOp::create(tb, tloc, one, count);
                Value wide = arith::ExtFOp::create(tb, tloc, f64, g);
                Value scaled = arith::MulFOp::create(tb, tloc, wide, scale);
                g = arith::TruncFOp::create(tb, tloc, f32, scaled);
              }
              if (mode != PoolingMode::sum)
                g = arith::SelectOp::create(tb, tloc, empty, zero, g);
              scf::YieldOp::create(tb, tloc, g);
            },
            [&](OpBuilder &eb, Location eloc) {
              scf::YieldOp::create(eb, eloc,
                                   ValueRange{arith::ConstantOp::create(
                                       eb, eloc, f32, eb.getF32FloatAttr(0))});
            });
        tensor::YieldOp::create(nb, nloc, read.getResult(0));
      });
  return generate.getResult();
}
