//===- TrainKernels.cpp - Reference kernels of the training step ----------===//
//
// This file implements the reference semantics of the ops
// braid-differentiate emits: the loss, the gradients of linear layers,
// interactions and shard assembly, the row gradients of lookups with their
// fused optimizer updates, and the dense optimizer update. Gradients are
// computed in doubles and rounded to f32 like every other result.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

FailureOr<std::array<HostTensor, 2>>
mlir::braid::interp::runBceWithLogits(BceWithLogitsOp op,
                                      const HostTensor &logits,
                                      const HostTensor &labels) {
  int64_t batch = logits.shape[0];
  // One logit per sample: a dynamic width passes the verifier.
  if (logits.shape.size() != 2 || logits.shape[1] != 1)
    return op.emitError() << "logits are " << logits.describeType()
                          << ", one column expected";
  if (labels.shape[0] != batch)
    return op.emitError() << "there are " << labels.shape[0]
                          << " labels for " << batch << " logits";
  double scale = op.getScale().convertToDouble();
  HostTensor loss(ElementKind::f32, {}), grad(ElementKind::f32, {batch, 1});
  double sum = 0;
  for (int64_t b = 0; b < batch; ++b) {
    double z = logits.data[b], y = labels.data[b];
    sum += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
    grad.data[b] = scale * (1 / (1 + std::exp(-z)) - y);
  }
  loss.data[0] = scale * sum;
  loss.round();
  grad.round();
  return std::array<HostTensor, 2>{std::move(loss), std::move(grad)};
}

void mlir::braid::interp::addLinearGradients(
    Activation activation, const HostTensor &x, const HostTensor &w,
    const HostTensor &y, ArrayRef<double> dy, MutableArrayRef<double> dx,
    MutableArrayRef<double> dw, MutableArrayRef<double> db) {
  int64_t batch = x.shape[0], in = x.shape[1], out = w.shape[0];
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t o = 0; o < out; ++o) {
      // The pre-activation gradient.
      double grad = dy[b * out + o], value = y.data[b * out + o];
      if (activation == Activation::relu)
        grad = value > 0 ? grad : 0;
      else if (activation == Activation::sigmoid)
        grad *= value * (1 - value);
      if (grad == 0)
        continue;
      db[o] += grad;
      for (int64_t k = 0; k < in; ++k) {
        dx[b * in + k] += grad * w.data[o * in + k];
        dw[o * in + k] += grad * x.data[b * in + k];
      }
    }
}

FailureOr<std::array<HostTensor, 3>> mlir::braid::interp::runLinearGrad(
    LinearGradOp op, const HostTensor &x, const HostTensor &w,
    const HostTensor &y, const HostTensor &dy) {
  int64_t batch = x.shape[0], in = x.shape[1], out = w.shape[0];
  if (w.shape[1] != in || y.shape != dy.shape || y.shape[0] != batch ||
      y.shape[1] != out)
    return op.emitError() << "operands are " << x.describeType() << ", "
                          << w.describeType() << ", " << y.describeType()
                          << " and " << dy.describeType() << " at run time";
  HostTensor dx(ElementKind::f32, {batch, in}), dw(ElementKind::f32, {out, in}),
      db(ElementKind::f32, {out});
  addLinearGradients(op.getActivation(), x, w, y, dy.data, dx.data, dw.data,
                     db.data);
  for (HostTensor *t : {&dx, &dw, &db})
    t->round();
  return std::array<HostTensor, 3>{std::move(dx), std::move(dw),
                                   std::move(db)};
}

void mlir::braid::interp::addInteractionGradients(
    InteractionKind kind, ArrayRef<const HostTensor *> features,
    ArrayRef<double> dy, int64_t width,
    ArrayRef<MutableArrayRef<double>> grads) {
  int64_t batch = features[0]->shape[0];
  if (kind == InteractionKind::cat) {
    int64_t column = 0;
    for (auto [feature, grad] : llvm::zip(features, grads)) {
      int64_t dim = feature->shape[1];
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t c = 0; c < dim; ++c)
          grad[b * dim + c] += dy[b * width + column + c];
      column += dim;
    }
    return;
  }
  // dot: the dense vector's own columns, then each pairwise product's
  // gradient to both of its vectors.
  int64_t dim = features[0]->shape[1];
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < dim; ++c)
      grads[0][b * dim + c] += dy[b * width + c];
    int64_t column = dim;
    for (size_t i = 1; i < features.size(); ++i)
      for (size_t k = 0; k < i; ++k, ++column) {
        double g = dy[b * width + column];
        for (int64_t c = 0; c < dim; ++c) {
          grads[i][b * dim + c] += g * features[k]->data[b * dim + c];
          grads[k][b * dim + c] += g * features[i]->data[b * dim + c];
        }
      }
  }
}

