//===- LowerCollectivesToNccl.cpp - Gradient collectives as NCCL calls ----===//
//
// This file implements braid-lower-collectives-to-nccl: on the CUDA target's
// host code, the CPU runtime's f32 all_reduce, reduce_scatter and all_gather
// calls (blocking and started) become ncclAllReduce, ncclReduceScatter and
// ncclAllGather calls on the runtime's communication stream, with the
// group's communicator, the buffers' pointers and counts, and an event per
// started collective that its wait synchronizes; the lookups' uneven
// exchanges (all_to_all with a split matrix, all_to_all_v with counts, the
// counts' own exchange) become one NCCL group of ncclSend/ncclRecv per peer.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "../BraidToCPU/LowerExchanges.h"
#include "../BraidToCPU/RuntimeFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDLOWERCOLLECTIVESTONCCLPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
/// The collectives this pass lowers, with the NCCL function each becomes
/// and the result-check code braidrt_cuda_nccl_result names it by.
enum class Kind { AllReduce, ReduceScatter, AllGather };

struct Collective {
  Kind kind;
  bool started;
};
} // namespace

/// NCCL's data type for an element type (ncclFloat32 7, ncclFloat64 8,
/// ncclInt64 4, ncclInt32 2, ncclFloat16 6, ncclBfloat16 9), if it has one
/// this pass lowers.
static std::optional<int32_t> ncclTypeOf(Type element) {
  if (element.isF32())
    return 7;
  if (element.isF16())
    return 6;
  if (element.isBF16())
    return 9;
  if (element.isF64())
    return 8;
  if (element.isInteger(64))
    return 4;
  if (element.isInteger(32))
    return 2;
  return std::nullopt;
}

static std::optional<Collective> collectiveOf(StringRef callee) {
  auto named = [&](StringRef base) { return callee == (base + "f32").str(); };
  if (named(runtime::kAllReduce))
    return Collective{Kind::AllReduce, false};
  if (named(runtime::kAllReduceStart))
    return Collective{Kind::AllReduce, true};
  if (named(runtime::kReduceScatter))
    return Collective{Kind::ReduceScatter, false};
  if (named(runtime::kReduceScatterStart))
    return Collective{Kind::ReduceScatter, true};
  if (named(runtime::kAllGather))
    return Collective{Kind::AllGather, false};
  if (named(runtime::kAllGatherStart))
    return Collective{Kind::AllGather, true};
  return std::nullopt;
}

static StringRef ncclFunctionOf(Kind kind) {
  switch (kind) {
  case Kind::AllReduce:
    return "ncclAllReduce";
  case Kind::ReduceScatter:
    return "ncclReduceScatter";
  case Kind::AllGather:
    return "ncclAllGather";
  }
  llvm_unreachable("a collective kind");
}

/// NCCL's reduction for Braid's (sum 0, max 1, min 2, avg 3).
static std::optional<int32_t> ncclReductionOf(Value reduction) {
  APInt value;
  if (!matchPattern(reduction, m_ConstantInt(&value)))
    return std::nullopt;
  // Max and min stay on the runtime's MPI operations: NCCL reduces floats
  // with fmaxf and fminf, which drop a NaN where Braid's reductions
  // propagate it on every path (docs/design.md).
  switch (value.getSExtValue()) {
  case 0:
    return 0; // ncclSum
  case 3:
    return 4; // ncclAvg
  default:
    return std::nullopt;
  }
}

/// The contiguous buffer behind an unranked operand (a memref.cast of an
/// identity-layout memref), or null.
static TypedValue<MemRefType> contiguousBufferOf(Value operand) {
  auto cast = operand.getDefiningOp<memref::CastOp>();
  if (!cast)
    return {};
  auto ranked = dyn_cast<TypedValue<MemRefType>>(cast.getSource());
  if (!ranked || !ranked.getType().getLayout().isIdentity() ||
      !ncclTypeOf(ranked.getType().getElementType()))
    return {};
  return ranked;
}

/// The buffer's address as an i64.
static Value addressOf(OpBuilder &b, Location loc,
                       TypedValue<MemRefType> buffer) {
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
}

/// An i64 address as an LLVM pointer.
static Value toPointer(OpBuilder &b, Location loc, Value address) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
}

