//===- LowerTraining.cpp - CPU lowering of the training step's ops --------===//
//
// This file holds convert-braid-to-cpu's patterns for the ops
// braid-differentiate emits: the gradient exchanges (all_reduce, all_gather)
// and the training kernels (the loss, the backward of linear layers,
// interactions and shard assembly, the fused embedding updates and the
// dense optimizer step). Most become calls of the runtime's training
// kernels (runtime/lib/Training.cpp) through MLIR's C interface. The
// interactions' backward is a generated kernel like their forward, as are
// a dense layer's activation derivative and bias gradient (the runtime
// runs its two GEMMs), and so
// is the fused embedding update of sum and mean lookups with the pass's
// embedding-update-kernel (the runtime groups the entries by row, then a
// forall owns one row per iteration). Tables and their optimizer state are
// updated in place through writable buffers of the function's arguments.
//
//===----------------------------------------------------------------------===//

#include "LowerExchanges.h"
#include "RuntimeFunctions.h"
#include "braid/Conversion/BraidToLoops/DenseKernels.h"
#include "braid/Conversion/BraidToLoops/DenseUpdateKernel.h"
#include "braid/Conversion/BraidToLoops/EmbeddingUpdateKernel.h"
#include "braid/Conversion/BraidToLoops/ShardKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>
#include <type_traits>

using namespace mlir;
using namespace mlir::braid;

/// The number compiled programs pass for an optimizer type
/// (braidrt/OptimizerMath.h).
static int64_t optimizerNumber(StringRef type) {
  return llvm::StringSwitch<int64_t>(type)
      .Case("sgd", 0)
      .Case("adagrad", 1)
      .Case("rowwise_adagrad", 2)
      .Case("adam", 3)
      .Default(-1);
}

std::optional<Type> mlir::braid::getTableStateType(MLIRContext *context,
                                                   DictionaryAttr optimizer) {
  auto type = optimizer.getAs<StringAttr>("type");
  Type f32 = Float32Type::get(context);
  if (type && type.getValue() == "rowwise_adagrad")
    return RankedTensorType::get({ShapedType::kDynamic}, f32);
  if (type && type.getValue() == "adagrad")
    return RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                                 f32);
  return std::nullopt;
}

/// The optimizer's number `key` (lr, eps), 0 where it has none.
static double optimizerValue(DictionaryAttr optimizer, StringRef key) {
  auto value = optimizer.getAs<FloatAttr>(key);
  return value ? value.getValueAsDouble() : 0.0;
}

namespace {
/// Builds the lowering of one training op.
class TrainingLowering {
public:
  TrainingLowering(OpBuilder &b, Location loc, CpuLoweringState &state)
      : b(b), loc(loc), state(state) {}

