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

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Interp/Bindings.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

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
/// The gradients of one step: per SSA value (same element count as the
/// value), and per table the gradient of each looked-up row.
struct Gradients {
  llvm::DenseMap<Value, std::vector<double>> values;
  llvm::StringMap<llvm::MapVector<int64_t, std::vector<double>>> rows;

  std::vector<double> &of(Value value, int64_t size) {
    std::vector<double> &gradient = values[value];
    if (gradient.empty())
      gradient.assign(size, 0.0);
    return gradient;
  }
};

/// Row-major [rows, cols] view of a tensor's dims.
struct Dims {
  int64_t rows, cols;
};
Dims dimsOf(const HostTensor &tensor) {
  return {tensor.shape[0], tensor.getRank() > 1 ? tensor.shape[1] : 1};
}
} // namespace

/// y = act(x w^T + b), given dL/dy: accumulates dL/dx, dL/dw and dL/db.
static void linearBackward(LinearOp op, const HostTensor &x,
                           const HostTensor &w, const HostTensor &y,
                           std::vector<double> dy, Gradients &grads,
                           bool gradientIsPreActivation) {
  Dims xd = dimsOf(x), wd = dimsOf(w);
  int64_t batch = xd.rows, in = xd.cols, out = wd.rows;
  if (!gradientIsPreActivation)
    for (int64_t i = 0; i < batch * out; ++i) {
      switch (op.getActivation()) {
      case Activation::relu:
        dy[i] = y.data[i] > 0 ? dy[i] : 0;
        break;
      case Activation::sigmoid:
        dy[i] *= y.data[i] * (1 - y.data[i]);
        break;
      default:
        break;
      }
    }
  std::vector<double> &dx = grads.of(op.getInput(), batch * in);
  std::vector<double> &dw = grads.of(op.getWeight(), out * in);
  std::vector<double> &db = grads.of(op.getBias(), out);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t o = 0; o < out; ++o) {
      double g = dy[b * out + o];
      if (g == 0)
        continue;
      db[o] += g;
      for (int64_t k = 0; k < in; ++k) {
        dx[b * in + k] += g * w.data[o * in + k];
        dw[o * in + k] += g * x.data[b * in + k];
      }
    }
}

/// The interaction's gradient: cat splits the columns; dot sends each
/// pairwise product's gradient to both of its vectors.
static void interactionBackward(InteractionOp op,
                                const llvm::DenseMap<Value, HostTensor> &values,
                                const std::vector<double> &dy,
                                Gradients &grads) {
  SmallVector<Value> features = {op.getDense()};
  llvm::append_range(features, op.getEmbeddings());
  int64_t batch = values.find(op.getDense())->second.shape[0];
  int64_t width = values.find(op.getResult())->second.shape[1];
  if (op.getKind() == InteractionKind::cat) {
    int64_t column = 0;
    for (Value feature : features) {
      int64_t dim = values.find(feature)->second.shape[1];
      std::vector<double> &df = grads.of(feature, batch * dim);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t c = 0; c < dim; ++c)
          df[b * dim + c] += dy[b * width + column + c];
      column += dim;
    }
    return;
  }
  int64_t dim = values.find(op.getDense())->second.shape[1];
  SmallVector<std::vector<double> *> df;
  SmallVector<const HostTensor *> fv;
  for (Value feature : features) {
    df.push_back(&grads.of(feature, batch * dim));
    fv.push_back(&values.find(feature)->second);
  }
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < dim; ++c)
      (*df[0])[b * dim + c] += dy[b * width + c];
    int64_t column = dim;
    for (size_t i = 1; i < features.size(); ++i)
      for (size_t k = 0; k < i; ++k, ++column) {
        double g = dy[b * width + column];
        for (int64_t c = 0; c < dim; ++c) {
          (*df[i])[b * dim + c] += g * fv[k]->data[b * dim + c];
          (*df[k])[b * dim + c] += g * fv[i]->data[b * dim + c];
        }
      }
  }
}

