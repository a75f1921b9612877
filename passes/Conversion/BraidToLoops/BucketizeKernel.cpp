//===- BucketizeKernel.cpp - Target-neutral kernel of bucketize -----------===//
//
// This file builds bucketize on tensors: two sequential passes over the
// rank's bags, the first counting per destination and bag how many indices
// fall in the destination's rows (the lengths and send counts), the second
// writing the routed indices, rebased to their shard, destination by
// destination. Every index and the offsets are checked first. The
// placement fixes the row ranges at compile time.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Conversion/BraidToLoops/ShardKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::braid;

FailureOr<SmallVector<Value>>
mlir::braid::buildBucketizeKernel(OpBuilder &b, BucketizeOp op,
                                  func::FuncOp indexError,
                                  func::FuncOp offsetsError,
                                  func::FuncOp bagsError) {
  Location loc = op.getLoc();
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto table =
      SymbolTable::lookupNearestSymbolFrom<TableOp>(op, op.getTableAttr());
  SmallVector<TableShard> shards =
      table.getPlacementAttr().getShards(table.getNumRows(), table.getDim());
  ArrayRef<int64_t> destinations = op.getDestinations();
  int64_t slots = op.getBagsPerRank();
  int64_t ranks = op.getSendCounts().getType().getDimSize(0);
  Type element = op.getIndices().getType().getElementType();
  Value indices = op.getIndices(), offsets = op.getOffsets();
  Value numBags = arith::SubIOp::create(
      b, loc, tensor::DimOp::create(b, loc, offsets, 0), index(1));
  Value numIndices = tensor::DimOp::create(b, loc, indices, 0);
  // Every index must be a row of the table, and the offsets a valid bag
  // layout of the indices (the reference semantics' rules), before any
  // bag is read.
  emitIndicesCheck(b, loc, indexError, indices, index(table.getNumRows()));
  emitOffsetsCheck(b, loc, offsetsError, offsets, indices);
  // Each bag has a slot per destination in the lengths: more bags than
  // slots would write past them (the reference's rule too).
  emitAbortIf(b, loc, bagsError,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, numBags,
                                    index(slots)),
              numBags, index(slots));
  auto offsetAt = [&](OpBuilder &ob, Location oloc, Value bag) -> Value {
    Value raw = tensor::ExtractOp::create(ob, oloc, offsets, bag);
    return arith::IndexCastOp::create(ob, oloc, ob.getIndexType(), raw);
  };
  // The row range each destination holds, [0, 0) for none.
  auto rangeOf = [&](int64_t destination) -> std::pair<int64_t, int64_t> {
    for (const TableShard &shard : shards)
      if (shard.rank == destination)
        return {shard.rowOffset, shard.rowOffset + shard.rows};
    return {0, 0};
  };
  auto inRange = [&](OpBuilder &ob, Location oloc, Value raw, int64_t lo,
                     int64_t hi) -> Value {
    Value row = arith::IndexCastOp::create(ob, oloc, ob.getIndexType(), raw);
    Value geLo =
        arith::CmpIOp::create(ob, oloc, arith::CmpIPredicate::sge, row,
                              arith::ConstantIndexOp::create(ob, oloc, lo));
    Value ltHi =
        arith::CmpIOp::create(ob, oloc, arith::CmpIPredicate::slt, row,
                              arith::ConstantIndexOp::create(ob, oloc, hi));
    return arith::AndIOp::create(ob, oloc, geLo, ltHi);
  };
  Type i64 = b.getI64Type();
  Value lengths = buildConstantVector(
      b, loc, SmallVector<int64_t>(destinations.size() * slots, 0), i64);
  Value counts =
      buildConstantVector(b, loc, SmallVector<int64_t>(ranks, 0), i64);
  Value total = index(0);
  // Pass 1: per destination and bag, how many indices it receives.
  for (auto [d, destination] : llvm::enumerate(destinations)) {
    auto [lo, hi] = rangeOf(destination);
    auto perBag = scf::ForOp::create(
        b, loc, index(0), numBags, index(1), ValueRange{lengths, index(0)},
        [&](OpBuilder &lb, Location lloc, Value bag, ValueRange acc) {
          Value begin = offsetAt(lb, lloc, bag);
          Value end = offsetAt(
              lb, lloc,
              arith::AddIOp::create(
                  lb, lloc, bag, arith::ConstantIndexOp::create(lb, lloc, 1)));
          auto count = scf::ForOp::create(
              lb, lloc, begin, end, arith::ConstantIndexOp::create(lb, lloc, 1),
              ValueRange{arith::ConstantIndexOp::create(lb, lloc, 0)},
              [&](OpBuilder &cb, Location cloc, Value i, ValueRange n) {
                Value raw = tensor::ExtractOp::create(cb, cloc, indices, i);
                Value one = arith::SelectOp::create(
                    cb, cloc, inRange(cb, cloc, raw, lo, hi),
                    arith::ConstantIndexOp::create(cb, cloc, 1),
                    arith::ConstantIndexOp::create(cb, cloc, 0));
                scf::YieldOp::create(
                    cb, cloc,
                    arith::AddIOp::create(cb, cloc, n[0], one).getResult());
              });
          Value n = count.getResult(0);
          Value slot = arith::AddIOp::create(
              lb, lloc, bag,
              arith::ConstantIndexOp::create(lb, lloc, int64_t(d) * slots));
          Value updated = tensor::InsertOp::create(
              lb, lloc, arith::IndexCastOp::create(lb, lloc, i64, n), acc[0],
              slot);
          scf::YieldOp::create(
              lb, lloc,
              ValueRange{updated, arith::AddIOp::create(lb, lloc, acc[1], n)});
        });
    lengths = perBag.getResult(0);
    Value sent = perBag.getResult(1);
    counts = tensor::InsertOp::create(
        b, loc, arith::IndexCastOp::create(b, loc, i64, sent), counts,
        index(destination));
    total = arith::AddIOp::create(b, loc, total, sent);
  }
  // Pass 2: the routed indices, rebased to their shard, destination by
  // destination.
  Value values = tensor::EmptyOp::create(
      b, loc, RankedTensorType::get({ShapedType::kDynamic}, element),
      ValueRange{total});
  Value position = index(0);
  for (int64_t destination : destinations) {
    auto [lo, hi] = rangeOf(destination);
    auto loop = scf::ForOp::create(
        b, loc, index(0), numIndices, index(1), ValueRange{values, position},
        [&](OpBuilder &lb, Location lloc, Value i, ValueRange acc) {
          Value raw = tensor::ExtractOp::create(lb, lloc, indices, i);
          auto branch = scf::IfOp::create(
              lb, lloc, TypeRange{acc[0].getType(), lb.getIndexType()},
              inRange(lb, lloc, raw, lo, hi), /*withElse=*/true);
          OpBuilder tb = branch.getThenBodyBuilder();
          Value rebased = arith::SubIOp::create(
              tb, lloc, raw,
              arith::ConstantOp::create(tb, lloc, element,
                                        tb.getIntegerAttr(element, lo)));
          Value inserted =
              tensor::InsertOp::create(tb, lloc, rebased, acc[0], acc[1]);
          scf::YieldOp::create(
              tb, lloc,
              ValueRange{inserted,
                         arith::AddIOp::create(
                             tb, lloc, acc[1],
                             arith::ConstantIndexOp::create(tb, lloc, 1))});
          OpBuilder eb = branch.getElseBodyBuilder();
          scf::YieldOp::create(eb, lloc, ValueRange{acc[0], acc[1]});
          scf::YieldOp::create(lb, lloc, branch.getResults());
        });
    values = loop.getResult(0);
    position = loop.getResult(1);
  }
  SmallVector<Value> results = {lengths, values, counts};
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].getType() != op->getResult(i).getType())
      results[i] = tensor::CastOp::create(b, loc, op->getResult(i).getType(),
                                          results[i]);
  return results;
}
