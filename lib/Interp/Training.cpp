//===- Training.cpp - Reference semantics of a training step --------------===//
//
// This file implements one training step of the reference semantics: the
// forward pass recorded value by value, the loss, then each op's gradient
// rule in reverse program order, then the optimizers. Gradients are kept
// in doubles; parameters and rows are rounded to their element type when
// written, as the forward pass rounds every op.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/Training.h"

#include "braidrt/OptimizerMath.h"

#include "Kernels.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Interp/Bindings.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

OptimizerConfig mlir::braid::interp::readOptimizerPart(DictionaryAttr dict) {
  OptimizerConfig config;
  config.type = dict.getAs<StringAttr>("type").getValue().str();
  auto number = [&](StringRef key) {
    auto value = dict.getAs<FloatAttr>(key);
    return value ? value.getValueAsDouble() : 0.0;
  };
  config.lr = number("lr");
  config.eps = number("eps");
  config.beta1 = number("beta1");
  config.beta2 = number("beta2");
  return config;
}

FailureOr<TrainingConfig>
mlir::braid::interp::readTrainingConfig(ModuleOp module) {
  auto optimizer =
      module->getAttrOfType<DictionaryAttr>(BraidDialect::kOptimizerAttrName);
  if (!optimizer)
    return module.emitError()
           << "training needs the module's '"
           << BraidDialect::kOptimizerAttrName
           << "' (the model spec's \"optimizer\")";
  return TrainingConfig{
      readOptimizerPart(optimizer.getAs<DictionaryAttr>("dense")),
      readOptimizerPart(optimizer.getAs<DictionaryAttr>("embedding"))};
}

namespace {
/// Orders values by identity, for a map whose entries stay where they are.
struct ValueOrder {
  bool operator()(Value a, Value b) const {
    return a.getAsOpaquePointer() < b.getAsOpaquePointer();
  }
};

/// The gradients of one step: per SSA value (same element count as the
/// value), and per table the gradient of each looked-up row. A std::map, so
/// that references to several gradients held at once stay valid.
struct Gradients {
  std::map<Value, std::vector<double>, ValueOrder> values;
  llvm::StringMap<RowGradients> rows;

  MutableArrayRef<double> of(Value value, int64_t size) {
    std::vector<double> &gradient = values[value];
    if (gradient.empty())
      gradient.assign(size, 0.0);
    return gradient;
  }
};
} // namespace

/// y = act(x w^T + b), given dL/dy (dL/d(x w^T + b) when
/// `gradientIsPreActivation`): accumulates dL/dx, dL/dw and dL/db.
static void linearBackward(LinearOp op, const HostTensor &x,
                           const HostTensor &w, const HostTensor &y,
                           ArrayRef<double> dy, Gradients &grads,
                           bool gradientIsPreActivation) {
  int64_t batch = x.shape[0], in = x.shape[1], out = w.shape[0];
  addLinearGradients(
      gradientIsPreActivation ? Activation::none : op.getActivation(), x, w,
      y, dy, grads.of(op.getInput(), batch * in),
      grads.of(op.getWeight(), out * in), grads.of(op.getBias(), out));
}

/// The interaction's gradient: cat splits the columns; dot sends each
/// pairwise product's gradient to both of its vectors.
static void interactionBackward(InteractionOp op,
                                const llvm::DenseMap<Value, HostTensor> &values,
                                ArrayRef<double> dy, Gradients &grads) {
  SmallVector<const HostTensor *> features;
  SmallVector<MutableArrayRef<double>> featureGrads;
  for (Value feature : op->getOperands()) {
    const HostTensor &value = values.find(feature)->second;
    features.push_back(&value);
    featureGrads.push_back(grads.of(feature, value.getNumElements()));
  }
  addInteractionGradients(op.getKind(), features, dy,
                          values.find(op.getResult())->second.shape[1],
                          featureGrads);
}