FailureOr<std::vector<HostTensor>> mlir::braid::interp::runInteractionGrad(
    InteractionGradOp op, const HostTensor &dy,
    ArrayRef<HostTensor> features) {
  int64_t batch = features[0].shape[0], width = dy.shape[1];
  int64_t total = 0, n = features.size();
  for (const HostTensor &feature : features)
    total += feature.shape[1];
  int64_t expected = op.getKind() == InteractionKind::cat
                         ? total
                         : features[0].shape[1] + n * (n - 1) / 2;
  if (width != expected)
    return op.emitError() << "result_grad has " << width
                          << " columns at run time but the interaction has "
                          << expected;
  std::vector<HostTensor> grads;
  SmallVector<const HostTensor *> featurePointers;
  for (const HostTensor &feature : features) {
    if (feature.shape[0] != batch || dy.shape[0] != batch)
      return op.emitError() << "features and result_grad have different "
                               "batch sizes at run time";
    grads.emplace_back(ElementKind::f32, feature.shape);
    featurePointers.push_back(&feature);
  }
  SmallVector<MutableArrayRef<double>> gradData;
  for (HostTensor &grad : grads)
    gradData.push_back(grad.data);
  addInteractionGradients(op.getKind(), featurePointers, dy.data, width,
                          gradData);
  for (HostTensor &grad : grads)
    grad.round();
  return grads;
}

FailureOr<HostTensor> mlir::braid::interp::runCombineShardsGrad(
    CombineShardsGradOp op, TableOp table, const HostTensor &dy,
    const HostTensor &offsets) {
  if (failed(checkOffsets(op, offsets,
                          offsets.data.empty() ? 0
                                               : int64_t(offsets.data.back()))))
    return failure();
  int64_t numBags = offsets.getNumElements() - 1;
  int64_t slots = op.getBagsPerRank(), dim = table.getDim();
  if (numBags > slots || dy.shape[0] != numBags || dy.shape[1] != dim)
    return op.emitError() << "result_grad has " << dy.shape[0]
                          << " rows for " << numBags
                          << " local bags and bags_per_rank " << slots;
  SmallVector<TableShard> parts = getReceivedParts(table);
  int64_t width = getWidestShardCols(table);
  FailureOr<HostTensor> result = allocate(
      op, ElementKind::f32, {int64_t(parts.size()) * slots, width});
  if (failed(result))
    return failure();
  for (int64_t b = 0; b < numBags; ++b) {
    int64_t size = offsets.data[b + 1] - offsets.data[b];
    if (size == 0 && op.getMode() != PoolingMode::sum)
      continue;
    double scale = op.getMode() == PoolingMode::mean && size > 0
                       ? 1.0 / static_cast<double>(size)
                       : 1.0;
    for (auto [p, part] : llvm::enumerate(parts))
      for (int64_t c = 0; c < part.cols; ++c)
        result->data[(p * slots + b) * width + c] =
            dy.data[b * dim + part.colOffset + c] * scale;
  }
  result->round();
  return result;
}

/// Adds a bag's gradient to the rows it read. `rowOf(j)` is the table row
/// of the bag's j-th value, `value(row, c)` the row's element in column c;
/// the gradient's `cols` columns start at `grad`.
template <typename RowOf, typename Value>
static void addBagGradient(PoolingMode mode, int64_t begin, int64_t end,
                           const double *grad, int64_t cols, RowOf rowOf,
                           Value value, RowGradients &gradients) {
  auto rowGradient = [&](int64_t row) -> std::vector<double> & {
    std::vector<double> &g = gradients[row];
    if (g.empty())
      g.assign(cols, 0.0);
    return g;
  };
  if (begin == end)
    return;
  if (mode == PoolingMode::max) {
    for (int64_t c = 0; c < cols; ++c) {
      int64_t best = rowOf(begin);
      for (int64_t j = begin + 1; j < end; ++j)
        if (value(rowOf(j), c) > value(best, c))
          best = rowOf(j);
      rowGradient(best)[c] += grad[c];
    }
    return;
  }
  double scale = mode == PoolingMode::mean ? 1.0 / double(end - begin) : 1.0;
  for (int64_t j = begin; j < end; ++j) {
    std::vector<double> &g = rowGradient(rowOf(j));
    for (int64_t c = 0; c < cols; ++c)
      g[c] += grad[c] * scale;
  }
}

