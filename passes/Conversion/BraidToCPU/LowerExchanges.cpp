//===- LowerExchanges.cpp - CPU lowering of partitioned lookups -----------===//
//
// This file lowers the ops braid-partition emits, at the tensor level:
// - all_to_all (with split_sizes), all_to_all_v and reduce_scatter over
//   blocks of consecutive ranks become calls of the runtime's exchanges on
//   the operands' buffers and a buffer the call fills
//   (bufferization.to_buffer / to_tensor around the call);
// - bucketize, shard_embedding_bag and combine_shards are the
//   target-neutral kernels of BraidToLoops.
// The placement decides everything about the routing at compile time; only
// the calling rank (braidrt_rank) is read at run time.
//
//===----------------------------------------------------------------------===//

#include "LowerExchanges.h"
#include "RuntimeFunctions.h"
#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Conversion/BraidToLoops/PoolingKernel.h"
#include "braid/Conversion/BraidToLoops/ShardKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>
#include <type_traits>

using namespace mlir;
using namespace mlir::braid;

func::FuncOp mlir::braid::declareRuntimeFunction(ModuleOp module,
                                                 StringRef name,
                                                 TypeRange arguments,
                                                 TypeRange results,
                                                 bool cInterface) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 b.getFunctionType(arguments, results));
  fn.setPrivate();
  if (cInterface)
    fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return fn;
}

Value mlir::braid::toUnrankedBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  // The runtime only reads it: no copy is needed to keep `tensor` intact.
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/b.getUnitAttr());
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), buffer);
}

FailureOr<std::pair<int64_t, Value>>
mlir::braid::lowerRankBlocks(OpBuilder &b, Location loc, ModuleOp module,
                             Operation *op, ReplicaGroupsAttr groups) {
  auto cluster =
      module->getAttrOfType<ClusterAttr>(BraidDialect::kClusterAttrName);
  // Without groups the collective spans every rank of the cluster.
  if (!groups) {
    if (!cluster)
      return op->emitError() << "the CPU backend needs explicit groups or the "
                                "module's braid.cluster";
    return std::pair<int64_t, Value>(
        cluster.getWorldSize(), arith::ConstantIntOp::create(b, loc, 1, 1));
  }
  int64_t size = groups.getGroupSize();
  if (!groups.isBlocks())
    return op->emitError() << "the CPU backend lowers "
                           << op->getName().stripDialect()
                           << " over blocks of consecutive ranks";
  SmallVector<int64_t> firsts;
  for (int64_t g = 0; g < groups.getNumGroups(); ++g)
    firsts.push_back(groups.getGroup(g).front());
  // Whether this rank's block is one of the groups; a rank in none keeps
  // its input. Groups that tile the cluster's ranks make it a constant.
  llvm::sort(firsts);
  bool tiles =
      cluster && int64_t(firsts.size()) * size == cluster.getWorldSize();
  for (auto [g, first] : llvm::enumerate(firsts))
    tiles = tiles && first == int64_t(g) * size;
  if (tiles)
    return std::pair<int64_t, Value>(
        size, arith::ConstantIntOp::create(b, loc, 1, 1));
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  func::FuncOp rankFn = declareRuntimeFunction(module, runtime::kRank, {},
                                               {b.getI64Type()}, false);
  Value rank = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      func::CallOp::create(b, loc, rankFn, ValueRange{}).getResult(0));
  Value first = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, rank, index(size)), index(size));
  Value member = arith::ConstantIntOp::create(b, loc, 0, 1);
  for (int64_t groupFirst : firsts)
    member = arith::OrIOp::create(
        b, loc, member,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, first,
                              index(groupFirst)));
  return std::pair<int64_t, Value>(size, member);
}

namespace {
/// Builds the lowering of one op.
class ExchangeLowering {
public:
  ExchangeLowering(OpBuilder &b, Location loc, ModuleOp module,
                   func::FuncOp indexError, func::FuncOp offsetsError)
      : b(b), loc(loc), module(module), indexError(indexError),
        offsetsError(offsetsError) {}