/// The bag's gradient goes to the rows it read: all of them (sum), each
/// 1/n of it (mean), or per column the first row holding the max (max).
static LogicalResult embeddingBagBackward(EmbeddingBagOp op,
                                          const TableData &table,
                                          const llvm::DenseMap<Value, HostTensor> &values,
                                          ArrayRef<double> dy,
                                          Gradients &grads) {
  if (op.getPerSampleWeights())
    return op.emitError() << "the reference training step does not support "
                             "per-sample weights yet";
  const HostTensor &offsets = values.find(op.getOffsets())->second;
  HostTensor pooledGrad(ElementKind::f64,
                        {offsets.getNumElements() - 1, table.getDim()});
  pooledGrad.data.assign(dy.begin(), dy.end());
  FailureOr<RowGradients> rows = runBagRowGradients(
      op, op.getMode(), table, values.find(op.getIndices())->second, offsets,
      pooledGrad);
  if (failed(rows))
    return failure();
  RowGradients &tableGrads = grads.rows[op.getTable()];
  for (auto &[row, gradient] : *rows) {
    std::vector<double> &sum = tableGrads[row];
    if (sum.empty())
      sum.assign(gradient.size(), 0.0);
    for (auto [total, g] : llvm::zip(sum, gradient))
      total += g;
  }
  return success();
}

/// The formulas' number for an optimizer type (verified by the dialect).
static braidrt::optim::Kind getOptimizerKind(StringRef type) {
  if (type == "adagrad")
    return braidrt::optim::Kind::adagrad;
  if (type == "rowwise_adagrad")
    return braidrt::optim::Kind::rowwise_adagrad;
  if (type == "adam")
    return braidrt::optim::Kind::adam;
  return braidrt::optim::Kind::sgd;
}

/// One optimizer update of `weights` (rounded to `kind` by the caller) by
/// `gradient`, with `first`/`second` its state, at step `step` (from 1),
/// by the formulas compiled programs use (braidrt/OptimizerMath.h).
void mlir::braid::interp::applyOptimizer(const OptimizerConfig &config,
                                         int64_t step,
                                         MutableArrayRef<double> weights,
                                         ArrayRef<double> gradient,
                                         std::vector<double> &first,
                                         std::vector<double> &second) {
  braidrt::optim::Config formula{getOptimizerKind(config.type), config.lr,
                                 config.eps, config.beta1, config.beta2};
  size_t n = weights.size();
  bool rowwise = formula.kind == braidrt::optim::Kind::rowwise_adagrad;
  if (braidrt::optim::numStates(formula.kind) > 0)
    first.resize(rowwise ? 1 : n, 0.0);
  if (braidrt::optim::numStates(formula.kind) > 1)
    second.resize(n, 0.0);
  braidrt::optim::update(formula, step, weights.data(), gradient.data(), n,
                         first.data(), second.data());
}

