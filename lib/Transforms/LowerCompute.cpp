//===- LowerCompute.cpp - The braid-lower-compute pass --------------------===//
//
// This file lowers Braid's compute ops to upstream tensor, linalg and scf
// ops (see Passes.td), the form one-shot bufferization and the scf-to-openmp
// conversion take to parallel CPU loops.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Transforms/Passes.h"

#include "LowerExchanges.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDLOWERCOMPUTEPASS
#include "braid/Transforms/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// The runtime's abort for an index outside a table: (index, rows).
static constexpr StringLiteral kIndexErrorFn = "braidrt_index_error";
/// The runtime's f32 GEMM with bias and activation, through BLAS.
static constexpr StringLiteral kLinearF32Fn = "braidrt_linear_f32";

namespace {
class ComputeLowering {
public:
  ComputeLowering(ModuleOp module) : module(module) {}
  LogicalResult lowerFunction(func::FuncOp func);

private:
  Value lowerEmbeddingBag(OpBuilder &b, EmbeddingBagOp bag, Value table);
  Value lowerLinear(OpBuilder &b, LinearOp linear);
  Value lowerLinearToRuntime(OpBuilder &b, LinearOp linear);
  Value lowerInteraction(OpBuilder &b, InteractionOp interaction);
  func::FuncOp indexErrorFn();

  ModuleOp module;
};
} // namespace

func::FuncOp ComputeLowering::indexErrorFn() {
  Type i64 = IntegerType::get(module.getContext(), 64);
  return declareRuntimeFunction(module, kIndexErrorFn, {i64, i64}, {}, false);
}

/// `value` as an index.
static Value toIndex(OpBuilder &b, Location loc, Value value) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

Value ComputeLowering::lowerEmbeddingBag(OpBuilder &b, EmbeddingBagOp bag,
                                         Value table) {
  Location loc = bag.getLoc();
  auto resultType = cast<RankedTensorType>(bag.getResult().getType());
  Type element = resultType.getElementType();
  Type accType = element.isF64() ? element : b.getF32Type();
  auto tableType = cast<RankedTensorType>(table.getType());
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value numOffsets = tensor::DimOp::create(b, loc, bag.getOffsets(), c0);
  Value numBags = arith::SubIOp::create(b, loc, numOffsets, c1);
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(numBags);
  PoolingMode mode = bag.getMode();
  Value offsets = bag.getOffsets(), indices = bag.getIndices();
  int64_t rows = tableType.getDimSize(0);
  // Every index is a row of the table, checked once before the kernel (an
  // index outside aborts the job through the runtime).
  emitIndicesCheck(b, loc, indexErrorFn(), indices,
                   arith::ConstantIndexOp::create(b, loc, rows));
  auto generate = tensor::GenerateOp::create(
      b, loc, resultType, dynamicSizes,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        Value bagIndex = ivs[0], column = ivs[1];
        Value next = arith::AddIOp::create(nb, nloc, bagIndex, c1);
        Value begin = toIndex(
            nb, nloc, tensor::ExtractOp::create(nb, nloc, offsets, bagIndex));
        Value end = toIndex(
            nb, nloc, tensor::ExtractOp::create(nb, nloc, offsets, next));
        bool isMax = mode == PoolingMode::max;
        Value init = arith::ConstantOp::create(
            nb, nloc, accType,
            nb.getFloatAttr(accType,
                            isMax ? -std::numeric_limits<double>::infinity()
                                  : 0.0));
        auto loop = scf::ForOp::create(
            nb, nloc, begin, end, c1, ValueRange{init},
            [&](OpBuilder &lb, Location lloc, Value i, ValueRange acc) {
              // Rows were checked before the kernel.
              Value safe = toIndex(
                  lb, lloc, tensor::ExtractOp::create(lb, lloc, indices, i));
              Value value =
                  tensor::ExtractOp::create(lb, lloc, table, ValueRange{safe, column});
              if (value.getType() != accType)
                value = arith::ExtFOp::create(lb, lloc, accType, value);
              Value updated =
                  isMax ? arith::MaximumFOp::create(lb, lloc, acc[0], value)
                              .getResult()
                        : arith::AddFOp::create(lb, lloc, acc[0], value)
                              .getResult();
              scf::YieldOp::create(lb, lloc, updated);
            });
        Value pooled = loop.getResult(0);
        Value size = arith::SubIOp::create(nb, nloc, end, begin);
        Value empty = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq,
                                            size, c0);
        Value zeroAcc = arith::ConstantOp::create(
            nb, nloc, accType, nb.getFloatAttr(accType, 0.0));
        if (mode == PoolingMode::mean) {
          Value count = arith::UIToFPOp::create(
              nb, nloc, accType,
              arith::IndexCastUIOp::create(nb, nloc, nb.getI64Type(), size));
          Value mean = arith::DivFOp::create(nb, nloc, pooled, count);
          pooled = arith::SelectOp::create(nb, nloc, empty, zeroAcc, mean);
        } else if (isMax) {
          pooled = arith::SelectOp::create(nb, nloc, empty, zeroAcc, pooled);
        }
        if (pooled.getType() != element)
          pooled = arith::TruncFOp::create(nb, nloc, element, pooled);
        tensor::YieldOp::create(nb, nloc, pooled);
      });
  return generate.getResult();
}

