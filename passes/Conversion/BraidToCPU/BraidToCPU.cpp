//===- BraidToCPU.cpp - The convert-braid-to-cpu pass ---------------------===//
//
// This file lowers Braid's compute ops to upstream tensor, linalg and scf
// ops (see Passes.td), the form one-shot bufferization and the scf-to-openmp
// conversion take to parallel CPU loops.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "LowerExchanges.h"
#include "RuntimeFunctions.h"
#include "braid/Conversion/BraidToLoops/DenseKernels.h"
#include "braid/Conversion/BraidToLoops/PoolingKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/MapVector.h"

#include <type_traits>

namespace mlir::braid {
#define GEN_PASS_DEF_CONVERTBRAIDTOCPUPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// Builds the CPU form of Braid's compute ops.
class ComputeLowering {
public:
  ComputeLowering(ModuleOp module, bool parallelChecks)
      : module(module), parallelChecks(parallelChecks) {}

  FailureOr<Value> lowerEmbeddingBag(OpBuilder &b, EmbeddingBagOp bag,
                                     Value table, int64_t columnLanes);
  Value lowerLinearToRuntime(OpBuilder &b, LinearOp linear);

private:
  func::FuncOp indexErrorFn();

  ModuleOp module;
  /// convert-braid-to-cpu's parallel-checks.
  bool parallelChecks;
};
} // namespace

/// The runtime's abort for an index outside a table: (index, rows).
static func::FuncOp declareIndexError(ModuleOp module) {
  Type i64 = IntegerType::get(module.getContext(), 64);
  return declareRuntimeFunction(module, runtime::kIndexError, {i64, i64}, {},
                                false);
}

func::FuncOp CpuLoweringState::indexError() const {
  return declareIndexError(module);
}

func::FuncOp mlir::braid::declareOffsetsError(ModuleOp module) {
  Type i64 = IntegerType::get(module.getContext(), 64);
  return declareRuntimeFunction(module, runtime::kOffsetsError, {i64, i64}, {},
                                false);
}

func::FuncOp ComputeLowering::indexErrorFn() {
  return declareIndexError(module);
}

FailureOr<Value> ComputeLowering::lowerEmbeddingBag(OpBuilder &b,
                                                    EmbeddingBagOp bag,
                                                    Value table,
                                                    int64_t columnLanes) {
  Location loc = bag.getLoc();
  auto resultType = cast<RankedTensorType>(bag.getResult().getType());
  Type element = resultType.getElementType();
  int64_t rows = cast<RankedTensorType>(table.getType()).getDimSize(0);
  // Every index is a row of the table, checked once before the kernel (an
  // index outside aborts the job through the runtime).
  emitIndicesCheck(b, loc, indexErrorFn(), bag.getIndices(),
                   arith::ConstantIndexOp::create(b, loc, rows),
                   parallelChecks);
  emitOffsetsCheck(b, loc, declareOffsetsError(module), bag.getOffsets(),
                   bag.getIndices(), parallelChecks);
  BagPooling pooling;
  if (Value weights = bag.getPerSampleWeights()) {
    // One weight per index, checked at run time when a size is dynamic.
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value numWeights = tensor::DimOp::create(b, loc, weights, c0);
    Value numIndices = tensor::DimOp::create(b, loc, bag.getIndices(), c0);
    Value mismatch = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           numWeights, numIndices);
    emitAbortIf(b, loc,
                declareRuntimeFunction(module, runtime::kWeightsError,
                                       {b.getI64Type(), b.getI64Type()}, {},
                                       false),
                mismatch, numWeights, numIndices);
    pooling.weights = weights;
  }
  pooling.table = table;
  pooling.rows = bag.getIndices();
  pooling.starts = bag.getOffsets();
  pooling.resultType = resultType;
  pooling.accumulatorType = element.isF64() ? element : b.getF32Type();
  pooling.mode = bag.getMode();
  pooling.columnLanes = columnLanes;
  return buildBagPooling(b, loc, pooling);
}

