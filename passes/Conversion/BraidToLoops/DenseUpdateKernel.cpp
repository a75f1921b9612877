//===- DenseUpdateKernel.cpp - The dense optimizer step -------------------===//
//
// This file implements buildDenseUpdateKernel. Each element is independent,
// so the step is one elementwise linalg.generic over the parameter with the
// gradient and the state as inputs and the new parameter and state as
// outputs; bufferization and convert-linalg-to-parallel-loops make it a
// parallel loop, which the CPU target runs with OpenMP and the CUDA target
// maps to a kernel. The arithmetic is OptimizerMath.h's, in the same order,
// in f64, each result rounded to f32 once, as the runtime's step did.
//
// It also implements buildFusedDenseUpdateKernel: a gradient bucket's
// steps as one parallel loop over all its members' elements, reading each
// gradient straight out of the bucket, so a GPU launches one kernel per
// bucket instead of one per parameter.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/DenseUpdateKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::braid;

namespace {
/// An optimizer's kind and hyperparameters, and Adam's bias corrections,
/// built once outside a kernel.
struct OptimizerMath {
  StringRef kind;
  double lr = 0, eps = 0, beta1 = 0, beta2 = 0;
  Value correction1, correction2;
};
} // namespace

/// The optimizer of `op` (SGD, Adagrad or Adam), or a located error.
static FailureOr<OptimizerMath> prepareOptimizer(OpBuilder &b, Operation *op,
                                                 DictionaryAttr optimizer,
                                                 Value step) {
  Location loc = op->getLoc();
  OptimizerMath math;
  math.kind = optimizer.getAs<StringAttr>("type").getValue();
  if (math.kind != "sgd" && math.kind != "adagrad" && math.kind != "adam")
    return op->emitError() << "the dense update kernel takes sgd, adagrad and "
                              "adam, not "
                           << math.kind;
  auto number = [&](StringRef key) {
    auto value = optimizer.getAs<FloatAttr>(key);
    return value ? value.getValueAsDouble() : 0.0;
  };
  math.lr = number("lr");
  math.eps = number("eps");
  math.beta1 = number("beta1");
  math.beta2 = number("beta2");
  // Adam's bias corrections, once: 1 - beta^step (std::pow's value: the
  // targets' pow of two f64s).
  if (math.kind == "adam") {
    Type f64 = b.getF64Type();
    Value t = arith::SIToFPOp::create(b, loc, f64, step);
    auto correction = [&](double beta) -> Value {
      Value base = arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f64),
                                                  APFloat(beta));
      Value power = math::PowFOp::create(b, loc, base, t);
      Value one = arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f64),
                                                 APFloat(1.0));
      return arith::SubFOp::create(b, loc, one, power);
    };
    math.correction1 = correction(math.beta1);
    math.correction2 = correction(math.beta2);
  }
  return math;
}

/// One element's step from its f32 parameter `w`, gradient `g` and state:
/// the new parameter, then the new state, each rounded to f32.
static SmallVector<Value> stepElement(OpBuilder &nb, Location nloc,
                                      const OptimizerMath &math, Value w32,
                                      Value g32, ValueRange state32) {
  Type f32 = nb.getF32Type(), f64 = nb.getF64Type();
  auto constant = [&](double value) -> Value {
    return arith::ConstantFloatOp::create(nb, nloc, cast<FloatType>(f64),
                                          APFloat(value));
  };
  auto wide = [&](Value v) -> Value {
    return arith::ExtFOp::create(nb, nloc, f64, v);
  };
  auto narrow = [&](Value v) -> Value {
    return arith::TruncFOp::create(nb, nloc, f32, v);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(nb, nloc, x, y);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(nb, nloc, x, y);
  };
  auto div = [&](Value x, Value y) -> Value {
    return arith::DivFOp::create(nb, nloc, x, y);
  };
  Value w = wide(w32);
  Value g = wide(g32);
  Value lrValue = constant(math.lr);
  Value epsValue = constant(math.eps);
  Value delta;
  SmallVector<Value> results;
  // One statement per operation, so the IR's order does not depend on the
  // order the compiler evaluates arguments in.
  if (math.kind == "sgd") {
    delta = mul(lrValue, g);
  } else if (math.kind == "adagrad") {
    Value square = mul(g, g);
    Value sum = add(wide(state32[0]), square);
    results.push_back(narrow(sum));
    Value root = math::SqrtOp::create(nb, nloc, sum);
    Value step = mul(lrValue, g);
    delta = div(step, add(root, epsValue));
  } else {
    Value oldM = mul(constant(math.beta1), wide(state32[0]));
    Value m = add(oldM, mul(constant(1 - math.beta1), g));
    Value oldV = mul(constant(math.beta2), wide(state32[1]));
    Value scaled = mul(constant(1 - math.beta2), g);
    Value v = add(oldV, mul(scaled, g));
    results.push_back(narrow(m));
    results.push_back(narrow(v));
    Value mHat = div(m, math.correction1);
    Value vHat = div(v, math.correction2);
    Value root = math::SqrtOp::create(nb, nloc, vHat);
    Value step = mul(lrValue, mHat);
    delta = div(step, add(root, epsValue));
  }
  results.insert(results.begin(),
                 narrow(arith::SubFOp::create(nb, nloc, w, delta)));
  return results;
}