/// The buffer's address as an LLVM pointer.
static Value pointerOf(OpBuilder &b, Location loc,
                       TypedValue<MemRefType> buffer) {
  return toPointer(b, loc, addressOf(b, loc, buffer));
}

/// The buffer's number of elements, as i64.
static Value elementsOf(OpBuilder &b, Location loc,
                        TypedValue<MemRefType> buffer) {
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 0; d < buffer.getType().getRank(); ++d)
    count = arith::MulIOp::create(b, loc, count,
                                  memref::DimOp::create(b, loc, buffer, d));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
}

/// Lowers `call` (a `what` collective); returns the started handle (null
/// for a blocking one), or failure where the call does not qualify.
static FailureOr<Value> lowerCall(func::CallOp call, Collective what,
                                  ModuleOp module) {
  // Operands: in, out, group size, [stride], member, [reduction].
  ValueRange operands = call.getOperands();
  TypedValue<MemRefType> in = contiguousBufferOf(operands[0]);
  TypedValue<MemRefType> out = contiguousBufferOf(operands[1]);
  if (!in || !out || !in.getType().getElementType().isF32())
    return failure();
  Value groupSize = operands[2], stride, member, reduction;
  switch (what.kind) {
  case Kind::AllReduce:
    stride = operands[3];
    member = operands[4];
    reduction = operands[5];
    break;
  case Kind::ReduceScatter:
    member = operands[3];
    reduction = operands[4];
    break;
  case Kind::AllGather:
    member = operands[3];
    break;
  }
  std::optional<int32_t> ncclReduction = 0;
  if (reduction && !(ncclReduction = ncclReductionOf(reduction)))
    return failure();

  OpBuilder b(call);
  Location loc = call.getLoc();
  MLIRContext *context = b.getContext();
  Type pointer = LLVM::LLVMPointerType::get(context);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  if (!stride)
    stride = arith::ConstantIntOp::create(b, loc, 1, 64);
  // Every rank takes its group's communicator here (a collective split on
  // first use), members and non-members alike.
  func::FuncOp comm =
      declareRuntimeFunction(module, "braidrt_cuda_comm", {i64, i64, i32},
                             {pointer}, /*cInterface=*/false);
  Value communicator =
      func::CallOp::create(b, loc, comm, ValueRange{groupSize, stride, member})
          .getResult(0);
  Value zero32 = arith::ConstantIntOp::create(b, loc, 0, 32);
  Value one64 = arith::ConstantIntOp::create(b, loc, 1, 64);
  Value isMember = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, member, zero32),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, groupSize,
                            one64));
  auto branch = scf::IfOp::create(b, loc, TypeRange{i64}, isMember,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    Value stream =
        func::CallOp::create(
            b, loc,
            declareRuntimeFunction(module, "braidrt_cuda_comm_stream", {},
                                   {pointer}, /*cInterface=*/false),
            ValueRange{})
            .getResult(0);
    Value send = pointerOf(b, loc, in), receive = pointerOf(b, loc, out);
    // all_reduce counts every element, reduce_scatter the rank's share
    // (its output), all_gather the rank's part (its input).
    Value count =
        elementsOf(b, loc, what.kind == Kind::ReduceScatter ? out : in);
    Value dtype = arith::ConstantIntOp::create(
        b, loc, *ncclTypeOf(in.getType().getElementType()), 32);
    SmallVector<Value> arguments = {send, receive, count, dtype};
    SmallVector<Type> types = {pointer, pointer, i64, i32};
    if (what.kind != Kind::AllGather) {
      arguments.push_back(
          arith::ConstantIntOp::create(b, loc, *ncclReduction, 32));
      types.push_back(i32);
    }
    arguments.append({communicator, stream});
    types.append({pointer, pointer});
    Value status = func::CallOp::create(b, loc,
                                        declareRuntimeFunction(
                                            module, ncclFunctionOf(what.kind),
                                            types, {i32}, /*cInterface=*/false),
                                        arguments)
                       .getResult(0);
    Value which = arith::ConstantIntOp::create(
        b, loc, static_cast<int32_t>(what.kind), 32);
    func::CallOp::create(
        b, loc,
        declareRuntimeFunction(module, "braidrt_cuda_nccl_result",
                               {i32, pointer, i32}, {}, /*cInterface=*/false),
        ValueRange{status, communicator, which});
    Value handle;
    if (what.started) {
      handle = func::CallOp::create(b, loc,
                                    declareRuntimeFunction(
                                        module, "braidrt_cuda_record_event",
                                        {pointer}, {i64}, /*cInterface=*/false),
                                    ValueRange{stream})
                   .getResult(0);
    } else {
      func::CallOp::create(
          b, loc,
          declareRuntimeFunction(module, "braidrt_cuda_stream_wait", {pointer},
                                 {}, /*cInterface=*/false),
          ValueRange{stream});
      handle = arith::ConstantIntOp::create(b, loc, 0, 64);
    }
    scf::YieldOp::create(b, loc, handle);
    // A rank in no group (or a group of one) keeps its input.
    b.setInsertionPointToStart(branch.elseBlock());
    if (succeeded(verifyCompatibleShape(in.getType(), out.getType()))) {
      memref::CopyOp::create(b, loc, in, out);
    } else {
      // A reduce_scatter's or all_gather's static shapes differ, so a rank
      // in no group cannot keep its input: the runtime says so (the CPU
      // runtime fails there too).
      func::CallOp::create(
          b, loc,
          declareRuntimeFunction(module, "braidrt_cuda_no_group_error",
                                 {i64, i32}, {}, /*cInterface=*/false),
          ValueRange{groupSize, member});
    }
    scf::YieldOp::create(
        b, loc, ValueRange{arith::ConstantIntOp::create(b, loc, 0, 64)});
  }
  return what.started ? branch.getResult(0) : Value();
}