  FailureOr<SmallVector<Value>> lower(BceWithLogitsOp op);
  FailureOr<SmallVector<Value>> lower(LinearGradOp op);
  FailureOr<SmallVector<Value>> lower(InteractionGradOp op);
  FailureOr<SmallVector<Value>> lower(CombineShardsGradOp op);
  FailureOr<SmallVector<Value>> lower(EmbeddingBagUpdateOp op);
  FailureOr<SmallVector<Value>> lower(ShardEmbeddingBagUpdateOp op);
  FailureOr<SmallVector<Value>> lower(EmbeddingBagGradOp op);
  FailureOr<SmallVector<Value>> lower(TableUpdateOp op);
  FailureOr<SmallVector<Value>> lower(DenseUpdateOp op);
  /// A bucket's steps, one loop over all its members' elements.
  FailureOr<SmallVector<Value>> lower(FusedDenseUpdateOp op);
  FailureOr<SmallVector<Value>> lower(AllReduceOp op);
  /// A started all_reduce: its handle and buffers wait in `state.pending`
  /// for the braid.wait of its token; it has no result of its own.
  FailureOr<SmallVector<Value>> lower(AllReduceStartOp op);
  FailureOr<SmallVector<Value>> lower(AllGatherOp op);
  /// A started all_gather, like a started all_reduce.
  FailureOr<SmallVector<Value>> lower(AllGatherStartOp op);
  /// This process's rank, from the runtime (a sharded optimizer step's
  /// offset).
  FailureOr<SmallVector<Value>> lower(RankOp op);

private:
  /// The step number as an i64 scalar; for Adam, a runtime error below 1.
  Value checkedStep(Value stepTensor, DictionaryAttr optimizer);
  /// all_gather and all_gather_start.
  template <typename OpTy> FailureOr<SmallVector<Value>> lowerAllGather(OpTy op);
  /// A buffer of `type` whose dynamic sizes are those of `like`'s
  /// dimensions (in order).
  Value allocate(RankedTensorType type, Value like = Value()) {
    SmallVector<Value> dynamic;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamic.push_back(tensor::DimOp::create(b, loc, like, d));
    return memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()),
        dynamic);
  }
  /// The value of a result nothing reads: an empty tensor of its type
  /// (dynamic sizes from `like`'s dimensions), which bufferizes to nothing.
  Value unread(RankedTensorType type, Value like) {
    SmallVector<Value> dynamic;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamic.push_back(tensor::DimOp::create(b, loc, like, d));
    return tensor::EmptyOp::create(b, loc, type.getShape(),
                                   type.getElementType(), dynamic);
  }
  Value toTensor(Type type, Value buffer) {
    return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }
  Value unranked(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    return memref::CastOp::create(
        b, loc, UnrankedMemRefType::get(type.getElementType(), 0), buffer);
  }
  Value read(Value tensor) { return toUnrankedBuffer(b, loc, tensor); }
  /// The buffer of a table or state argument, which the runtime updates in
  /// place (the argument is writable, so bufferization makes no copy).
  Value write(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    Value buffer = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()),
        tensor);
    return unranked(buffer);
  }
  /// The ranked buffer of a table or state argument, written in place.
  Value writeRanked(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    return bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()),
        tensor);
  }
  /// The ranked, read-only buffer of an operand.
  Value readRanked(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    return bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()),
        tensor, /*read_only=*/b.getUnitAttr());
  }
  Value i32(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  }
  Value i64(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 64);
  }
  Value f64(double value) {
    return arith::ConstantFloatOp::create(b, loc, b.getF64Type(),
                                          APFloat(value));
  }
  /// Calls runtime function `name` through the C interface.
  void call(StringRef name, ValueRange args) {
    func::FuncOp fn = declareRuntimeFunction(state.module, name,
                                             ValueRange(args).getTypes(), {},
                                             true);
    func::CallOp::create(b, loc, fn, args);
  }
  /// The runtime's suffix of a table element type, or an error.
  FailureOr<std::string> tableSuffix(Operation *op, FlatSymbolRefAttr table);
  /// The table's argument and its optimizer state's (the table's own
  /// buffer where the optimizer keeps none: the runtime does not read it).
  std::pair<Value, Value> tableAndState(Operation *op,
                                        FlatSymbolRefAttr table) {
    Value rows = state.tableArgument(op, table);
    Value optimizerState = state.tableStateArgument(op, table);
    Value rowsBuffer = write(rows);
    return {rowsBuffer, optimizerState ? write(optimizerState) : rowsBuffer};
  }
  /// The embedding optimizer's arguments: number, lr, eps.
  SmallVector<Value> optimizerArgs(DictionaryAttr optimizer) {
    return {i32(optimizerNumber(
                optimizer.getAs<StringAttr>("type").getValue())),
            f64(optimizerValue(optimizer, "lr")),
            f64(optimizerValue(optimizer, "eps"))};
  }
  /// A sum or mean lookup's fused update: the runtime's grouping of its
  /// entries by row, then the generated kernel (EmbeddingUpdateKernel.h).
  FailureOr<SmallVector<Value>>
  segmentedUpdate(Operation *op, FlatSymbolRefAttr table, Value rows,
                  Value bounds, bool lengths, Value grad, PoolingMode mode,
                  DictionaryAttr optimizer);
  FailureOr<SmallVector<Value>> bagUpdate(Operation *op,
                                          FlatSymbolRefAttr table, Value rows,
                                          Value bounds, bool lengths,
                                          Value grad, PoolingMode mode,
                                          DictionaryAttr optimizer);

  OpBuilder &b;
  Location loc;
  CpuLoweringState &state;
};
} // namespace