Value ComputeLowering::lowerLinearToRuntime(OpBuilder &b, LinearOp linear) {
  Location loc = linear.getLoc();
  Type f32 = b.getF32Type();
  auto unranked = UnrankedMemRefType::get(f32, 0);
  func::FuncOp fn = declareRuntimeFunction(
      module, kLinearF32Fn,
      {unranked, unranked, unranked, unranked, b.getI32Type()}, {}, true);
  auto toUnranked = [&](Value tensor) {
    return toUnrankedBuffer(b, loc, tensor);
  };
  auto resultType = cast<RankedTensorType>(linear.getResult().getType());
  auto outType = MemRefType::get(resultType.getShape(), f32);
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(
        tensor::DimOp::create(b, loc, linear.getInput(), 0).getResult());
  Value out = memref::AllocOp::create(b, loc, outType, dynamicSizes);
  Value activation = arith::ConstantIntOp::create(
      b, loc, static_cast<int64_t>(linear.getActivation()), 32);
  func::CallOp::create(
      b, loc, fn,
      ValueRange{toUnranked(linear.getInput()), toUnranked(linear.getWeight()),
                 toUnranked(linear.getBias()),
                 memref::CastOp::create(b, loc, unranked, out), activation});
  return bufferization::ToTensorOp::create(b, loc, resultType, out,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value ComputeLowering::lowerLinear(OpBuilder &b, LinearOp linear) {
  Location loc = linear.getLoc();
  auto resultType = cast<RankedTensorType>(linear.getResult().getType());
  Type element = resultType.getElementType();
  Value input = linear.getInput();
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(
        tensor::DimOp::create(b, loc, input, 0).getResult());
  Value empty =
      tensor::EmptyOp::create(b, loc, resultType, dynamicSizes).getResult();
  Value zero = arith::ConstantOp::create(b, loc, element,
                                         b.getFloatAttr(element, 0.0));
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
      b, loc, resultType, ValueRange{input, linear.getWeight()},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = arith::MulFOp::create(nb, nloc, args[0], args[1]);
        linalg::YieldOp::create(nb, nloc,
                                arith::AddFOp::create(nb, nloc, args[2], product)
                                    .getResult());
      });
  AffineExpr i, j;
  bindDims(ctx, i, j);
  auto epilogueMaps = SmallVector<AffineMap>{
      AffineMap::get(2, 0, {j}, ctx), AffineMap::get(2, 0, {i, j}, ctx)};
  Activation activation = linear.getActivation();
  auto epilogue = linalg::GenericOp::create(
      b, loc, resultType, ValueRange{linear.getBias()},
      ValueRange{contraction.getResult(0)}, epilogueMaps,
      {utils::IteratorType::parallel, utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value value = arith::AddFOp::create(nb, nloc, args[1], args[0]);
        Value zeroValue = arith::ConstantOp::create(
            nb, nloc, element, nb.getFloatAttr(element, 0.0));
        if (activation == Activation::relu) {
          value = arith::MaximumFOp::create(nb, nloc, value, zeroValue);
        } else if (activation == Activation::sigmoid) {
          Value one = arith::ConstantOp::create(nb, nloc, element,
                                                nb.getFloatAttr(element, 1.0));
          Value negated = arith::NegFOp::create(nb, nloc, value);
          Value exp = math::ExpOp::create(nb, nloc, negated);
          value = arith::DivFOp::create(
              nb, nloc, one, arith::AddFOp::create(nb, nloc, one, exp));
        }
        linalg::YieldOp::create(nb, nloc, value);
      });
  return epilogue.getResult(0);
}