//===----------------------------------------------------------------------===//
// The lookups' exchanges: uneven all_to_all as grouped ncclSend/ncclRecv.
//===----------------------------------------------------------------------===//

namespace {
/// An exchange of rows with every rank, sizes read at run time.
enum class ExchangeKind { Split, Counts, CountsOfCounts };
struct Exchange {
  ExchangeKind kind;
  bool started;
};
} // namespace

/// The element-type suffixes of the CPU runtime's exchanges and waits that
/// this pass lowers (16-bit ones come from braid-exchange-precision).
static constexpr StringLiteral kExchangeSuffixes[] = {"f32",  "f64", "i64",
                                                      "i32",  "bf16", "f16"};

static std::optional<Exchange> exchangeOf(StringRef callee) {
  if (callee == runtime::kExchangeCounts)
    return Exchange{ExchangeKind::CountsOfCounts, false};
  for (StringRef suffix : kExchangeSuffixes) {
    auto named = [&](StringRef base) {
      return callee == (base + suffix).str();
    };
    if (named(runtime::kAllToAll))
      return Exchange{ExchangeKind::Split, false};
    if (named(runtime::kAllToAllStart))
      return Exchange{ExchangeKind::Split, true};
    if (named(runtime::kAllToAllV))
      return Exchange{ExchangeKind::Counts, false};
    if (named(runtime::kAllToAllVStart))
      return Exchange{ExchangeKind::Counts, true};
  }
  return std::nullopt;
}

/// A rank-1 or rank-2 i64 buffer behind an unranked operand, or null.
static TypedValue<MemRefType> sizesBufferOf(Value operand) {
  TypedValue<MemRefType> buffer = contiguousBufferOf(operand);
  if (!buffer || !buffer.getType().getElementType().isInteger(64) ||
      buffer.getType().getRank() > 2)
    return {};
  return buffer;
}

/// Loads element `flat` of a rank-1 or (row-major) rank-2 sizes buffer.
static Value loadFlat(OpBuilder &b, Location loc, TypedValue<MemRefType> buffer,
                      Value flat) {
  if (buffer.getType().getRank() == 1)
    return memref::LoadOp::create(b, loc, buffer, flat);
  Value columns = memref::DimOp::create(b, loc, buffer, 1);
  return memref::LoadOp::create(
      b, loc, buffer,
      ValueRange{arith::DivUIOp::create(b, loc, flat, columns),
                 arith::RemUIOp::create(b, loc, flat, columns)});
}