FailureOr<RowGradients> mlir::braid::interp::runBagRowGradients(
    Operation *op, PoolingMode mode, const TableData &table,
    const HostTensor &indices, const HostTensor &offsets,
    const HostTensor &pooledGrad) {
  if (failed(checkOffsets(op, offsets, indices.getNumElements())))
    return failure();
  int64_t numBags = offsets.getNumElements() - 1, dim = table.getDim();
  if (pooledGrad.shape[0] != numBags || pooledGrad.shape[1] != dim)
    return op->emitError() << "pooled_grad is " << pooledGrad.describeType()
                           << " for " << numBags << " bags of dim " << dim;
  for (auto [j, index] : llvm::enumerate(indices.data))
    if (!(index >= 0 && index < table.getNumRows()))
      return op->emitError() << "index " << formatIndex(index)
                             << " at position " << j
                             << " is outside the table's "
                             << table.getNumRows() << " rows";
  RowGradients gradients;
  for (int64_t b = 0; b < numBags; ++b)
    addBagGradient(
        mode, int64_t(offsets.data[b]), int64_t(offsets.data[b + 1]),
        &pooledGrad.data[b * dim], dim,
        [&](int64_t j) { return int64_t(indices.data[j]); },
        [&](int64_t row, int64_t c) { return table.get(row, c); }, gradients);
  return gradients;
}

FailureOr<RowGradients> mlir::braid::interp::runShardRowGradients(
    ShardEmbeddingBagUpdateOp op, TableOp table, const TableData &data,
    int64_t rank, const HostTensor &values, const HostTensor &lengths,
    const HostTensor &pooledGrad) {
  TableShard local =
      getShardOnRank(table, rank).value_or(TableShard{rank, 0, 0, 0, 0});
  int64_t numBags = lengths.getNumElements(), width = pooledGrad.shape[1];
  if (pooledGrad.shape[0] != numBags || width < local.cols)
    return op.emitError() << "rank " << rank << ": pooled_grad is "
                          << pooledGrad.describeType() << " for " << numBags
                          << " bags of a shard of " << local.cols
                          << " columns";
  int64_t total = 0;
  for (double length : lengths.data) {
    if (length < 0)
      return op.emitError() << "rank " << rank << ": a bag length is negative";
    total += int64_t(length);
  }
  if (total != values.getNumElements())
    return op.emitError() << "rank " << rank << ": lengths add up to " << total
                          << " but there are " << values.getNumElements()
                          << " values";
  for (double value : values.data)
    if (!(value >= 0 && value < local.rows))
      return op.emitError() << "rank " << rank << ": value "
                            << formatIndex(value)
                            << " is outside its shard of table '"
                            << table.getSymName() << "' (" << local.rows
                            << " rows)";
  RowGradients gradients;
  int64_t begin = 0;
  for (int64_t b = 0; b < numBags; ++b) {
    int64_t end = begin + int64_t(lengths.data[b]);
    addBagGradient(
        op.getMode(), begin, end, &pooledGrad.data[b * width], local.cols,
        [&](int64_t j) { return local.rowOffset + int64_t(values.data[j]); },
        [&](int64_t row, int64_t c) {
          return data.get(row, local.colOffset + c);
        },
        gradients);
    begin = end;
  }
  return gradients;
}

void mlir::braid::interp::applyRowUpdates(
    TableData &table, int64_t colOffset, const RowGradients &gradients,
    const OptimizerConfig &config,
    llvm::DenseMap<int64_t, std::vector<double>> &state) {
  bool elementwise = config.type == "adagrad";
  for (const auto &[row, gradient] : gradients) {
    int64_t cols = gradient.size();
    std::vector<double> weights(table.getDim());
    for (int64_t c = 0; c < table.getDim(); ++c)
      weights[c] = table.get(row, c);
    std::vector<double> &rowState = state[row];
    if (elementwise && rowState.empty())
      rowState.assign(table.getDim(), 0.0);
    // The shard's columns of the row and, for adagrad, of its state.
    std::vector<double> first =
        elementwise ? std::vector<double>(rowState.begin() + colOffset,
                                          rowState.begin() + colOffset + cols)
                    : rowState;
    std::vector<double> unused;
    applyOptimizer(config, /*step=*/1,
                   MutableArrayRef<double>(weights).slice(colOffset, cols),
                   gradient, first, unused);
    if (elementwise)
      std::copy(first.begin(), first.end(), rowState.begin() + colOffset);
    else
      rowState = first;
    table.setRow(row, weights);
  }
}

