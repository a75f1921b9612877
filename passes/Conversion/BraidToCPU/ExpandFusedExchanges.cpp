//===- ExpandFusedExchanges.cpp - Fused exchanges in plain terms ----------===//
//
// This file implements braid-expand-fused-exchanges, which convert-braid-to-
// cpu also runs first: a braid.fused_all_to_all_v_start becomes the one
// exchange it stands for, in ops every backend lowers.
//
// - The members' counts go in one all_to_all of a ranks x members matrix
//   (started, like the values): row j of what a rank sends holds what each
//   member sends rank j, so row s of what it receives holds what each
//   member gets from rank s.
// - The values go in one all_to_all_v of a buffer packed by destination
//   (for each rank j, every member's chunk for j in member order), with the
//   members' counts added up; with a `wire_type`, the packed buffer is
//   narrowed to it, and widened back (sign-extended) before the unpacking.
// - Where the first member's wait stood, the exchange is waited for and
//   each member's values are cut out of every sender's block, in sender
//   order; every member's wait takes its member's values.
//
// Each rank reads its counts on the host, as the all_to_all_v's own
// lowering does.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDEXPANDFUSEDEXCHANGESPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// Element `at` of a 1-D i64 tensor.
Value elementAt(OpBuilder &b, Location loc, Value counts, int64_t at) {
  Value position = arith::ConstantIndexOp::create(b, loc, at);
  return tensor::ExtractOp::create(b, loc, counts, position);
}

/// `count` (i64) as an index.
Value asIndex(OpBuilder &b, Location loc, Value count) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), count);
}

