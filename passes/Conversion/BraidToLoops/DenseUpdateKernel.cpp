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
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/DenseUpdateKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::braid;

FailureOr<SmallVector<Value>>
mlir::braid::buildDenseUpdateKernel(OpBuilder &b, DenseUpdateOp op,
                                    Value step) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getParam().getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape())
    return op.emitError() << "the dense update kernel updates static f32 "
                             "parameters";
  DictionaryAttr optimizer = op.getOptimizer();
  StringRef kind = optimizer.getAs<StringAttr>("type").getValue();
  if (kind != "sgd" && kind != "adagrad" && kind != "adam")
    return op.emitError() << "the dense update kernel takes sgd, adagrad and "
                             "adam, not "
                          << kind;
  auto number = [&](StringRef key) {
    auto value = optimizer.getAs<FloatAttr>(key);
    return value ? value.getValueAsDouble() : 0.0;
  };
  double lr = number("lr"), eps = number("eps"), beta1 = number("beta1"),
         beta2 = number("beta2");
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  auto constant = [&](OpBuilder &builder, double value) -> Value {
    return arith::ConstantFloatOp::create(builder, loc, cast<FloatType>(f64),
                                          APFloat(value));
  };
  // Adam's bias corrections, once: 1 - beta^step (std::pow's value: the
  // targets' pow of two f64s).
  Value correction1, correction2;
  if (kind == "adam") {
    Value t = arith::SIToFPOp::create(b, loc, f64, step);
    auto correction = [&](double beta) -> Value {
      Value base = constant(b, beta);
      Value power = math::PowFOp::create(b, loc, base, t);
      Value one = constant(b, 1.0);
      return arith::SubFOp::create(b, loc, one, power);
    };
    correction1 = correction(beta1);
    correction2 = correction(beta2);
  }

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
        Value w = wide(args[0]);
        Value g = wide(args[1]);
        Value lrValue = constant(nb, lr);
        Value epsValue = constant(nb, eps);
        Value delta;
        SmallVector<Value> yields;
        // One statement per operation, so the IR's order does not depend
        // on the order the compiler evaluates arguments in.
        if (kind == "sgd") {
          delta = mul(lrValue, g);
        } else if (kind == "adagrad") {
          Value square = mul(g, g);
          Value sum = add(wide(args[2]), square);
          yields.push_back(narrow(sum));
          Value root = math::SqrtOp::create(nb, nloc, sum);
          Value step = mul(lrValue, g);
          delta = div(step, add(root, epsValue));
        } else {
          Value oldM = mul(constant(nb, beta1), wide(args[2]));
          Value m = add(oldM, mul(constant(nb, 1 - beta1), g));
          Value oldV = mul(constant(nb, beta2), wide(args[3]));
          Value scaled = mul(constant(nb, 1 - beta2), g);
          Value v = add(oldV, mul(scaled, g));
          yields.push_back(narrow(m));
          yields.push_back(narrow(v));
          Value mHat = div(m, correction1);
          Value vHat = div(v, correction2);
          Value root = math::SqrtOp::create(nb, nloc, vHat);
          Value step = mul(lrValue, mHat);
          delta = div(step, add(root, epsValue));
        }
        yields.insert(yields.begin(),
                      narrow(arith::SubFOp::create(nb, nloc, w, delta)));
        linalg::YieldOp::create(nb, nloc, yields);
      });
  SmallVector<Value> results;
  for (Value result : generic->getResults())
    results.push_back(unflatten(result));
  return results;
}