Value ComputeLowering::lowerInteraction(OpBuilder &b, InteractionOp interaction) {
  Location loc = interaction.getLoc();
  auto resultType = cast<RankedTensorType>(interaction.getResult().getType());
  SmallVector<Value> features = {interaction.getDense()};
  llvm::append_range(features, interaction.getEmbeddings());
  Value stacked =
      tensor::ConcatOp::create(b, loc, /*dim=*/1, features).getResult();
  if (interaction.getKind() == InteractionKind::cat)
    return stacked.getType() == resultType
               ? stacked
               : tensor::CastOp::create(b, loc, resultType, stacked).getResult();
  // dot: columns [0, d) are the dense vector; column d + p is the dot
  // product of the p-th pair (i, k), i > k, in row-major order.
  int64_t d = cast<RankedTensorType>(interaction.getDense().getType())
                  .getDimSize(1);
  SmallVector<int64_t> pairI, pairK;
  for (int64_t i = 1; i < int64_t(features.size()); ++i)
    for (int64_t k = 0; k < i; ++k) {
      pairI.push_back(i);
      pairK.push_back(k);
    }
  auto pairType =
      RankedTensorType::get({int64_t(pairI.size())}, b.getIndexType());
  Value firstOf = arith::ConstantOp::create(
      b, loc, pairType, DenseElementsAttr::get(pairType, ArrayRef(pairI)));
  Value secondOf = arith::ConstantOp::create(
      b, loc, pairType, DenseElementsAttr::get(pairType, ArrayRef(pairK)));
  Type element = resultType.getElementType();
  SmallVector<Value> dynamicSizes;
  if (resultType.isDynamicDim(0))
    dynamicSizes.push_back(
        tensor::DimOp::create(b, loc, interaction.getDense(), 0).getResult());
  auto generate = tensor::GenerateOp::create(
      b, loc, resultType, dynamicSizes,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        Value row = ivs[0], column = ivs[1];
        Value dValue = arith::ConstantIndexOp::create(nb, nloc, d);
        Value isDense = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::slt, column, dValue);
        auto branch = scf::IfOp::create(
            nb, nloc, TypeRange{element}, isDense, /*withElse=*/true);
        OpBuilder tb = branch.getThenBodyBuilder();
        scf::YieldOp::create(
            tb, nloc,
            tensor::ExtractOp::create(tb, nloc, stacked, ValueRange{row, column})
                .getResult());
        OpBuilder eb = branch.getElseBodyBuilder();
        Value pair = arith::SubIOp::create(eb, nloc, column, dValue);
        Value first = arith::MulIOp::create(
            eb, nloc, tensor::ExtractOp::create(eb, nloc, firstOf, pair), dValue);
        Value second = arith::MulIOp::create(
            eb, nloc, tensor::ExtractOp::create(eb, nloc, secondOf, pair), dValue);
        Value c0 = arith::ConstantIndexOp::create(eb, nloc, 0);
        Value c1 = arith::ConstantIndexOp::create(eb, nloc, 1);
        Value zero = arith::ConstantOp::create(eb, nloc, element,
                                               eb.getFloatAttr(element, 0.0));
        auto loop = scf::ForOp::create(
            eb, nloc, c0, dValue, c1, ValueRange{zero},
            [&](OpBuilder &lb, Location lloc, Value c, ValueRange acc) {
              Value a = tensor::ExtractOp::create(
                  lb, lloc, stacked,
                  ValueRange{row, arith::AddIOp::create(lb, lloc, first, c)});
              Value bv = tensor::ExtractOp::create(
                  lb, lloc, stacked,
                  ValueRange{row, arith::AddIOp::create(lb, lloc, second, c)});
              Value product = arith::MulFOp::create(lb, lloc, a, bv);
              scf::YieldOp::create(
                  lb, lloc,
                  arith::AddFOp::create(lb, lloc, acc[0], product).getResult());
            });
        scf::YieldOp::create(eb, nloc, loop.getResult(0));
        tensor::YieldOp::create(nb, nloc, branch.getResult(0));
      });
  return generate.getResult();
}