  template <typename OpTy>
  FailureOr<Value> allToAll(OpTy op, PendingExchanges *pending = nullptr);
  FailureOr<Value> wait(WaitOp op, PendingExchanges &pending);
  template <typename OpTy>
  FailureOr<Value> allToAllV(OpTy op, PendingExchanges *pending = nullptr,
                             bool asyncCounts = false);
  template <typename OpTy>
  FailureOr<Value> reduceScatter(OpTy op, PendingExchanges *pending = nullptr);
  FailureOr<SmallVector<Value>> bucketize(BucketizeOp op);

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value rank();
  /// The element-type suffix of the runtime's exchanges, or failure.
  FailureOr<std::string> suffix(Operation *op, Type element);
  /// A buffer the runtime fills, of `type` with `rows` in dimension 0.
  Value allocate(RankedTensorType type, Value rows);
  /// The tensor of a filled buffer.
  Value toTensor(RankedTensorType type, Value buffer) {
    return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }
  Value unranked(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    return memref::CastOp::create(
        b, loc, UnrankedMemRefType::get(type.getElementType(), 0), buffer);
  }
  Value constantVector(ArrayRef<int64_t> values, Type element);

  OpBuilder &b;
  Location loc;
  ModuleOp module;
  func::FuncOp indexError, offsetsError;
};
} // namespace

Value ExchangeLowering::rank() {
  func::FuncOp fn = declareRuntimeFunction(module, runtime::kRank, {},
                                           {b.getI64Type()}, false);
  Value rank64 = func::CallOp::create(b, loc, fn, ValueRange{}).getResult(0);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), rank64);
}

FailureOr<std::string> ExchangeLowering::suffix(Operation *op, Type element) {
  if (element.isF32())
    return std::string("f32");
  if (element.isF64())
    return std::string("f64");
  if (element.isInteger(64))
    return std::string("i64");
  if (element.isInteger(32))
    return std::string("i32");
  // Pooled rows and their gradients in 16 bits (braid-exchange-precision)
  // move as all_to_all alone.
  if (isa<AllToAllOp, AllToAllStartOp, WaitOp>(op)) {
    if (element.isBF16())
      return std::string("bf16");
    if (element.isF16())
      return std::string("f16");
  }
  return op->emitError() << "the CPU backend exchanges f32, f64, i64 and i32 "
                            "elements (and bf16 and f16 in an all_to_all), "
                            "not "
                         << element;
}

Value ExchangeLowering::allocate(RankedTensorType type, Value rows) {
  SmallVector<Value> dynamic;
  if (type.isDynamicDim(0))
    dynamic.push_back(rows);
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), dynamic);
}

Value ExchangeLowering::constantVector(ArrayRef<int64_t> values, Type element) {
  return buildConstantVector(b, loc, values, element);
}

template <typename OpTy>
FailureOr<Value> ExchangeLowering::allToAll(OpTy op, PendingExchanges *pending) {
  std::optional<ArrayRef<int64_t>> sizes = op.getSplitSizes();
  if (!sizes || op.getSplitDim() != 0)
    return op.emitError() << "the CPU backend lowers all_to_all with "
                             "split_sizes along dimension 0";
  int64_t ranks = std::llround(std::sqrt(double(sizes->size())));
  // split_sizes is indexed by MPI rank (the runtime exchanges over the
  // world): only one group of every rank in order means that. Other groups
  // were lowered as if absent, a silent wrong answer.
  if (ReplicaGroupsAttr groups = op.getReplicaGroupsAttr()) {
    bool world = groups.getNumGroups() == 1 && groups.getGroupSize() == ranks;
    for (int64_t r = 0; world && r < ranks; ++r)
      world = groups.getGroup(0)[r] == r;
    if (!world)
      return op.emitError() << "the CPU backend lowers all_to_all over every "
                               "rank in order (no groups, or one group [0, "
                               "..., "
                            << ranks - 1 << "])";
  }
  SmallVector<int64_t> received(ranks, 0);
  for (int64_t i = 0; i < ranks; ++i)
    for (int64_t j = 0; j < ranks; ++j)
      received[j] += (*sizes)[i * ranks + j];
  auto type = cast<RankedTensorType>(op.getResultTensorType());
  FailureOr<std::string> kind = suffix(op, type.getElementType());
  if (failed(kind))
    return failure();
  // The runtime starts f32, f64 and i64 all_to_alls (an i32 one is
  // exchanged synchronously or as an all_to_all_v).
  if (pending && *kind == "i32")
    return op.emitError() << "the CPU backend starts all_to_alls of f32, f64 "
                             "and i64 elements, not i32";
  Value rows = tensor::ExtractOp::create(
      b, loc, constantVector(received, b.getIndexType()), ValueRange{rank()});
  Value out = allocate(type, rows);
  Value split = toUnrankedBuffer(b, loc, constantVector(*sizes, b.getI64Type()));
  Value input = toUnrankedBuffer(b, loc, op.getInput());
  if (pending) {
    func::FuncOp fn = declareRuntimeFunction(
        module, (runtime::kAllToAllStart + *kind).str(),
        {input.getType(), input.getType(), split.getType()}, {b.getI64Type()},
        true);
    Value handle =
        func::CallOp::create(b, loc, fn, ValueRange{input, unranked(out), split})
            .getResult(0);
    (*pending)[op->getResult(0)] = {handle, input, out, *kind};
    return Value();
  }
  func::FuncOp fn = declareRuntimeFunction(
      module, (runtime::kAllToAll + *kind).str(),
      {input.getType(), input.getType(), split.getType()}, {}, true);
  func::CallOp::create(b, loc, fn, ValueRange{input, unranked(out), split});
  return toTensor(type, out);
}