Value ComputeLowering::lowerLinearToRuntime(OpBuilder &b, LinearOp linear) {
  Location loc = linear.getLoc();
  Type f32 = b.getF32Type();
  auto unranked = UnrankedMemRefType::get(f32, 0);
  func::FuncOp fn = declareRuntimeFunction(
      module, runtime::kLinearF32,
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

/// Checks what the CPU backend cannot lower yet and turns the tables `func`
/// looks up, in order of first use, into trailing arguments recorded in
/// `state`.
static LogicalResult prepareFunction(func::FuncOp func,
                                     CpuLoweringState &state) {
  if (func.isExternal())
    return success();
  llvm::MapVector<StringAttr, Value> tableArgs;
  llvm::DenseMap<StringAttr, Value> stateArgs;
  SmallVector<std::tuple<StringAttr, Type, Location>> stateTypes;
  WalkResult walk = func.walk([&](Operation *op) {
    bool lowered = isa<AllToAllOp, ReduceScatterOp, AllToAllStartOp,
                       ReduceScatterStartOp, AllToAllVStartOp, WaitOp>(op) ||
                   isa<BucketizeOp, AllToAllVOp, CombineShardsOp>(op) ||
                   isa<AllReduceOp, AllReduceStartOp, AllGatherOp,
                       AllGatherStartOp, RankOp>(op);
    if (!lowered &&
        isa<CollectiveOpInterface, PermuteOp, WaitOp, RankOp, WorldSizeOp>(
            op)) {
      op->emitError() << "the CPU backend does not lower '" << op->getName()
                      << "' yet";
      return WalkResult::interrupt();
    }
    // A started exchange completes at its waits alone.
    if (isa<AllToAllStartOp, ReduceScatterStartOp, AllReduceStartOp,
            AllGatherStartOp, AllToAllVStartOp>(op) &&
        llvm::any_of(op->getUsers(),
                     [](Operation *user) { return !isa<WaitOp>(user); })) {
      op->emitError() << "the CPU backend needs the token of a started "
                         "exchange to go to braid.wait alone";
      return WalkResult::interrupt();
    }
    // Lookups read a table, the whole of it or this rank's shard; a
    // training step's updates write it, and its optimizer state.
    FlatSymbolRefAttr tableRef;
    Type argType;
    DictionaryAttr optimizer;
    bool shard = isa<ShardEmbeddingBagOp, ShardEmbeddingBagUpdateOp>(op);
    if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
      tableRef = bag.getTableAttr();
    } else if (auto lookup = dyn_cast<ShardEmbeddingBagOp>(op)) {
      tableRef = lookup.getTableAttr();
    } else if (auto update = dyn_cast<EmbeddingBagUpdateOp>(op)) {
      tableRef = update.getTableAttr();
      optimizer = update.getOptimizer();
    } else if (auto update = dyn_cast<ShardEmbeddingBagUpdateOp>(op)) {
      tableRef = update.getTableAttr();
      optimizer = update.getOptimizer();
    } else if (auto grad = dyn_cast<EmbeddingBagGradOp>(op)) {
      tableRef = grad.getTableAttr();
    } else if (auto update = dyn_cast<TableUpdateOp>(op)) {
      tableRef = update.getTableAttr();
      optimizer = update.getOptimizer();
    } else {
      return WalkResult::advance();
    }
    auto table = SymbolTable::lookupNearestSymbolFrom<TableOp>(op, tableRef);
    if (!table) {
      op->emitError() << "'" << tableRef.getValue()
                      << "' does not name a braid.table";
      return WalkResult::interrupt();
    }
    argType = shard ? RankedTensorType::get(
                          {ShapedType::kDynamic, ShapedType::kDynamic},
                          table.getElementType())
                    : Type(table.getTableType());
    StringAttr name = table.getSymNameAttr();
    if (!tableArgs.count(name)) {
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(
              index, argType,
              DictionaryAttr::get(
                  func.getContext(),
                  {NamedAttribute(BraidDialect::kTableAttrName, name)}),
              table.getLoc())))
        return WalkResult::interrupt();
      tableArgs[name] = func.getArgument(index);
    }
    // An update's optimizer state follows the tables, one per table.
    std::optional<Type> stateType =
        optimizer ? getTableStateType(func.getContext(), optimizer)
                  : std::nullopt;
    if (stateType && !stateArgs.count(name)) {
      stateArgs[name] = Value();
      stateTypes.push_back({name, *stateType, table.getLoc()});
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (auto [name, type, loc] : stateTypes) {
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(
            index, type,
            DictionaryAttr::get(
                func.getContext(),
                {NamedAttribute(BraidDialect::kTableStateAttrName, name)}),
            loc)))
      return failure();
    state.tableStateArgs[{func, name}] = func.getArgument(index);
  }

  for (auto [name, argument] : tableArgs)
    state.tableArgs[{func, name}] = argument;
  return success();
}