FailureOr<std::string>
TrainingLowering::tableSuffix(Operation *op, FlatSymbolRefAttr table) {
  auto tableOp = SymbolTable::lookupNearestSymbolFrom<TableOp>(op, table);
  Type element = tableOp.getElementType();
  if (element.isF32())
    return std::string("f32");
  if (element.isF16())
    return std::string("f16");
  if (element.isBF16())
    return std::string("bf16");
  return op->emitError() << "the CPU backend trains f32, f16 and bf16 "
                            "tables, not "
                         << element;
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(BceWithLogitsOp op) {
  Value loss = allocate(cast<RankedTensorType>(op.getLoss().getType()));
  auto gradType = cast<RankedTensorType>(op.getLogitsGrad().getType());
  Value grad = allocate(gradType, op.getLogits());
  call(runtime::kBceWithLogits,
       {read(op.getLogits()), read(op.getLabels()), unranked(loss),
        unranked(grad), f64(op.getScale().convertToDouble())});
  return SmallVector<Value>{toTensor(op.getLoss().getType(), loss),
                            toTensor(gradType, grad)};
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(LinearGradOp op) {
  for (Value operand : op->getOperands())
    if (!cast<RankedTensorType>(operand.getType()).getElementType().isF32())
      return op.emitError() << "the CPU backend lowers linear_grad of f32 "
                               "layers";
  // A gradient nothing reads is not computed (one part of a split
  // linear_grad): the runtime gets an empty placeholder for its buffer, no
  // bias kernel is built, and the op's result is an empty tensor that
  // nothing reads.
  auto inputType = cast<RankedTensorType>(op.getInputGrad().getType());
  auto weightType = cast<RankedTensorType>(op.getWeightGrad().getType());
  auto biasType = cast<RankedTensorType>(op.getBiasGrad().getType());
  bool inputPart = !op.getInputGrad().use_empty();
  bool weightPart = !op.getWeightGrad().use_empty();
  auto placeholder = [&] {
    return memref::AllocOp::create(b, loc,
                                   MemRefType::get({0, 0}, b.getF32Type()))
        .getResult();
  };
  Value dx = inputPart ? allocate(inputType, op.getInput()) : placeholder();
  Value dw = weightPart ? allocate(weightType, op.getWeight()) : placeholder();
  // The activation's derivative and the bias gradient are generated
  // kernels (a GPU's activations never visit the host); the runtime runs
  // the GEMMs on g (BLAS, or cuBLASLt on the CUDA target).
  auto [g, db] = buildLinearGradPointwise(b, op, state.biasGradColumns);
  if (inputPart || weightPart) {
    int32_t parts = (inputPart ? 1 : 0) | (weightPart ? 2 : 0);
    call(runtime::kLinearGradGemmsF32,
         {read(op.getInput()), read(op.getWeight()), read(g), unranked(dx),
          unranked(dw), i32(parts)});
  }
  return SmallVector<Value>{
      inputPart ? toTensor(inputType, dx) : unread(inputType, op.getInput()),
      weightPart ? toTensor(weightType, dw)
                 : unread(weightType, op.getWeight()),
      db ? db : unread(biasType, op.getWeight())};
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(InteractionGradOp op) {
  return buildInteractionGradKernel(
      b, op,
      declareRuntimeFunction(state.module, runtime::kRowsError,
                             TypeRange{b.getI64Type(), b.getI64Type()}, {},
                             false),
      state.catLanes);
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(CombineShardsGradOp op) {
  auto table =
      SymbolTable::lookupNearestSymbolFrom<TableOp>(op, op.getTableAttr());
  // The received parts, in rank order: each column shard, or one part of
  // the whole width.
  SmallVector<int64_t> parts;
  for (const TableShard &part : getReceivedParts(table))
    llvm::append_values(parts, part.colOffset, part.cols);
  func::FuncOp bagsError = declareRuntimeFunction(
      state.module, runtime::kBagsError,
      TypeRange{b.getI64Type(), b.getI64Type()}, {}, false);
  FailureOr<Value> grad =
      buildCombineShardsGradKernel(b, op, parts, bagsError);
  if (failed(grad))
    return failure();
  return SmallVector<Value>{*grad};
}

FailureOr<SmallVector<Value>> TrainingLowering::bagUpdate(
    Operation *op, FlatSymbolRefAttr table, Value rows, Value bounds,
    bool lengths, Value grad, PoolingMode mode, DictionaryAttr optimizer) {
  FailureOr<std::string> suffix = tableSuffix(op, table);
  if (failed(suffix))
    return failure();
  for (Value ids : {rows, bounds})
    if (!cast<RankedTensorType>(ids.getType()).getElementType().isInteger(64))
      return op->emitError() << "the CPU backend trains lookups with i64 "
                                "indices";
  if (state.embeddingUpdateKernel && mode != PoolingMode::max)
    return segmentedUpdate(op, table, rows, bounds, lengths, grad, mode,
                           optimizer);
  auto [tableBuffer, stateBuffer] = tableAndState(op, table);
  SmallVector<Value> args = {tableBuffer,         stateBuffer,  read(rows),
                             read(bounds),        i32(lengths), read(grad),
                             i32(int64_t(mode))};
  llvm::append_range(args, optimizerArgs(optimizer));
  call((runtime::kBagUpdate + *suffix).str(), args);
  return SmallVector<Value>{};
}

FailureOr<SmallVector<Value>> TrainingLowering::segmentedUpdate(
    Operation *op, FlatSymbolRefAttr table, Value rows, Value bounds,
    bool lengths, Value grad, PoolingMode mode, DictionaryAttr optimizer) {
  SegmentedRowUpdate update;
  int64_t kind = optimizerNumber(optimizer.getAs<StringAttr>("type").getValue());
  if (kind < 0 || kind > int64_t(EmbeddingOptimizer::rowwiseAdagrad))
    return op->emitError() << "the CPU backend updates tables with sgd, "
                              "adagrad or rowwise_adagrad";
  update.optimizer = EmbeddingOptimizer(kind);
  update.lr = optimizerValue(optimizer, "lr");
  update.eps = optimizerValue(optimizer, "eps");
  update.table = writeRanked(state.tableArgument(op, table));
  if (Value optimizerState = state.tableStateArgument(op, table))
    update.state = writeRanked(optimizerState);
  update.grad = readRanked(grad);
  update.bounds = readRanked(bounds);
  update.boundsAreLengths = lengths;
  update.mode = mode;
  // The runtime groups the entries by row (braidrt_segment_rows); the
  // generated kernel then owns one row per iteration.
  Value entries = tensor::DimOp::create(b, loc, rows, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto list = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  update.sortedBags = memref::AllocOp::create(b, loc, list, entries);
  update.segmentRows = memref::AllocOp::create(b, loc, list, entries);
  update.segmentStarts = memref::AllocOp::create(
      b, loc, list,
      ValueRange{arith::AddIOp::create(b, loc, entries, one).getResult()});
  Value count = memref::AllocOp::create(
      b, loc, MemRefType::get({1}, b.getI64Type()));
  Value tableRows = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), memref::DimOp::create(b, loc, update.table, 0));
  call(runtime::kSegmentRows,
       {read(rows), read(bounds), i32(lengths), tableRows,
        unranked(update.sortedBags), unranked(update.segmentRows),
        unranked(update.segmentStarts), unranked(count)});
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  update.count = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, count, ValueRange{zero}));
  if (failed(buildSegmentedRowUpdate(b, op->getLoc(), update)))
    return failure();
  return SmallVector<Value>{};
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(EmbeddingBagUpdateOp op) {
  return bagUpdate(op, op.getTableAttr(), op.getIndices(), op.getOffsets(),
                   /*lengths=*/false, op.getPooledGrad(), op.getMode(),
                   op.getOptimizer());
}

FailureOr<SmallVector<Value>>
TrainingLowering::lower(ShardEmbeddingBagUpdateOp op) {
  return bagUpdate(op, op.getTableAttr(), op.getValues(), op.getLengths(),
                   /*lengths=*/true, op.getPooledGrad(), op.getMode(),
                   op.getOptimizer());
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(EmbeddingBagGradOp op) {
  FailureOr<std::string> suffix = tableSuffix(op, op.getTableAttr());
  if (failed(suffix))
    return failure();
  auto type = cast<RankedTensorType>(op.getTableGrad().getType());
  if (!type.hasStaticShape())
    return op.emitError() << "the CPU backend needs a static table gradient";
  Value out = allocate(type);
  call((runtime::kBagGrad + *suffix).str(),
       {read(state.tableArgument(op, op.getTableAttr())),
        read(op.getIndices()), read(op.getOffsets()), read(op.getPooledGrad()),
        unranked(out), i32(static_cast<int64_t>(op.getMode()))});
  return SmallVector<Value>{toTensor(type, out)};
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(TableUpdateOp op) {
  FailureOr<std::string> suffix = tableSuffix(op, op.getTableAttr());
  if (failed(suffix))
    return failure();
  auto [tableBuffer, stateBuffer] = tableAndState(op, op.getTableAttr());
  SmallVector<Value> args = {tableBuffer, stateBuffer,
                             read(op.getTableGrad())};
  llvm::append_range(args, optimizerArgs(op.getOptimizer()));
  call((runtime::kTableUpdate + *suffix).str(), args);
  return SmallVector<Value>{};
}

Value TrainingLowering::checkedStep(Value stepTensor,
                                    DictionaryAttr optimizer) {
  Value step = tensor::ExtractOp::create(b, loc, stepTensor, ValueRange{});
  if (optimizer.getAs<StringAttr>("type").getValue() == "adam") {
    // Adam's bias correction divides by 1 - beta^step: a step below 1 is
    // the host's error, reported by the runtime.
    Value bad =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, step, i64(1));
    func::FuncOp fn =
        declareRuntimeFunction(state.module, runtime::kStepError,
                               TypeRange{b.getI64Type()}, {}, false);
    scf::IfOp::create(b, loc, bad, [&](OpBuilder &tb, Location tloc) {
      func::CallOp::create(tb, tloc, fn, ValueRange{step});
      scf::YieldOp::create(tb, tloc);
    });
  }
  return step;
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(DenseUpdateOp op) {
  return buildDenseUpdateKernel(b, op,
                                checkedStep(op.getStep(), op.getOptimizer()));
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(FusedDenseUpdateOp op) {
  return buildFusedDenseUpdateKernel(
      b, op, checkedStep(op.getStep(), op.getOptimizer()));
}

/// The suffix of a gradient exchange's element type, or an error.
static FailureOr<std::string> exchangeSuffix(Operation *op, Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  if (element.isF32())
    return std::string("f32");
  if (element.isF64())
    return std::string("f64");
  return op->emitError() << "the CPU backend exchanges gradients of f32 and "
                            "f64, not "
                         << element;
}

/// For groups that tile the cluster with a stride, [[0, s, 2s, ..],
/// [1, s + 1, ..], ..] (the all_reduce between nodes of a hierarchical
/// decomposition): the group size and the stride s; nothing for others.
static std::optional<std::pair<int64_t, int64_t>>
stridedGroups(ModuleOp module, ReplicaGroupsAttr groups) {
  auto cluster =
      module->getAttrOfType<ClusterAttr>(BraidDialect::kClusterAttrName);
  if (!groups || !cluster || groups.getNumGroups() < 2)
    return std::nullopt;
  // Blocks (stride 1) are lowerRankBlocks' case.
  std::optional<int64_t> stride =
      groups.getTilingStride(cluster.getWorldSize());
  if (!stride || *stride == 1)
    return std::nullopt;
  return std::make_pair(groups.getGroupSize(), *stride);
}

/// The synchronous and the started all_reduce: the same arguments, and the
/// started one returns a handle for braid.wait.
template <typename OpTy>
static FailureOr<SmallVector<Value>>
lowerAllReduce(OpTy op, OpBuilder &b, CpuLoweringState &state,
               const std::function<Value(RankedTensorType, Value)> &allocate) {
  Location loc = op.getLoc();
  if (op.getReduction() != ReductionKind::sum &&
      op.getReduction() != ReductionKind::max)
    return op.emitError() << "the CPU backend lowers sum and max all_reduce";
  auto type = cast<RankedTensorType>(op.getResultTensorType());
  FailureOr<std::string> suffix = exchangeSuffix(op, type);
  if (failed(suffix))
    return failure();
  // Blocks of consecutive ranks (stride 1), or strided groups that tile
  // the cluster, in which every rank takes part.
  int64_t stride = 1;
  FailureOr<std::pair<int64_t, Value>> blocks = failure();
  if (auto strided =
          stridedGroups(state.module, op.getReplicaGroupsAttr())) {
    stride = strided->second;
    blocks = std::make_pair(strided->first,
                            Value(arith::ConstantIntOp::create(b, loc, 1, 1)));
  } else {
    blocks = lowerRankBlocks(b, loc, state.module, op,
                             op.getReplicaGroupsAttr());
  }
  if (failed(blocks))
    return failure();
  Value out = allocate(type, op.getInput());
  Value input = toUnrankedBuffer(b, loc, op.getInput());
  Value output = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), out);
  SmallVector<Value> args = {
      input, output, arith::ConstantIntOp::create(b, loc, blocks->first, 64),
      arith::ConstantIntOp::create(b, loc, stride, 64),
      arith::ExtUIOp::create(b, loc, b.getI32Type(), blocks->second),
      arith::ConstantIntOp::create(
          b, loc, static_cast<int64_t>(op.getReduction()), 32)};
  constexpr bool started = std::is_same_v<OpTy, AllReduceStartOp>;
  StringRef name = started ? runtime::kAllReduceStart : runtime::kAllReduce;
  SmallVector<Type> results;
  if (started)
    results.push_back(b.getI64Type());
  func::FuncOp fn = declareRuntimeFunction(state.module,
                                           (name + *suffix).str(),
                                           ValueRange(args).getTypes(),
                                           results, true);
  auto call = func::CallOp::create(b, loc, fn, args);
  if constexpr (started) {
    state.pending[op.getToken()] = {call.getResult(0), input, out, *suffix};
    return SmallVector<Value>{};
  }
  return SmallVector<Value>{bufferization::ToTensorOp::create(
      b, loc, type, out, /*restrict=*/true, /*writable=*/true)};
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(AllReduceOp op) {
  return lowerAllReduce(op, b, state, [&](RankedTensorType type, Value like) {
    return allocate(type, like);
  });
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(AllReduceStartOp op) {
  return lowerAllReduce(op, b, state, [&](RankedTensorType type, Value like) {
    return allocate(type, like);
  });
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(AllGatherOp op) {
  return lowerAllGather(op);
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(AllGatherStartOp op) {
  return lowerAllGather(op);
}

FailureOr<SmallVector<Value>> TrainingLowering::lower(RankOp op) {
  func::FuncOp fn = declareRuntimeFunction(state.module, runtime::kRank, {},
                                           {b.getI64Type()}, false);
  Value rank = func::CallOp::create(b, loc, fn, ValueRange{}).getResult(0);
  return SmallVector<Value>{
      arith::IndexCastOp::create(b, loc, b.getIndexType(), rank)};
}

template <typename OpTy>
FailureOr<SmallVector<Value>> TrainingLowering::lowerAllGather(OpTy op) {
  if (op.getDim() != 0)
    return op.emitError() << "the CPU backend lowers all_gather along "
                             "dimension 0";
  auto type = cast<RankedTensorType>(op.getResultTensorType());
  FailureOr<std::string> suffix = exchangeSuffix(op, type);
  FailureOr<std::pair<int64_t, Value>> blocks = lowerRankBlocks(
      b, loc, state.module, op, op.getReplicaGroupsAttr());
  if (failed(suffix) || failed(blocks))
    return failure();
  // A member gathers its group's rows; a rank in no group keeps its own.
  Value out;
  if (type.isDynamicDim(0)) {
    Value inputRows = tensor::DimOp::create(b, loc, op.getInput(), 0);
    Value rows = arith::SelectOp::create(
        b, loc, blocks->second,
        arith::MulIOp::create(
            b, loc, inputRows,
            arith::ConstantIndexOp::create(b, loc, blocks->first)),
        inputRows);
    SmallVector<Value> dynamic = {rows};
    for (int64_t d = 1; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamic.push_back(tensor::DimOp::create(b, loc, op.getInput(), d));
    out = memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()),
        dynamic);
  } else {
    out = allocate(type);
  }
  Value input = read(op.getInput());
  SmallVector<Value> args = {
      input, unranked(out), i64(blocks->first),
      arith::ExtUIOp::create(b, loc, b.getI32Type(), blocks->second)};
  if constexpr (std::is_same_v<OpTy, AllGatherStartOp>) {
    func::FuncOp fn = declareRuntimeFunction(
        state.module, (runtime::kAllGatherStart + *suffix).str(),
        ValueRange(args).getTypes(), {b.getI64Type()}, true);
    Value handle = func::CallOp::create(b, loc, fn, args).getResult(0);
    state.pending[op.getToken()] = {handle, input, out, *suffix};
    return SmallVector<Value>{};
  }
  call((runtime::kAllGather + *suffix).str(), args);
  return SmallVector<Value>{toTensor(type, out)};
}

namespace {
template <typename OpTy>
struct TrainingOpLowering : OpConversionPattern<OpTy> {
  TrainingOpLowering(MLIRContext *context, CpuLoweringState &state)
      : OpConversionPattern<OpTy>(context), state(state) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TrainingLowering lowering(rewriter, op.getLoc(), state);
    FailureOr<SmallVector<Value>> results = lowering.lower(op);
    if (failed(results))
      return failure();
    // A started exchange's token dies with its wait, lowered after it.
    if (op->getNumResults() == 0 || isa<AllReduceStartOp, AllGatherStartOp>(op))
      rewriter.eraseOp(op);
    else
      rewriter.replaceOp(op, *results);
    return success();
  }
  CpuLoweringState &state;
};
} // namespace

void mlir::braid::populateBraidTrainingToCPUPatterns(
    RewritePatternSet &patterns, CpuLoweringState &state) {
  patterns.add<
      TrainingOpLowering<BceWithLogitsOp>, TrainingOpLowering<LinearGradOp>,
      TrainingOpLowering<InteractionGradOp>,
      TrainingOpLowering<CombineShardsGradOp>,
      TrainingOpLowering<EmbeddingBagUpdateOp>,
      TrainingOpLowering<ShardEmbeddingBagUpdateOp>,
      TrainingOpLowering<EmbeddingBagGradOp>, TrainingOpLowering<TableUpdateOp>,
      TrainingOpLowering<DenseUpdateOp>, TrainingOpLowering<FusedDenseUpdateOp>,
      TrainingOpLowering<AllReduceOp>, TrainingOpLowering<AllReduceStartOp>,
      TrainingOpLowering<AllGatherOp>, TrainingOpLowering<AllGatherStartOp>,
      TrainingOpLowering<RankOp>>(patterns.getContext(), state);
}