FailureOr<Value> ExchangeLowering::wait(WaitOp op,
                                        PendingExchanges &pending) {
  auto it = pending.find(op.getToken());
  if (it == pending.end())
    return op.emitError() << "the CPU backend waits for tokens of "
                             "all_to_all_start, all_to_all_v_start, "
                             "reduce_scatter_start, all_reduce_start and "
                             "all_gather_start";
  PendingExchange exchange = it->second;
  auto type = cast<RankedTensorType>(op.getResult().getType());
  if (!exchange.output) {
    // An all_to_all_v started with its counts still moving: how many rows
    // arrive is known here, which sizes the result the wait fills.
    func::FuncOp received = declareRuntimeFunction(
        module, runtime::kAllToAllVReceivedRows, {b.getI64Type()},
        {b.getI64Type()}, false);
    Value rows = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        func::CallOp::create(b, loc, received, ValueRange{exchange.handle})
            .getResult(0));
    Value out = allocate(type, rows);
    func::FuncOp fn = declareRuntimeFunction(
        module, (runtime::kWaitAllToAllV + exchange.suffix).str(),
        {b.getI64Type(), exchange.input.getType(), exchange.input.getType()},
        {}, true);
    func::CallOp::create(b, loc, fn,
                         ValueRange{exchange.handle, exchange.input,
                                    unranked(out)});
    return toTensor(type, out);
  }
  func::FuncOp fn = declareRuntimeFunction(
      module, (runtime::kWaitExchange + exchange.suffix).str(),
      {b.getI64Type(), exchange.input.getType(), exchange.input.getType()}, {},
      true);
  func::CallOp::create(
      b, loc, fn,
      ValueRange{exchange.handle, exchange.input, unranked(exchange.output)});
  return toTensor(type, exchange.output);
}