/// What every lowered function gets: read-only arguments, but for the
/// tables a training step updates and their optimizer state, and a C
/// interface.
static void finishFunction(func::FuncOp func,
                           const llvm::DenseSet<Value> &updated) {
  if (func.isExternal())
    return;
  // The caller's buffers are read-only: the host calls a compiled program
  // again and again on the same inputs and tables. A training step updates
  // its tables and their state in place, for the next step.
  for (BlockArgument argument : func.getArguments())
    if (isa<TensorType>(argument.getType()))
      func.setArgAttr(
          argument.getArgNumber(),
          bufferization::BufferizationDialect::kWritableAttrName,
          BoolAttr::get(func.getContext(), updated.contains(argument)));
  // The outlined kernels are internal; only the program's entry points get
  // a C interface.
  if (func.isPublic())
    func->setAttr("llvm.emit_c_interface", UnitAttr::get(func.getContext()));
}

namespace {
/// A compute op's pattern: the ComputeLowering builder for its family.
template <typename OpTy> struct ComputeOpLowering : OpConversionPattern<OpTy> {
  ComputeOpLowering(MLIRContext *context, CpuLoweringState &state)
      : OpConversionPattern<OpTy>(context), state(state) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ComputeLowering lowering(state.module, state.parallelChecks);
    FailureOr<Value> lowered;
    if constexpr (std::is_same_v<OpTy, EmbeddingBagOp>)
      lowered = lowering.lowerEmbeddingBag(
          rewriter, op, state.tableArgument(op, op.getTableAttr()),
          state.poolingLanes);
    else if constexpr (std::is_same_v<OpTy, LinearOp>)
      // f32 GEMMs go to BLAS through the runtime; others are generated.
      lowered = op.getInput().getType().getElementType().isF32()
                    ? lowering.lowerLinearToRuntime(rewriter, op)
                    : buildLinearKernel(rewriter, op);
    else
      lowered = buildInteractionKernel(
          rewriter, op,
          declareRuntimeFunction(
              state.module, runtime::kRowsError,
              TypeRange{rewriter.getI64Type(), rewriter.getI64Type()}, {},
              false),
          state.catLanes);
    if (failed(lowered))
      return failure();
    rewriter.replaceOp(op, *lowered);
    return success();
  }
  CpuLoweringState &state;
};
} // namespace