LogicalResult ComputeLowering::lowerFunction(func::FuncOp func) {
  if (func.isExternal())
    return success();
  // The tables this function looks up, in order of first use, become
  // trailing arguments.
  llvm::MapVector<StringAttr, Value> tableArgs;
  Block &body = func.getBody().front();
  WalkResult walk = func.walk([&](Operation *op) {
    bool lowered = isa<AllToAllOp, ReduceScatterOp, AllToAllStartOp,
                       ReduceScatterStartOp, WaitOp>(op) ||
                   isa<BucketizeOp, AllToAllVOp, CombineShardsOp>(op);
    if (!lowered && isa<CollectiveOpInterface, PermuteOp, WaitOp, RankOp,
                        WorldSizeOp>(op)) {
      op->emitError() << "the CPU backend does not lower '" << op->getName()
                      << "' yet";
      return WalkResult::interrupt();
    }
    // Lookups read a table: the whole of it, or this rank's shard.
    FlatSymbolRefAttr tableRef;
    Type argType;
    if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
      if (bag.getPerSampleWeights()) {
        bag.emitError() << "the CPU backend does not lower per-sample weights yet";
        return WalkResult::interrupt();
      }
      tableRef = bag.getTableAttr();
    } else if (auto shard = dyn_cast<ShardEmbeddingBagOp>(op)) {
      tableRef = shard.getTableAttr();
    } else {
      return WalkResult::advance();
    }
    auto table = SymbolTable::lookupNearestSymbolFrom<TableOp>(op, tableRef);
    if (!table) {
      op->emitError() << "'" << tableRef.getValue()
                      << "' does not name a braid.table";
      return WalkResult::interrupt();
    }
    argType = isa<ShardEmbeddingBagOp>(op)
                  ? RankedTensorType::get(
                        {ShapedType::kDynamic, ShapedType::kDynamic},
                        table.getElementType())
                  : Type(table.getTableType());
    StringAttr name = table.getSymNameAttr();
    if (!tableArgs.count(name)) {
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, argType,
                                     DictionaryAttr::get(
                                         func.getContext(),
                                         {NamedAttribute(
                                             BraidDialect::kTableAttrName,
                                             name)}),
                                     table.getLoc())))
        return WalkResult::interrupt();
      tableArgs[name] = func.getArgument(index);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  PendingExchanges pending;
  SmallVector<Operation *> started;
  for (Operation &op : llvm::make_early_inc_range(body)) {
    OpBuilder b(&op);
    Value lowered;
    if (isa<AllToAllStartOp, ReduceScatterStartOp, WaitOp>(op)) {
      if (failed(lowerAsyncExchange(b, &op, module, pending)))
        return failure();
      if (isa<WaitOp>(op))
        op.erase();
      else
        started.push_back(&op);
      continue;
    }
    if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
      auto table = SymbolTable::lookupNearestSymbolFrom<TableOp>(
          bag, bag.getTableAttr());
      lowered = lowerEmbeddingBag(b, bag, tableArgs[table.getSymNameAttr()]);
    } else if (auto linear = dyn_cast<LinearOp>(op)) {
      // f32 GEMMs go to BLAS through the runtime; others are generated.
      lowered = linear.getInput().getType().getElementType().isF32()
                    ? lowerLinearToRuntime(b, linear)
                    : lowerLinear(b, linear);
    } else if (auto interaction = dyn_cast<InteractionOp>(op)) {
      lowered = lowerInteraction(b, interaction);
    } else if (isa<AllToAllOp, AllToAllVOp, ReduceScatterOp, BucketizeOp,
                   ShardEmbeddingBagOp, CombineShardsOp>(op)) {
      Value table;
      if (auto shard = dyn_cast<ShardEmbeddingBagOp>(op))
        table = tableArgs[shard.getTableAttr().getAttr()];
      FailureOr<SmallVector<Value>> results =
          lowerExchangeOp(b, &op, module, indexErrorFn(), table);
      if (failed(results))
        return failure();
      op.replaceAllUsesWith(*results);
      op.erase();
      continue;
    } else {
      continue;
    }
    op.getResult(0).replaceAllUsesWith(lowered);
    op.erase();
  }
  for (Operation *start : started) {
    if (!start->use_empty())
      return start->emitError() << "the CPU backend needs a braid.wait for "
                                   "every started exchange";
    start->erase();
  }
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(func.getContext()));
  return success();
}

namespace {
struct BraidLowerComputePass
    : braid::impl::BraidLowerComputePassBase<BraidLowerComputePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ComputeLowering lowering(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (failed(lowering.lowerFunction(func)))
        return signalPassFailure();
    // The tables are function arguments now.
    for (auto table : llvm::to_vector(module.getOps<TableOp>()))
      table.erase();
  }
};
} // namespace