FailureOr<double> mlir::braid::interp::trainStep(
    func::FuncOp func, std::vector<HostTensor> &args, TableMap &tables,
    const HostTensor &labels, const TrainingConfig &config,
    TrainingState &state) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  LinearOp last = ret.getNumOperands() == 1
                      ? ret.getOperand(0).getDefiningOp<LinearOp>()
                      : LinearOp();
  if (!last || last.getActivation() != Activation::sigmoid)
    return func.emitError() << "training needs a function that returns one "
                               "braid.linear with a sigmoid (the click "
                               "probability)";
  FailureOr<llvm::DenseMap<Value, HostTensor>> recorded =
      runFunctionRecording(func, args, tables);
  if (failed(recorded))
    return failure();
  llvm::DenseMap<Value, HostTensor> &values = *recorded;
  const HostTensor &output = values.find(last.getResult())->second;
  int64_t batch = output.shape[0];
  if (output.getRank() != 2 || output.shape[1] != 1)
    return func.emitError() << "training needs a [batch, 1] output, got "
                            << output.describeType();
  if (labels.getRank() != 1 || labels.shape[0] != batch)
    return func.emitError() << "the labels are " << labels.describeType()
                            << ", expected [" << batch << "]";

  // The loss from the logit z = x w^T + b, stably: max(z, 0) - z y +
  // log(1 + exp(-|z|)); its gradient is (sigmoid(z) - y) / batch.
  const HostTensor &x = values.find(last.getInput())->second;
  const HostTensor &w = values.find(last.getWeight())->second;
  const HostTensor &bias = values.find(last.getBias())->second;
  int64_t in = x.shape[1];
  double loss = 0;
  std::vector<double> dz(batch);
  for (int64_t b = 0; b < batch; ++b) {
    double z = bias.data[0];
    for (int64_t k = 0; k < in; ++k)
      z += x.data[b * in + k] * w.data[k];
    double y = labels.data[b];
    loss += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
    dz[b] = (1 / (1 + std::exp(-z)) - y) / double(batch);
  }
  loss /= double(batch);

  Gradients grads;
  linearBackward(last, x, w, output, dz, grads,
                 /*gradientIsPreActivation=*/true);
  Block &body = func.getBody().front();
  for (Operation &op : llvm::reverse(body)) {
    if (&op == last.getOperation() || isa<func::ReturnOp>(op))
      continue;
    if (op.getNumResults() != 1 || !grads.values.count(op.getResult(0)))
      continue;
    std::vector<double> dy = grads.values.find(op.getResult(0))->second;
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](LinearOp linear) {
              linearBackward(linear, values.find(linear.getInput())->second,
                             values.find(linear.getWeight())->second,
                             values.find(linear.getResult())->second, dy,
                             grads, /*gradientIsPreActivation=*/false);
              return success();
            })
            .Case([&](InteractionOp interaction) {
              interactionBackward(interaction, values, dy, grads);
              return success();
            })
            .Case([&](EmbeddingBagOp bag) {
              auto table = tables.find(bag.getTable());
              return embeddingBagBackward(bag, table->second, values, dy,
                                          grads);
            })
            .Case([&](arith::AddFOp add) {
              for (Value operand : add->getOperands()) {
                MutableArrayRef<double> g = grads.of(operand, dy.size());
                for (size_t i = 0; i < dy.size(); ++i)
                  g[i] += dy[i];
              }
              return success();
            })
            .Case([&](arith::MulFOp mul) {
              const HostTensor &lhs = values.find(mul.getLhs())->second;
              const HostTensor &rhs = values.find(mul.getRhs())->second;
              MutableArrayRef<double> gl = grads.of(mul.getLhs(), dy.size());
              for (size_t i = 0; i < dy.size(); ++i)
                gl[i] += dy[i] * rhs.data[i];
              MutableArrayRef<double> gr = grads.of(mul.getRhs(), dy.size());
              for (size_t i = 0; i < dy.size(); ++i)
                gr[i] += dy[i] * lhs.data[i];
              return success();
            })
            .Case([&](arith::ExtFOp ext) {
              MutableArrayRef<double> g = grads.of(ext.getIn(), dy.size());
              for (size_t i = 0; i < dy.size(); ++i)
                g[i] += dy[i];
              return success();
            })
            .Case([&](arith::ConstantOp) { return success(); })
            .Default([&](Operation *other) {
              return other->emitError()
                     << "the reference training step has no gradient rule "
                        "for '"
                     << other->getName() << "'";
            });
    if (failed(result))
      return failure();
  }

  ++state.step;
  for (BlockArgument arg : body.getArguments()) {
    unsigned index = arg.getArgNumber();
    if (!isParameter(func, index) || !grads.values.count(arg))
      continue;
    HostTensor &weights = args[index];
    std::vector<double> &first = state.first[index].data;
    std::vector<double> &second = state.second[index].data;
    applyOptimizer(config.dense, state.step, weights.data, grads.values[arg], first,
           second);
    weights.round();
    for (HostTensor *moment : {&state.first[index], &state.second[index]})
      if (!moment->data.empty()) {
        moment->kind = ElementKind::f32;
        moment->shape = weights.shape;
      }
  }
  for (auto &tableGrads : grads.rows)
    applyRowUpdates(tables.find(tableGrads.first())->second, /*colOffset=*/0,
                    tableGrads.second, config.embedding,
                    state.rowState[tableGrads.first()]);
  return loss;
}