template <typename OpTy>
FailureOr<Value> ExchangeLowering::allToAllV(OpTy op,
                                             PendingExchanges *pending,
                                             bool asyncCounts) {
  Type resultType = op->getResult(0).getType();
  if (auto token = dyn_cast<TokenType>(resultType))
    resultType = token.getValueType();
  auto type = cast<RankedTensorType>(resultType);
  FailureOr<std::string> kind = suffix(op, type.getElementType());
  if (failed(kind))
    return failure();
  auto countsType = cast<RankedTensorType>(op.getSendCounts().getType());
  int64_t ranks = countsType.getDimSize(0);
  Value send = toUnrankedBuffer(b, loc, op.getSendCounts());
  if (pending && asyncCounts) {
    // Started, counts and all: the start returns at once; the wait learns
    // the received size and takes the rows (braidrt's DeferredExchanges).
    Value input = toUnrankedBuffer(b, loc, op.getInput());
    func::FuncOp fn = declareRuntimeFunction(
        module, (runtime::kAllToAllVPost + *kind).str(),
        {input.getType(), send.getType()}, {b.getI64Type()}, true);
    Value handle =
        func::CallOp::create(b, loc, fn, ValueRange{input, send}).getResult(0);
    (*pending)[op->getResult(0)] = {handle, input, Value(), *kind};
    return Value();
  }
  Value recv = memref::AllocOp::create(
      b, loc, MemRefType::get({ranks}, b.getI64Type()));
  func::FuncOp exchange = declareRuntimeFunction(
      module, runtime::kExchangeCounts, {send.getType(), send.getType()}, {},
      true);
  func::CallOp::create(b, loc, exchange, ValueRange{send, unranked(recv)});
  auto total = scf::ForOp::create(
      b, loc, index(0), index(ranks), index(1), ValueRange{index(0)},
      [&](OpBuilder &lb, Location lloc, Value i, ValueRange acc) {
        Value count = memref::LoadOp::create(lb, lloc, recv, ValueRange{i});
        Value asIndex = arith::IndexCastOp::create(lb, lloc, lb.getIndexType(), count);
        scf::YieldOp::create(lb, lloc,
                             arith::AddIOp::create(lb, lloc, acc[0], asIndex).getResult());
      });
  Value out = allocate(type, total.getResult(0));
  Value input = toUnrankedBuffer(b, loc, op.getInput());
  SmallVector<Type> argTypes = {input.getType(), send.getType(),
                                input.getType(), send.getType()};
  SmallVector<Value> args = {input, send, unranked(out), unranked(recv)};
  // Started: the counts are known, the rows move until the wait.
  if (pending) {
    func::FuncOp fn = declareRuntimeFunction(
        module, (runtime::kAllToAllVStart + *kind).str(), argTypes,
        {b.getI64Type()}, true);
    Value handle = func::CallOp::create(b, loc, fn, args).getResult(0);
    (*pending)[op->getResult(0)] = {handle, input, out, *kind};
    return Value();
  }
  func::FuncOp fn = declareRuntimeFunction(
      module, (runtime::kAllToAllV + *kind).str(), argTypes, {}, true);
  func::CallOp::create(b, loc, fn, args);
  return toTensor(type, out);
}

template <typename OpTy>
FailureOr<Value> ExchangeLowering::reduceScatter(OpTy op,
                                                 PendingExchanges *pending) {
  if (op.getDim() != 0)
    return op.emitError() << "the CPU backend lowers reduce_scatter along "
                             "dimension 0";
  FailureOr<std::pair<int64_t, Value>> blocks = lowerRankBlocks(
      b, loc, module, op, op.getReplicaGroupsAttr());
  if (failed(blocks))
    return failure();
  auto [size, member] = *blocks;
  if (op.getReduction() == ReductionKind::avg)
    return op.emitError() << "the CPU backend does not lower avg reductions";
  auto type = cast<RankedTensorType>(op.getResultTensorType());
  FailureOr<std::string> kind = suffix(op, type.getElementType());
  if (failed(kind) || *kind == "i64" || *kind == "i32")
    return op.emitError() << "the CPU backend reduce-scatters f32 and f64";
  Value inputRows = tensor::DimOp::create(b, loc, op.getInput(), 0);
  Value rows = arith::SelectOp::create(
      b, loc, member, arith::DivUIOp::create(b, loc, inputRows, index(size)),
      inputRows);
  Value out = allocate(type, rows);
  Value input = toUnrankedBuffer(b, loc, op.getInput());
  SmallVector<Value> args = {
      input, unranked(out), arith::ConstantIntOp::create(b, loc, size, 64),
      arith::ExtUIOp::create(b, loc, b.getI32Type(), member),
      arith::ConstantIntOp::create(b, loc,
                                   static_cast<int64_t>(op.getReduction()), 32)};
  SmallVector<Type> argTypes = {input.getType(), input.getType(),
                                b.getI64Type(), b.getI32Type(), b.getI32Type()};
  if (pending) {
    func::FuncOp fn = declareRuntimeFunction(
        module, (runtime::kReduceScatterStart + *kind).str(), argTypes,
        {b.getI64Type()}, true);
    Value handle = func::CallOp::create(b, loc, fn, args).getResult(0);
    (*pending)[op->getResult(0)] = {handle, input, out, *kind};
    return Value();
  }
  func::FuncOp fn = declareRuntimeFunction(
      module, (runtime::kReduceScatter + *kind).str(), argTypes, {}, true);
  func::CallOp::create(b, loc, fn, args);
  return toTensor(type, out);
}

FailureOr<SmallVector<Value>> ExchangeLowering::bucketize(BucketizeOp op) {
  func::FuncOp bagsError = declareRuntimeFunction(
      module, runtime::kBagsError, TypeRange{b.getI64Type(), b.getI64Type()},
      {}, false);
  return buildBucketizeKernel(b, op, indexError, offsetsError, bagsError);
}