FailureOr<SmallVector<Value>>
mlir::braid::buildDenseUpdateKernel(OpBuilder &b, DenseUpdateOp op,
                                    Value step) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getParam().getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape())
    return op.emitError() << "the dense update kernel updates static f32 "
                             "parameters";
  FailureOr<OptimizerMath> math =
      prepareOptimizer(b, op, op.getOptimizer(), step);
  if (failed(math))
    return failure();
  Type f32 = b.getF32Type();

  // Over the elements as one dimension: a GPU target maps a 1-D parallel
  // loop onto blocks of threads (a 2-D one would get a thread per block),
  // and the reshapes are views of the same contiguous buffers.
  int64_t rank = type.getRank();
  auto flatType = RankedTensorType::get({type.getNumElements()}, f32);
  SmallVector<ReassociationIndices> groups;
  if (rank > 0)
    groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  auto flatten = [&](Value value) -> Value {
    if (rank == 1)
      return value;
    if (rank == 0)
      return tensor::ExpandShapeOp::create(b, loc, flatType, value, groups);
    return tensor::CollapseShapeOp::create(b, loc, flatType, value, groups);
  };
  auto unflatten = [&](Value value) -> Value {
    if (rank == 1)
      return value;
    if (rank == 0)
      return tensor::CollapseShapeOp::create(b, loc, type, value, groups);
    return tensor::ExpandShapeOp::create(b, loc, type, value, groups);
  };
  SmallVector<Value> inputs = {flatten(op.getParam()), flatten(op.getGrad())};
  for (Value state : op.getState())
    inputs.push_back(flatten(state));
  SmallVector<Value> outputs;
  SmallVector<Type> resultTypes(op->getNumResults(), flatType);
  for (size_t i = 0; i < resultTypes.size(); ++i)
    outputs.push_back(tensor::EmptyOp::create(b, loc, flatType, ValueRange{}));
  SmallVector<AffineMap> maps(inputs.size() + outputs.size(),
                              b.getMultiDimIdentityMap(1));
  SmallVector<utils::IteratorType> iterators(1, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, outputs, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(
            nb, nloc,
            stepElement(nb, nloc, *math, args[0], args[1],
                        args.slice(2, op.getState().size())));
      });
  SmallVector<Value> results;
  for (Value result : generic->getResults())
    results.push_back(unflatten(result));
  return results;
}

