//===- LowerCollectivesToNccl.cpp - Gradient collectives as NCCL calls ----===//
//
// This file implements braid-lower-collectives-to-nccl: on the CUDA target's
// host code, the CPU runtime's f32 all_reduce, reduce_scatter and all_gather
// calls (blocking and started) become ncclAllReduce, ncclReduceScatter and
// ncclAllGather calls on the runtime's communication stream, with the
// group's communicator, the buffers' pointers and counts, and an event per
// started collective that its wait synchronizes.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "../BraidToCPU/RuntimeFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
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

/// ncclFloat32.
static constexpr int32_t kNcclFloat32 = 7;

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
  switch (value.getSExtValue()) {
  case 0:
    return 0; // ncclSum
  case 1:
    return 2; // ncclMax
  case 2:
    return 3; // ncclMin
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
      !ranked.getType().getElementType().isF32())
    return {};
  return ranked;
}

/// Declares `name` in `module` if it is not yet.
static func::FuncOp declare(ModuleOp module, StringRef name, TypeRange inputs,
                            TypeRange results) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(
      builder, module.getLoc(), name,
      builder.getFunctionType(inputs, results));
  function.setPrivate();
  return function;
}

/// The buffer's address as an LLVM pointer.
static Value pointerOf(OpBuilder &b, Location loc,
                       TypedValue<MemRefType> buffer) {
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value integer =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                                  integer);
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
  if (!in || !out)
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
      declare(module, "braidrt_cuda_comm", {i64, i64, i32}, {pointer});
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
            b, loc, declare(module, "braidrt_cuda_comm_stream", {}, {pointer}),
            ValueRange{})
            .getResult(0);
    Value send = pointerOf(b, loc, in), receive = pointerOf(b, loc, out);
    // all_reduce counts every element, reduce_scatter the rank's share
    // (its output), all_gather the rank's part (its input).
    Value count = elementsOf(b, loc, what.kind == Kind::ReduceScatter ? out : in);
    Value dtype = arith::ConstantIntOp::create(b, loc, kNcclFloat32, 32);
    SmallVector<Value> arguments = {send, receive, count, dtype};
    SmallVector<Type> types = {pointer, pointer, i64, i32};
    if (what.kind != Kind::AllGather) {
      arguments.push_back(
          arith::ConstantIntOp::create(b, loc, *ncclReduction, 32));
      types.push_back(i32);
    }
    arguments.append({communicator, stream});
    types.append({pointer, pointer});
    Value status =
        func::CallOp::create(
            b, loc, declare(module, ncclFunctionOf(what.kind), types, {i32}),
            arguments)
            .getResult(0);
    Value which =
        arith::ConstantIntOp::create(b, loc, static_cast<int32_t>(what.kind), 32);
    func::CallOp::create(
        b, loc,
        declare(module, "braidrt_cuda_nccl_result", {i32, pointer, i32}, {}),
        ValueRange{status, communicator, which});
    Value handle;
    if (what.started) {
      handle = func::CallOp::create(
                   b, loc,
                   declare(module, "braidrt_cuda_record_event", {pointer}, {i64}),
                   ValueRange{stream})
                   .getResult(0);
    } else {
      func::CallOp::create(
          b, loc, declare(module, "braidrt_cuda_stream_wait", {pointer}, {}),
          ValueRange{stream});
      handle = arith::ConstantIntOp::create(b, loc, 0, 64);
    }
    scf::YieldOp::create(b, loc, handle);
    // A rank in no group (or a group of one) keeps its input.
    b.setInsertionPointToStart(branch.elseBlock());
    // (Through dynamic shapes: a reduce_scatter's or all_gather's static
    // types differ, but not on a rank that takes this branch.)
    auto dynamic = [&](TypedValue<MemRefType> buffer) -> Value {
      auto type = MemRefType::get(
          SmallVector<int64_t>(buffer.getType().getRank(), ShapedType::kDynamic),
          buffer.getType().getElementType());
      return memref::CastOp::create(b, loc, type, buffer);
    };
    Value source = dynamic(in);
    Value target = dynamic(out);
    memref::CopyOp::create(b, loc, source, target);
    scf::YieldOp::create(b, loc, ValueRange{arith::ConstantIntOp::create(b, loc, 0, 64)});
  }
  return what.started ? branch.getResult(0) : Value();
}

namespace {
struct BraidLowerCollectivesToNcclPass
    : public braid::impl::BraidLowerCollectivesToNcclPassBase<
          BraidLowerCollectivesToNcclPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::CallOp, Collective>> calls;
    module.walk([&](func::CallOp call) {
      if (std::optional<Collective> what = collectiveOf(call.getCallee()))
        calls.push_back({call, *what});
    });
    // The handles of started collectives now on NCCL.
    llvm::DenseSet<Value> ncclHandles;
    for (auto [call, what] : calls) {
      FailureOr<Value> handle = lowerCall(call, what, module);
      if (failed(handle)) {
        ++numKept;
        continue;
      }
      ++numLowered;
      if (what.started) {
        call.getResult(0).replaceAllUsesWith(*handle);
        ncclHandles.insert(*handle);
      }
      call.erase();
    }
    std::string wait = (runtime::kWaitExchange + "f32").str();
    SmallVector<func::CallOp> waits;
    module.walk([&](func::CallOp call) {
      if (call.getCallee() == wait && ncclHandles.contains(call.getOperand(0)))
        waits.push_back(call);
    });
    for (func::CallOp call : waits) {
      OpBuilder b(call);
      func::CallOp::create(
          b, call.getLoc(),
          declare(module, "braidrt_cuda_wait_event", {b.getI64Type()}, {}),
          ValueRange{call.getOperand(0)});
      call.erase();
    }
    // Declarations of the CPU runtime's collectives nothing calls now.
    for (auto function : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (function.isDeclaration() &&
          (collectiveOf(function.getName()) ||
           function.getName() == wait) &&
          SymbolTable::symbolKnownUseEmpty(function, module))
        function.erase();
  }
};
} // namespace