/// The dynamic 1-D slice of `source` at `offset`, `size` long.
Value sliceOf(OpBuilder &b, Location loc, Value source, Value offset,
              Value size) {
  auto type = cast<RankedTensorType>(source.getType());
  auto sliceType =
      RankedTensorType::get({ShapedType::kDynamic}, type.getElementType());
  return tensor::ExtractSliceOp::create(
      b, loc, sliceType, source, ArrayRef<OpFoldResult>{offset},
      ArrayRef<OpFoldResult>{size}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

/// `pieces` one after the other along dimension 0 (one piece as it is).
Value concatenate(OpBuilder &b, Location loc, ArrayRef<Value> pieces) {
  if (pieces.size() == 1)
    return pieces.front();
  auto type = RankedTensorType::get(
      {ShapedType::kDynamic},
      cast<RankedTensorType>(pieces.front().getType()).getElementType());
  return tensor::ConcatOp::create(b, loc, type, b.getI64IntegerAttr(0),
                                  pieces);
}

/// The values `body` computes from `arguments`: built at `b`, or, with
/// `outline`, in a new private function of the module (internal, never
/// inlined, like the lookups' outlined kernels) that `b` calls. Written out
/// in place, a function with many members and ranks holds two copy loops
/// per chunk, and llc's greedy register allocator gave up on one (40
/// row-wise tables on 2 ranks).
SmallVector<Value>
buildMaybeOutlined(OpBuilder &b, Location loc, bool outline, StringRef name,
                   ValueRange arguments,
                   function_ref<SmallVector<Value>(OpBuilder &, ValueRange)>
                       body) {
  if (!outline)
    return body(b, arguments);
  MLIRContext *context = b.getContext();
  auto module = b.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  OpBuilder at = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(
      at, loc, name, FunctionType::get(context, arguments.getTypes(), {}));
  SymbolTable(module).insert(function);
  function.setPrivate();
  function->setAttr("passthrough",
                    ArrayAttr::get(context, {StringAttr::get(context, "noinline")}));
  function->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(context, LLVM::linkage::Linkage::Internal));
  Block *entry = function.addEntryBlock();
  OpBuilder inside = OpBuilder::atBlockEnd(entry);
  SmallVector<Value> results = body(inside, entry->getArguments());
  func::ReturnOp::create(inside, loc, results);
  function.setFunctionType(FunctionType::get(
      context, arguments.getTypes(), ValueRange(results).getTypes()));
  return func::CallOp::create(b, loc, function, arguments).getResults();
}

LogicalResult expand(FusedAllToAllVStartOp fused, bool outline) {
  Block *block = fused->getBlock();
  // The members' waits, which must be in the exchange's block.
  SmallVector<SmallVector<WaitOp>> waits(fused.getTokens().size());
  WaitOp first;
  for (auto [m, token] : llvm::enumerate(fused.getTokens()))
    for (Operation *user : token.getUsers()) {
      auto wait = dyn_cast<WaitOp>(user);
      if (!wait || wait->getBlock() != block)
        return fused.emitOpError()
               << "can be expanded only where each token is read by "
                  "braid.wait ops in its block";
      waits[m].push_back(wait);
      if (!first || wait->isBeforeInBlock(first))
        first = wait;
    }

  if (!first && !block->mightHaveTerminator())
    return fused.emitOpError()
           << "is waited for nowhere, in a block without a terminator to "
              "wait before";
  int64_t members = fused.getInputs().size();
  int64_t ranks =
      cast<RankedTensorType>(fused.getSendCounts().front().getType())
          .getDimSize(0);
  if (ranks > FusedAllToAllVStartOp::kMaxChunks / members)
    return fused.emitOpError()
           << "has " << members << " members over " << ranks
           << " ranks: more than the "
           << FusedAllToAllVStartOp::kMaxChunks << " chunks it is expanded with";
  OpBuilder b(fused);
  Location loc = fused.getLoc();
  auto i64Vector = [&](int64_t size) {
    return RankedTensorType::get({size}, b.getI64Type());
  };
  std::optional<Type> wire = fused.getWireType();
  Type element = cast<RankedTensorType>(fused.getInputs().front().getType())
                     .getElementType();

  // The values, packed by destination; the counts, read once as scalars,
  // give the summed counts and the count matrix (built from scalars, so
  // that no kernel runs for them).
  auto pack = [&](OpBuilder &b, ValueRange arguments) -> SmallVector<Value> {
    ValueRange inputs = arguments.take_front(members);
    ValueRange counts = arguments.drop_front(members);
    SmallVector<Value> pieces, totals, matrix;
    SmallVector<Value> offsets(members,
                               arith::ConstantIndexOp::create(b, loc, 0));
    for (int64_t j = 0; j < ranks; ++j) {
      Value total;
      for (int64_t m = 0; m < members; ++m) {
        Value raw = elementAt(b, loc, counts[m], j);
        matrix.push_back(raw);
        total = total ? arith::AddIOp::create(b, loc, total, raw).getResult()
                      : raw;
        Value count = asIndex(b, loc, raw);
        pieces.push_back(sliceOf(b, loc, inputs[m], offsets[m], count));
        offsets[m] = arith::AddIOp::create(b, loc, offsets[m], count);
      }
      totals.push_back(total);
    }
    // The values move as the wire type, where the exchange has one.
    Value packed = concatenate(b, loc, pieces);
    if (wire)
      packed = arith::TruncIOp::create(
          b, loc, RankedTensorType::get({ShapedType::kDynamic}, *wire), packed);
    // Row j of the count matrix goes to rank j.
    return {packed,
            tensor::FromElementsOp::create(b, loc, i64Vector(ranks), totals),
            tensor::FromElementsOp::create(
                b, loc, i64Vector(ranks * members), matrix)};
  };
  SmallVector<Value> operands(fused.getInputs());
  llvm::append_range(operands, fused.getSendCounts());
  auto function = fused->getParentOfType<func::FuncOp>();
  std::string caller = function ? function.getSymName().str() : "module";
  SmallVector<Value> packing = buildMaybeOutlined(
      b, loc, outline, "__braid_" + caller + "_pack_indices", operands, pack);
  Value packed = packing[0], summed = packing[1], flat = packing[2];
  SmallVector<int64_t> world;
  for (int64_t r = 0; r < ranks; ++r)
    world.push_back(r);
  Value countsToken = AllToAllStartOp::create(
      b, loc, TokenType::get(b.getContext(), i64Vector(ranks * members)), flat,
      /*split_dim=*/0, /*concat_dim=*/0,
      b.getDenseI64ArrayAttr(SmallVector<int64_t>(ranks * ranks, members)),
      ReplicaGroupsAttr::get(b.getContext(), ranks, world));

  auto valueType = RankedTensorType::get(
      {ShapedType::kDynamic},
      cast<RankedTensorType>(packed.getType()).getElementType());
  Value token = AllToAllVStartOp::create(
      b, loc, TokenType::get(b.getContext(), valueType), packed, summed);

  // Waited for where the first member's wait stood (at the block's end
  // when no member is waited for: every rank still takes part).
  if (first)
    b.setInsertionPoint(first);
  else
    b.setInsertionPoint(block->getTerminator());
  Value received =
      WaitOp::create(b, loc, i64Vector(ranks * members), countsToken);
  Value values = WaitOp::create(b, loc, valueType, token);
  auto unpack = [&](OpBuilder &b, ValueRange arguments) -> SmallVector<Value> {
    Value values = arguments[0], received = arguments[1];
    // Widened back to the members' type before they are cut apart.
    if (wire)
      values = arith::ExtSIOp::create(
          b, loc, RankedTensorType::get({ShapedType::kDynamic}, element),
          values);
    SmallVector<SmallVector<Value>> parts(members);
    Value base = arith::ConstantIndexOp::create(b, loc, 0);
    for (int64_t s = 0; s < ranks; ++s)
      for (int64_t m = 0; m < members; ++m) {
        Value count =
            asIndex(b, loc, elementAt(b, loc, received, s * members + m));
        parts[m].push_back(sliceOf(b, loc, values, base, count));
        base = arith::AddIOp::create(b, loc, base, count);
      }
    SmallVector<Value> results;
    for (ArrayRef<Value> pieces : parts)
      results.push_back(concatenate(b, loc, pieces));
    return results;
  };
  SmallVector<Value> memberValues =
      buildMaybeOutlined(b, loc, outline, "__braid_" + caller + "_unpack_indices",
                         ValueRange{values, received}, unpack);
  for (int64_t m = 0; m < members; ++m) {
    Value member = memberValues[m];
    for (WaitOp wait : waits[m]) {
      Value result = member;
      if (result.getType() != wait.getResult().getType())
        result = tensor::CastOp::create(b, loc, wait.getResult().getType(),
                                        member);
      wait.getResult().replaceAllUsesWith(result);
      wait.erase();
    }
  }
  fused.erase();
  return success();
}
} // namespace

LogicalResult mlir::braid::expandFusedExchanges(ModuleOp module,
                                                bool outline) {
  SmallVector<FusedAllToAllVStartOp> fused;
  module.walk([&](FusedAllToAllVStartOp op) { fused.push_back(op); });
  for (FusedAllToAllVStartOp op : fused)
    if (failed(expand(op, outline)))
      return failure();
  return success();
}

namespace {
struct BraidExpandFusedExchangesPass
    : braid::impl::BraidExpandFusedExchangesPassBase<
          BraidExpandFusedExchangesPass> {
  void runOnOperation() override {
    if (failed(expandFusedExchanges(getOperation(), /*outline=*/false)))
      signalPassFailure();
  }
};
} // namespace