/// Lowers an exchange call: every peer's rows sent and received in one
/// NCCL group on the communication stream. Returns the started handle
/// (null for a blocking one), or failure where the call does not qualify.
static FailureOr<Value> lowerExchange(func::CallOp call, Exchange what,
                                      ModuleOp module) {
  ValueRange operands = call.getOperands();
  TypedValue<MemRefType> in, out, sendSizes, recvSizes;
  switch (what.kind) {
  case ExchangeKind::Split: // (in, out, split R x R)
    in = contiguousBufferOf(operands[0]);
    out = contiguousBufferOf(operands[1]);
    sendSizes = recvSizes = sizesBufferOf(operands[2]);
    break;
  case ExchangeKind::Counts: // (in, send counts, out, receive counts)
    in = contiguousBufferOf(operands[0]);
    sendSizes = sizesBufferOf(operands[1]);
    out = contiguousBufferOf(operands[2]);
    recvSizes = sizesBufferOf(operands[3]);
    break;
  case ExchangeKind::CountsOfCounts: // (send counts, receive counts)
    in = sizesBufferOf(operands[0]);
    out = sizesBufferOf(operands[1]);
    break;
  }
  if (!in || !out ||
      (what.kind != ExchangeKind::CountsOfCounts &&
       (!sendSizes || !recvSizes)) ||
      in.getType().getElementType() != out.getType().getElementType() ||
      in.getType().getRank() != out.getType().getRank() ||
      !ncclTypeOf(in.getType().getElementType()))
    return failure();

  OpBuilder b(call);
  Location loc = call.getLoc();
  Type pointer = LLVM::LLVMPointerType::get(b.getContext());
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), index = b.getIndexType();
  auto callOne = [&](StringRef name, TypeRange inputs, TypeRange results,
                     ValueRange arguments) -> func::CallOp {
    return func::CallOp::create(b, loc,
                                declareRuntimeFunction(module, name, inputs,
                                                       results,
                                                       /*cInterface=*/false),
                                arguments);
  };
  Value comm =
      callOne("braidrt_cuda_nccl_comm", {}, {pointer}, {}).getResult(0);
  Value stream =
      callOne("braidrt_cuda_comm_stream", {}, {pointer}, {}).getResult(0);
  Value rank = arith::IndexCastOp::create(
      b, loc, index, callOne(runtime::kRank, {}, {i64}, {}).getResult(0));
  Value world = arith::IndexCastOp::create(
      b, loc, index, callOne("braidrt_world_size", {}, {i64}, {}).getResult(0));
  // Elements per row (every dimension after the first).
  Value rowElements = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 1; d < in.getType().getRank(); ++d)
    rowElements = arith::MulIOp::create(b, loc, rowElements,
                                        memref::DimOp::create(b, loc, in, d));
  int64_t elementBytes = in.getType().getElementTypeBitWidth() / 8;
  Value rowBytes = arith::MulIOp::create(
      b, loc, rowElements,
      arith::ConstantIndexOp::create(b, loc, elementBytes));
  Value inAddress = addressOf(b, loc, in), outAddress = addressOf(b, loc, out);
  Value dtype = arith::ConstantIntOp::create(
      b, loc, *ncclTypeOf(in.getType().getElementType()), 32);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value groupCheck = arith::ConstantIntOp::create(b, loc, 3, 32);
  auto check = [&](Value status) {
    callOne("braidrt_cuda_nccl_result", {i32, pointer, i32}, {},
            {status, comm, groupCheck});
  };
  check(callOne("ncclGroupStart", {}, {i32}, {}).getResult(0));
  auto loop =
      scf::ForOp::create(b, loc, zero, world, one, ValueRange{zero, zero});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value peer = loop.getInductionVar();
    Value sentRows = loop.getRegionIterArgs()[0];
    Value receivedRows = loop.getRegionIterArgs()[1];
    // Rows to and from this peer.
    Value sendRows, recvRows;
    switch (what.kind) {
    case ExchangeKind::Split:
      sendRows = loadFlat(
          b, loc, sendSizes,
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, rank, world), peer));
      recvRows = loadFlat(
          b, loc, recvSizes,
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, peer, world), rank));
      break;
    case ExchangeKind::Counts:
      sendRows = loadFlat(b, loc, sendSizes, peer);
      recvRows = loadFlat(b, loc, recvSizes, peer);
      break;
    case ExchangeKind::CountsOfCounts:
      sendRows = recvRows = arith::ConstantIntOp::create(b, loc, 1, 64);
      break;
    }
    sendRows = arith::IndexCastOp::create(b, loc, index, sendRows);
    recvRows = arith::IndexCastOp::create(b, loc, index, recvRows);
    Value peer32 = arith::IndexCastOp::create(b, loc, i32, peer);
    auto transfer = [&](StringRef name, Value address, Value atRow,
                        Value rows) {
      Value any =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, rows, zero);
      auto branch = scf::IfOp::create(b, loc, TypeRange{}, any, false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(branch.thenBlock());
      Value offset = arith::IndexCastOp::create(
          b, loc, i64, arith::MulIOp::create(b, loc, atRow, rowBytes));
      Value where =
          toPointer(b, loc, arith::AddIOp::create(b, loc, address, offset));
      Value count = arith::IndexCastOp::create(
          b, loc, i64, arith::MulIOp::create(b, loc, rows, rowElements));
      check(callOne(name, {pointer, i64, i32, i32, pointer, pointer}, {i32},
                    {where, count, dtype, peer32, comm, stream})
                .getResult(0));
    };
    transfer("ncclSend", inAddress, sentRows, sendRows);
    transfer("ncclRecv", outAddress, receivedRows, recvRows);
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::AddIOp::create(b, loc, sentRows, sendRows),
                   arith::AddIOp::create(b, loc, receivedRows, recvRows)});
  }
  check(callOne("ncclGroupEnd", {}, {i32}, {}).getResult(0));
  if (what.started)
    return callOne("braidrt_cuda_record_event", {pointer}, {i64}, {stream})
        .getResult(0);
  callOne("braidrt_cuda_stream_wait", {pointer}, {}, {stream});
  return Value();
}