namespace {
/// braid.slice_bags on tensors: the batch checked as a lookup checks it, the
/// range's indices a slice of the batch's (a view once bufferized), its
/// offsets a slice less the first (an elementwise kernel).
struct SliceBagsLowering : OpConversionPattern<SliceBagsOp> {
  SliceBagsLowering(MLIRContext *context, CpuLoweringState &state)
      : OpConversionPattern<SliceBagsOp>(context), state(state) {}
  LogicalResult
  matchAndRewrite(SliceBagsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value indices = adaptor.getIndices(), offsets = adaptor.getOffsets();
    emitOffsetsCheck(rewriter, loc, declareOffsetsError(state.module), offsets,
                     indices, state.parallelChecks);
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    Value c1 = index(1);
    Value bags = arith::SubIOp::create(
        rewriter, loc, tensor::DimOp::create(rewriter, loc, offsets, 0), c1);
    int64_t start = op.getStartAttr().getInt();
    Value first = arith::MinUIOp::create(rewriter, loc, index(start), bags);
    Value last = arith::MinUIOp::create(
        rewriter, loc, index(start + op.getCountAttr().getInt()), bags);
    Value base = tensor::ExtractOp::create(rewriter, loc, offsets, first);
    auto asIndex = [&](Value value) -> Value {
      return arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                        value);
    };
    Value begin = asIndex(base);
    Value end =
        asIndex(tensor::ExtractOp::create(rewriter, loc, offsets, last));
    Value rangeIndices = tensor::ExtractSliceOp::create(
        rewriter, loc, cast<RankedTensorType>(op.getResultIndices().getType()),
        indices, ValueRange{begin},
        ValueRange{arith::SubIOp::create(rewriter, loc, end, begin)},
        ValueRange{c1});
    Value entries = arith::AddIOp::create(
        rewriter, loc, arith::SubIOp::create(rewriter, loc, last, first), c1);
    auto offsetsType = cast<RankedTensorType>(op.getResultOffsets().getType());
    Value rangeOffsets = tensor::ExtractSliceOp::create(
        rewriter, loc, offsetsType, offsets, ValueRange{first},
        ValueRange{entries}, ValueRange{c1});
    Value bases = tensor::SplatOp::create(rewriter, loc, offsetsType, base,
                                          ValueRange{entries});
    Value rebased =
        arith::SubIOp::create(rewriter, loc, rangeOffsets, bases);
    rewriter.replaceOp(op, {rangeIndices, rebased});
    return success();
  }
  CpuLoweringState &state;
};
} // namespace

void mlir::braid::populateBraidComputeToCPUPatterns(RewritePatternSet &patterns,
                                                    CpuLoweringState &state) {
  patterns.add<ComputeOpLowering<EmbeddingBagOp>, ComputeOpLowering<LinearOp>,
               ComputeOpLowering<InteractionOp>, SliceBagsLowering>(
      patterns.getContext(), state);
}

/// The name of the parameter `value` is, where it is a function argument
/// carrying one; empty otherwise.
static StringRef paramNameOf(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      if (auto param = func.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), BraidDialect::kParamAttrName))
        return param.getValue();
  return {};
}

/// What `op`'s kernel computes, as an identifier: the op's name, then its
/// table, interaction kind, parameter or layer (`embedding_bag_user_id`,
/// `interaction_dot`, `dense_update_bottom_mlp_0_bias`,
/// `linear_grad_top_mlp_0`).
static std::string kernelNameOf(Operation *op) {
  std::string name = op->getName().stripDialect().str();
  if (auto table = op->getAttrOfType<FlatSymbolRefAttr>("table")) {
    name += "_" + table.getValue().str();
  } else if (auto interaction = dyn_cast<InteractionOp>(op)) {
    name += "_" + stringifyInteractionKind(interaction.getKind()).str();
  } else if (auto update = dyn_cast<DenseUpdateOp>(op)) {
    if (StringRef param = paramNameOf(update.getParam()); !param.empty())
      name += "_" + param.str();
  } else if (auto fused = dyn_cast<FusedDenseUpdateOp>(op)) {
    // After its first parameter.
    if (StringRef param = paramNameOf(fused.getParams().front());
        !param.empty())
      name += "_" + param.str();
  } else if (auto grad = dyn_cast<LinearGradOp>(op)) {
    // The layer: its weight's name less `.weight` (`_weight`).
    if (StringRef param = paramNameOf(grad.getWeight()); !param.empty()) {
      if (!param.consume_back(".weight"))
        param.consume_back("_weight");
      name += "_" + param.str();
    }
  }
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
  return name;
}