/// The bag's gradient goes to the rows it read: all of them (sum), each
/// 1/n of it (mean), or per column the first row holding the max (max).
static LogicalResult embeddingBagBackward(EmbeddingBagOp op,
                                          const TableData &table,
                                          const llvm::DenseMap<Value, HostTensor> &values,
                                          const std::vector<double> &dy,
                                          Gradients &grads) {
  if (op.getPerSampleWeights())
    return op.emitError() << "the reference training step does not support "
                             "per-sample weights yet";
  const HostTensor &indices = values.find(op.getIndices())->second;
  const HostTensor &offsets = values.find(op.getOffsets())->second;
  int64_t dim = table.getDim();
  auto &rowGrads = grads.rows[op.getTable()];
  auto rowOf = [&](int64_t row) -> std::vector<double> & {
    std::vector<double> &g = rowGrads[row];
    if (g.empty())
      g.assign(dim, 0.0);
    return g;
  };
  int64_t bags = offsets.getNumElements() - 1;
  for (int64_t b = 0; b < bags; ++b) {
    int64_t begin = offsets.data[b], end = offsets.data[b + 1];
    if (begin == end)
      continue;
    const double *g = &dy[b * dim];
    switch (op.getMode()) {
    case PoolingMode::sum:
    case PoolingMode::mean: {
      double scale =
          op.getMode() == PoolingMode::mean ? 1.0 / double(end - begin) : 1.0;
      for (int64_t j = begin; j < end; ++j) {
        std::vector<double> &rg = rowOf(int64_t(indices.data[j]));
        for (int64_t c = 0; c < dim; ++c)
          rg[c] += g[c] * scale;
      }
      break;
    }
    case PoolingMode::max:
      for (int64_t c = 0; c < dim; ++c) {
        int64_t best = int64_t(indices.data[begin]);
        for (int64_t j = begin + 1; j < end; ++j) {
          int64_t row = int64_t(indices.data[j]);
          if (table.get(row, c) > table.get(best, c))
            best = row;
        }
        rowOf(best)[c] += g[c];
      }
      break;
    }
  }
  return success();
}

void mlir::braid::interp::applyOptimizer(const OptimizerConfig &config,
                                         int64_t step,
                                         MutableArrayRef<double> weights,
                                         ArrayRef<double> gradient,
                                         std::vector<double> &first,
                                         std::vector<double> &second) {
  size_t n = weights.size();
  if (config.type == "sgd") {
    for (size_t i = 0; i < n; ++i)
      weights[i] -= config.lr * gradient[i];
    return;
  }
  if (config.type == "adagrad") {
    first.resize(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
      first[i] += gradient[i] * gradient[i];
      weights[i] -= config.lr * gradient[i] / (std::sqrt(first[i]) + config.eps);
    }
    return;
  }
  if (config.type == "rowwise_adagrad") {
    first.resize(1, 0.0);
    double meanSquare = 0;
    for (size_t i = 0; i < n; ++i)
      meanSquare += gradient[i] * gradient[i];
    first[0] += meanSquare / double(n);
    for (size_t i = 0; i < n; ++i)
      weights[i] -= config.lr * gradient[i] / (std::sqrt(first[0]) + config.eps);
    return;
  }
  // adam, with PyTorch's bias correction.
  first.resize(n, 0.0);
  second.resize(n, 0.0);
  double correction1 = 1 - std::pow(config.beta1, double(step));
  double correction2 = 1 - std::pow(config.beta2, double(step));
  for (size_t i = 0; i < n; ++i) {
    first[i] = config.beta1 * first[i] + (1 - config.beta1) * gradient[i];
    second[i] =
        config.beta2 * second[i] + (1 - config.beta2) * gradient[i] * gradient[i];
    weights[i] -= config.lr * (first[i] / correction1) /
                  (std::sqrt(second[i] / correction2) + config.eps);
  }
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
                std::vector<double> &g = grads.of(operand, dy.size());
                for (size_t i = 0; i < dy.size(); ++i)
                  g[i] += dy[i];
              }
              return success();
            })
            .Case([&](arith::MulFOp mul) {
              const HostTensor &lhs = values.find(mul.getLhs())->second;
              const HostTensor &rhs = values.find(mul.getRhs())->second;
              std::vector<double> &gl = grads.of(mul.getLhs(), dy.size());
              for (size_t i = 0; i < dy.size(); ++i)
                gl[i] += dy[i] * rhs.data[i];
              std::vector<double> &gr = grads.of(mul.getRhs(), dy.size());
              for (size_t i = 0; i < dy.size(); ++i)
                gr[i] += dy[i] * lhs.data[i];
              return success();
            })
            .Case([&](arith::ExtFOp ext) {
              std::vector<double> &g = grads.of(ext.getIn(), dy.size());
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
  for (auto &tableGrads : grads.rows) {
    TableData &table = tables.find(tableGrads.first())->second;
    auto &rowState = state.rowState[tableGrads.first()];
    for (auto &[row, gradient] : tableGrads.second) {
      std::vector<double> weights(table.getDim());
      for (int64_t c = 0; c < table.getDim(); ++c)
        weights[c] = table.get(row, c);
      std::vector<double> unused;
      applyOptimizer(config.embedding, state.step, weights, gradient, rowState[row],
             unused);
      table.setRow(row, weights);
    }
  }
  return loss;
}