namespace {
struct BraidLowerCollectivesToNcclPass
    : public braid::impl::BraidLowerCollectivesToNcclPassBase<
          BraidLowerCollectivesToNcclPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (collectiveOf(call.getCallee()) || exchangeOf(call.getCallee()))
        calls.push_back(call);
    });
    // The handles of started collectives now on NCCL.
    llvm::DenseSet<Value> ncclHandles;
    for (func::CallOp call : calls) {
      bool started = false;
      FailureOr<Value> handle = failure();
      if (std::optional<Collective> what = collectiveOf(call.getCallee())) {
        started = what->started;
        handle = lowerCall(call, *what, module);
      } else {
        std::optional<Exchange> exchange = exchangeOf(call.getCallee());
        started = exchange->started;
        handle = lowerExchange(call, *exchange, module);
      }
      if (failed(handle)) {
        ++numKept;
        continue;
      }
      ++numLowered;
      if (started) {
        call.getResult(0).replaceAllUsesWith(*handle);
        ncclHandles.insert(*handle);
      }
      call.erase();
    }
    auto isWait = [](StringRef callee) {
      return llvm::any_of(
          kExchangeSuffixes, [&](StringRef suffix) {
            return callee == (runtime::kWaitExchange + suffix).str();
          });
    };
    SmallVector<func::CallOp> waits;
    module.walk([&](func::CallOp call) {
      if (isWait(call.getCallee()) && ncclHandles.contains(call.getOperand(0)))
        waits.push_back(call);
    });
    for (func::CallOp call : waits) {
      OpBuilder b(call);
      func::CallOp::create(
          b, call.getLoc(),
          declareRuntimeFunction(module, "braidrt_cuda_wait_event",
                                 {b.getI64Type()}, {}, /*cInterface=*/false),
          ValueRange{call.getOperand(0)});
      call.erase();
    }
    // Declarations of the CPU runtime's collectives nothing calls now.
    for (auto function : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (function.isDeclaration() &&
          (collectiveOf(function.getName()) || exchangeOf(function.getName()) ||
           isWait(function.getName())) &&
          SymbolTable::symbolKnownUseEmpty(function, module))
        function.erase();
  }
};
} // namespace