namespace {
/// Shared by the patterns of one conversion: the module (for runtime
/// declarations), the tables' arguments and the started exchanges.
template <typename OpTy>
struct CpuExchangePattern : OpConversionPattern<OpTy> {
  CpuExchangePattern(MLIRContext *context, CpuLoweringState &state)
      : OpConversionPattern<OpTy>(context), state(state) {}
  CpuLoweringState &state;
};

/// all_to_all, all_to_all_v, reduce_scatter, bucketize, shard_embedding_bag
/// and combine_shards: runtime calls and generated kernels.
template <typename OpTy>
struct ExchangeOpLowering : CpuExchangePattern<OpTy> {
  using CpuExchangePattern<OpTy>::CpuExchangePattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ExchangeLowering lowering(rewriter, op.getLoc(), this->state.module,
                              this->state.indexError(),
                              this->state.offsetsError());
    FailureOr<SmallVector<Value>> results;
    auto single = [](FailureOr<Value> value) -> FailureOr<SmallVector<Value>> {
      if (failed(value))
        return failure();
      return SmallVector<Value>{*value};
    };
    if constexpr (std::is_same_v<OpTy, AllToAllOp>)
      results = single(lowering.allToAll(op));
    else if constexpr (std::is_same_v<OpTy, AllToAllVOp>)
      results = single(lowering.allToAllV(op));
    else if constexpr (std::is_same_v<OpTy, ReduceScatterOp>)
      results = single(lowering.reduceScatter(op));
    else if constexpr (std::is_same_v<OpTy, BucketizeOp>)
      results = lowering.bucketize(op);
    else if constexpr (std::is_same_v<OpTy, ShardEmbeddingBagOp>)
      results = single(buildShardLookupKernel(
          rewriter, op, this->state.tableArgument(op, op.getTableAttr()),
          this->state.indexError(), this->state.poolingLanes));
    else
      results = single(buildCombineShardsKernel(rewriter, op));
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, *results);
    return success();
  }
};

/// all_to_all_start, all_to_all_v_start and reduce_scatter_start: a
/// non-blocking runtime call
/// whose handle and buffers wait for the braid.wait of its token.
template <typename OpTy>
struct StartLowering : CpuExchangePattern<OpTy> {
  using CpuExchangePattern<OpTy>::CpuExchangePattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ExchangeLowering lowering(rewriter, op.getLoc(), this->state.module,
                              func::FuncOp(), func::FuncOp());
    FailureOr<Value> started;
    if constexpr (std::is_same_v<OpTy, AllToAllStartOp>)
      started = lowering.allToAll(op, &this->state.pending);
    else if constexpr (std::is_same_v<OpTy, AllToAllVStartOp>)
      started = lowering.allToAllV(op, &this->state.pending,
                                   this->state.asyncCounts);
    else
      started = lowering.reduceScatter(op, &this->state.pending);
    if (failed(started))
      return failure();
    // The token dies with its wait, which is lowered after it.
    rewriter.eraseOp(op);
    return success();
  }
};

/// braid.wait: completes the started exchange and takes its buffers.
struct WaitLowering : CpuExchangePattern<WaitOp> {
  using CpuExchangePattern<WaitOp>::CpuExchangePattern;
  LogicalResult
  matchAndRewrite(WaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ExchangeLowering lowering(rewriter, op.getLoc(), state.module,
                              func::FuncOp(), func::FuncOp());
    FailureOr<Value> result = lowering.wait(op, state.pending);
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }
};
} // namespace

void mlir::braid::populateBraidExchangeToCPUPatterns(
    RewritePatternSet &patterns, CpuLoweringState &state) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ExchangeOpLowering<AllToAllOp>, ExchangeOpLowering<AllToAllVOp>,
               ExchangeOpLowering<ReduceScatterOp>,
               ExchangeOpLowering<BucketizeOp>,
               ExchangeOpLowering<ShardEmbeddingBagOp>,
               ExchangeOpLowering<CombineShardsOp>,
               StartLowering<AllToAllStartOp>,
               StartLowering<AllToAllVStartOp>,
               StartLowering<ReduceScatterStartOp>, WaitLowering>(context,
                                                                  state);
}