FailureOr<SmallVector<Value>>
mlir::braid::buildFusedDenseUpdateKernel(OpBuilder &b, FusedDenseUpdateOp op,
                                         Value step) {
  Location loc = op.getLoc();
  FailureOr<OptimizerMath> math =
      prepareOptimizer(b, op, op.getOptimizer(), step);
  if (failed(math))
    return failure();
  Type f32 = b.getF32Type();
  ValueRange params = op.getParams();
  size_t members = params.size();
  size_t perMember = op.getState().size() / members;
  // Every buffer as a 1-D view of its elements (row-major, identity
  // layout: the conversion reads and allocates them so).
  auto flatView = [&](Value buffer, int64_t size) -> Value {
    return memref::ReinterpretCastOp::create(
        b, loc, MemRefType::get({size}, f32), buffer, /*offset=*/0,
        /*sizes=*/ArrayRef<int64_t>{size}, /*strides=*/ArrayRef<int64_t>{1});
  };
  auto readBuffer = [&](Value tensor) -> Value {
    auto type = cast<RankedTensorType>(tensor.getType());
    return bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), f32), tensor,
        /*read_only=*/b.getUnitAttr());
  };
  Value grads = readBuffer(op.getGrads());
  // Per member: its parameter, state and new buffers, flat; and where its
  // elements start in the loop's index space (the members one after the
  // other) and in `grads`.
  struct Member {
    Value param, newParam;
    SmallVector<Value> state, newState;
    int64_t start = 0, size = 0, gradOffset = 0;
  };
  SmallVector<Member> layout;
  SmallVector<Value> newParamTensors, newStateTensors;
  int64_t total = 0;
  auto allocate = [&](RankedTensorType type, SmallVector<Value> &tensors) {
    Value buffer =
        memref::AllocOp::create(b, loc, MemRefType::get(type.getShape(), f32));
    tensors.push_back(bufferization::ToTensorOp::create(
        b, loc, type, buffer, /*restrict=*/true, /*writable=*/true));
    return flatView(buffer, type.getNumElements());
  };
  for (auto [index, param, offset] : llvm::enumerate(params, op.getOffsets())) {
    auto type = cast<RankedTensorType>(param.getType());
    Member member;
    member.size = type.getNumElements();
    member.start = total;
    member.gradOffset = offset;
    total += member.size;
    member.param = flatView(readBuffer(param), member.size);
    member.newParam = allocate(type, newParamTensors);
    for (size_t k = 0; k < perMember; ++k) {
      member.state.push_back(flatView(
          readBuffer(op.getState()[index * perMember + k]), member.size));
      member.newState.push_back(allocate(type, newStateTensors));
    }
    layout.push_back(std::move(member));
  }

  // One loop over every member's elements: index i is member m's element
  // i - start(m), m found by comparing i with the members' starts; each
  // member's body reads its own buffers.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value upper = arith::ConstantIndexOp::create(b, loc, total);
  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{upper}, ValueRange{one},
      [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        Value i = ivs[0];
        Value which = arith::ConstantIndexOp::create(nb, nloc, 0);
        for (size_t m = 1; m < members; ++m) {
          Value start =
              arith::ConstantIndexOp::create(nb, nloc, layout[m].start);
          Value past = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::uge, i, start);
          Value index = arith::ConstantIndexOp::create(nb, nloc, m);
          which = arith::SelectOp::create(nb, nloc, past, index, which);
        }
        SmallVector<int64_t> cases =
            llvm::to_vector(llvm::seq<int64_t>(0, int64_t(members) - 1));
        auto dispatch = scf::IndexSwitchOp::create(nb, nloc, TypeRange{}, which,
                                                   cases, cases.size());
        auto buildMember = [&](Region &region, const Member &member) {
          OpBuilder::InsertionGuard guard(nb);
          nb.setInsertionPointToStart(&region.emplaceBlock());
          Value start = arith::ConstantIndexOp::create(nb, nloc, member.start);
          Value j = arith::SubIOp::create(nb, nloc, i, start);
          Value gradOffset =
              arith::ConstantIndexOp::create(nb, nloc, member.gradOffset);
          Value gradIndex = arith::AddIOp::create(nb, nloc, j, gradOffset);
          Value g = memref::LoadOp::create(nb, nloc, grads, gradIndex);
          Value w = memref::LoadOp::create(nb, nloc, member.param, j);
          SmallVector<Value> state;
          for (Value buffer : member.state)
            state.push_back(memref::LoadOp::create(nb, nloc, buffer, j));
          SmallVector<Value> next = stepElement(nb, nloc, *math, w, g, state);
          memref::StoreOp::create(nb, nloc, next[0], member.newParam, j);
          for (auto [value, buffer] :
               llvm::zip(llvm::drop_begin(next), member.newState))
            memref::StoreOp::create(nb, nloc, value, buffer, j);
          scf::YieldOp::create(nb, nloc);
        };
        for (size_t m = 0; m + 1 < members; ++m)
          buildMember(dispatch.getCaseRegions()[m], layout[m]);
        buildMember(dispatch.getDefaultRegion(), layout.back());
      });
  SmallVector<Value> results = std::move(newParamTensors);
  llvm::append_range(results, newStateTensors);
  return results;
}