/// Tags the location of every Braid op with what its kernel computes: a
/// fused location whose metadata is the name. The ops a conversion pattern
/// creates take the location of the op they replace, so the name reaches
/// the loops, and a GPU target's kernels (braid-name-gpu-kernels) are named
/// by it. Diagnostics still point at the op's own place.
static void nameKernelLocations(ModuleOp module) {
  module.walk([](Operation *op) {
    if (op->getDialect() && isa<BraidDialect>(op->getDialect()) &&
        !isa<TableOp>(op))
      op->setLoc(
          FusedLoc::get(op->getContext(), {op->getLoc()},
                        StringAttr::get(op->getContext(), kernelNameOf(op))));
  });
}

namespace {
struct ConvertBraidToCPUPass
    : braid::impl::ConvertBraidToCPUPassBase<ConvertBraidToCPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    CpuLoweringState state;
    state.module = module;
    state.embeddingUpdateKernel = embeddingUpdateKernel;
    state.asyncCounts = asyncCounts;
    auto reject = [&](const Twine &message) {
      module.emitError() << "convert-braid-to-cpu: " << message;
      signalPassFailure();
    };
    if (poolingLanes < 0)
      return reject("pooling-lanes must not be negative, got " +
                    Twine(static_cast<int64_t>(poolingLanes)));
    if (biasGradColumns < 1 || biasGradColumns > 256)
      return reject("bias-grad-columns must be in [1, 256], got " +
                    Twine(static_cast<int64_t>(biasGradColumns)));
    if (catLanes < 0 || catLanes > 1024)
      return reject("cat-lanes must be in [0, 1024], got " +
                    Twine(static_cast<int64_t>(catLanes)));
    state.poolingLanes = poolingLanes;
    state.biasGradColumns = biasGradColumns;
    state.catLanes = catLanes;
    state.parallelChecks = parallelChecks;
    // Fused exchanges in the terms the rest of the lowering knows.
    if (failed(expandFusedExchanges(module, /*outline=*/true)))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(prepareFunction(func, state)))
        return signalPassFailure();
    // The arguments a training step writes: the tables it updates (found
    // before their updates are lowered) and their optimizer state.
    llvm::DenseSet<Value> updated;
    for (auto [key, argument] : state.tableStateArgs)
      updated.insert(argument);
    module.walk([&](Operation *op) {
      if (isa<EmbeddingBagUpdateOp, ShardEmbeddingBagUpdateOp, TableUpdateOp>(
              op))
        updated.insert(state.tableArgument(
            op, op->getAttrOfType<FlatSymbolRefAttr>("table")));
    });
    nameKernelLocations(module);
    outlineKernels(state);
    // Every Braid op a program runs is converted; the kernels and calls
    // they become are upstream ops.
    ConversionTarget target(getContext());
    target.addIllegalOp<EmbeddingBagOp, SliceBagsOp, LinearOp, InteractionOp,
                        AllToAllOp,
                        AllToAllVOp, ReduceScatterOp, BucketizeOp,
                        ShardEmbeddingBagOp, CombineShardsOp, AllToAllStartOp,
                        AllToAllVStartOp, ReduceScatterStartOp, WaitOp>();
    target.addIllegalOp<
        BceWithLogitsOp, LinearGradOp, InteractionGradOp, CombineShardsGradOp,
        EmbeddingBagUpdateOp, ShardEmbeddingBagUpdateOp, EmbeddingBagGradOp,
        TableUpdateOp, DenseUpdateOp, FusedDenseUpdateOp, AllReduceOp,
        AllReduceStartOp, AllGatherOp, AllGatherStartOp, RankOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateBraidComputeToCPUPatterns(patterns, state);
    populateBraidExchangeToCPUPatterns(patterns, state);
    populateBraidTrainingToCPUPatterns(patterns, state);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>())
      finishFunction(func, updated);
    // The tables are function arguments now.
    for (auto table : llvm::to_vector(module.getOps<TableOp>()))
      table.erase();
  }
};
} // namespace