/// One parameter's step: the new parameter, then its new state.
static std::vector<HostTensor> stepParameter(const OptimizerConfig &config,
                                             int64_t stepNumber,
                                             const HostTensor &param,
                                             const std::vector<double> &grad,
                                             ArrayRef<HostTensor> state) {
  std::vector<double> first, second;
  if (state.size() > 0)
    first = state[0].data;
  if (state.size() > 1)
    second = state[1].data;
  HostTensor weights = param;
  applyOptimizer(config, stepNumber, weights.data, grad, first, second);
  weights.round();
  std::vector<HostTensor> results = {std::move(weights)};
  for (auto [index, moment] : llvm::enumerate(state)) {
    HostTensor next = moment;
    next.data = index == 0 ? first : second;
    next.round();
    results.push_back(std::move(next));
  }
  return results;
}

/// Checks that each optimizer state tensor of `op` has its parameter's
/// shape (a dynamic state passes the verifier, and a smaller one was
/// stepped as zeros past its end).
static LogicalResult checkStateShapes(Operation *op, int64_t index,
                                      const HostTensor &param,
                                      ArrayRef<HostTensor> state) {
  for (const HostTensor &moment : state)
    if (moment.shape != param.shape)
      return op->emitError()
             << "parameter " << index << " is " << param.describeType()
             << " but its optimizer state is " << moment.describeType();
  return success();
}

/// The step number of `op`'s optimizer, checked: Adam's needs one from 1.
static FailureOr<int64_t> stepNumberOf(Operation *op,
                                       const OptimizerConfig &config,
                                       const HostTensor &step) {
  int64_t stepNumber = int64_t(step.data[0]);
  if (config.type == "adam" && stepNumber < 1)
    return op->emitError() << "adam needs a step number from 1, got "
                           << stepNumber;
  return stepNumber;
}

FailureOr<std::vector<HostTensor>> mlir::braid::interp::runDenseUpdate(
    DenseUpdateOp op, const HostTensor &param, const HostTensor &grad,
    const HostTensor &step, ArrayRef<HostTensor> state) {
  if (grad.shape != param.shape)
    return op.emitError() << "grad is " << grad.describeType()
                          << " for a parameter " << param.describeType();
  OptimizerConfig config = readOptimizerPart(op.getOptimizer());
  FailureOr<int64_t> stepNumber = stepNumberOf(op, config, step);
  if (failed(stepNumber) || failed(checkStateShapes(op, 0, param, state)))
    return failure();
  return stepParameter(config, *stepNumber, param, grad.data, state);
}

FailureOr<std::vector<HostTensor>> mlir::braid::interp::runFusedDenseUpdate(
    FusedDenseUpdateOp op, ArrayRef<HostTensor> params, const HostTensor &grads,
    const HostTensor &step, ArrayRef<HostTensor> state) {
  OptimizerConfig config = readOptimizerPart(op.getOptimizer());
  FailureOr<int64_t> stepNumber = stepNumberOf(op, config, step);
  if (failed(stepNumber))
    return failure();
  size_t perMember = state.size() / params.size();
  std::vector<HostTensor> newParams, newState;
  for (auto [index, param, offset] : llvm::enumerate(params, op.getOffsets())) {
    int64_t size = param.getNumElements();
    if (offset < 0 || offset + size > grads.getNumElements())
      return op.emitError()
             << "parameter " << index << "'s gradient at " << offset
             << " is outside grads " << grads.describeType();
    ArrayRef<HostTensor> memberState =
        state.slice(index * perMember, perMember);
    if (failed(checkStateShapes(op, index, param, memberState)))
      return failure();
    std::vector<double> grad(grads.data.begin() + offset,
                             grads.data.begin() + offset + size);
    std::vector<HostTensor> member =
        stepParameter(config, *stepNumber, param, grad, memberState);
    newParams.push_back(std::move(member.front()));
    for (HostTensor &next : llvm::drop_begin(member))
      newState.push_back(std::move(next));
  }
  llvm::append_range(newParams, std::move(newState));
  return newParams;
}
