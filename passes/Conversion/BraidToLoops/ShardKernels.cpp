//===- ShardKernels.cpp - Target-neutral kernels of sharded lookups -------===//
//
// This file builds, on tensors, the kernels of the ops braid-partition emits
// that need no communication: a rank's partial pooling over its shard
// (shard_embedding_bag: bag starts from the received lengths, then the
// pooling kernel with each received row checked) and the assembly of the
// pooled rows (combine_shards: column parts concatenated, padding slots
// dropped, mean and max finished).
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/ShardKernels.h"

#include "braid/Conversion/BraidToLoops/PoolingKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::braid;

Value mlir::braid::buildConstantVector(OpBuilder &b, Location loc,
                                       ArrayRef<int64_t> values,
                                       Type element) {
  auto type = RankedTensorType::get({int64_t(values.size())}, element);
  if (element.isIndex())
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, values));
  SmallVector<APInt> bits;
  for (int64_t v : values)
    bits.push_back(APInt(element.getIntOrFloatBitWidth(), v, /*isSigned=*/true));
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, bits));
}

FailureOr<Value> mlir::braid::buildShardLookupKernel(OpBuilder &b,
                                                    ShardEmbeddingBagOp op,
                                                    Value table,
                                                    func::FuncOp indexError) {
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
      ValueRange{tensor::InsertOp::create(b, loc, index(0), starts0, index(0)).getResult(),
                 index(0)},
      [&](OpBuilder &lb, Location lloc, Value bag, ValueRange acc) {
        Value length = arith::IndexCastOp::create(
            lb, lloc, lb.getIndexType(),
            tensor::ExtractOp::create(lb, lloc, lengths, bag));
        Value next = arith::AddIOp::create(lb, lloc, acc[1], length);
        Value at = arith::AddIOp::create(lb, lloc, bag,
                                         arith::ConstantIndexOp::create(lb, lloc, 1));
        scf::YieldOp::create(
            lb, lloc,
            ValueRange{tensor::InsertOp::create(lb, lloc, next, acc[0], at).getResult(),
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
  return buildBagPooling(b, loc, pooling);
}

FailureOr<Value> mlir::braid::buildCombineShardsKernel(OpBuilder &b,
                                                      CombineShardsOp op) {
  Location loc = op.getLoc();
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto table = SymbolTable::lookupNearestSymbolFrom<TableOp>(op, op.getTableAttr());
  int64_t dim = table.getDim(), slots = op.getBagsPerRank();
  // For each output column: the part holding it and its column there.
  SmallVector<int64_t> partOf(dim, 0), localColumn(dim);
  for (int64_t c = 0; c < dim; ++c)
    localColumn[c] = c;
  if (isa<ColumnWiseAttr>(table.getPlacementAttr())) {
    SmallVector<TableShard> parts = table.getPlacementAttr().getShards(
        table.getNumRows(), dim);
    llvm::sort(parts, [](const TableShard &x, const TableShard &y) {
      return x.rank < y.rank;
    });
    for (auto [p, part] : llvm::enumerate(parts))
      for (int64_t c = 0; c < part.cols; ++c) {
        partOf[part.colOffset + c] = p;
        localColumn[part.colOffset + c] = c;
      }
  }
  Value partTensor = buildConstantVector(b, loc, partOf, b.getIndexType());
  Value columnTensor = buildConstantVector(b, loc, localColumn, b.getIndexType());
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
            arith::MulIOp::create(nb, nloc, part,
                                  arith::ConstantIndexOp::create(nb, nloc, slots)));
        Value v = tensor::ExtractOp::create(nb, nloc, received, ValueRange{row, local});
        auto offsetAt = [&](Value at) -> Value {
          return arith::IndexCastOp::create(
              nb, nloc, nb.getIndexType(), tensor::ExtractOp::create(nb, nloc, offsets, at));
        };
        Value size = arith::SubIOp::create(
            nb, nloc,
            offsetAt(arith::AddIOp::create(nb, nloc, bag,
                                           arith::ConstantIndexOp::create(nb, nloc, 1))),
            offsetAt(bag));
        Value empty = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, size,
                                            arith::ConstantIndexOp::create(nb, nloc, 0));
        Value zero = arith::ConstantOp::create(nb, nloc, acc, nb.getFloatAttr(acc, 0.0));
        if (mode == PoolingMode::mean) {
          Value count = arith::UIToFPOp::create(
              nb, nloc, acc, arith::IndexCastUIOp::create(nb, nloc, nb.getI64Type(), size));
          v = arith::SelectOp::create(nb, nloc, empty, zero,
                                      arith::DivFOp::create(nb, nloc, v, count));
        } else if (mode == PoolingMode::max) {
          v = arith::SelectOp::create(nb, nloc, empty, zero, v);
        }
        if (v.getType() != element)
          v = arith::TruncFOp::create(nb, nloc, element, v);
        tensor::YieldOp::create(nb, nloc, v);
      });
  return generate.getResult();
}
