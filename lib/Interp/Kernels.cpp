//===- Kernels.cpp - Compute kernels of the reference semantics -----------===//
//
// This file implements the reference kernels of braid.embedding_bag,
// braid.linear and braid.interaction, and TableData. They favour clarity
// over speed and accumulate in double before rounding to the element type.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

std::string mlir::braid::interp::formatIndex(double index) {
  if (std::abs(index) < static_cast<double>(kMaxExactInteger))
    return std::to_string(static_cast<int64_t>(index));
  return llvm::formatv("{0:F0}", index).str();
}

uint64_t mlir::braid::interp::mixBits(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double mlir::braid::interp::unitInterval(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

uint64_t mlir::braid::interp::hashName(StringRef text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

FailureOr<HostTensor> mlir::braid::interp::allocate(Operation *op,
                                                    ElementKind kind,
                                                    ArrayRef<int64_t> shape) {
  if (!isAllocatable(shape)) {
    InFlightDiagnostic diag = op->emitError()
                              << "a tensor of shape [";
    llvm::interleaveComma(shape, diag);
    return diag << "] is larger than the reference semantics holds ("
                << kMaxTensorElements << " elements)";
  }
  return HostTensor(kind, shape);
}

//===----------------------------------------------------------------------===//
// TableData
//===----------------------------------------------------------------------===//

TableData TableData::generated(StringRef name, int64_t rows, int64_t dim,
                               ElementKind kind, uint64_t seed) {
  TableData table;
  table.rows = rows;
  table.dim = dim;
  table.kind = kind;
  table.nameSeed = mixBits(seed ^ hashName(name));
  table.bound = 1.0 / std::sqrt(static_cast<double>(rows));
  return table;
}

TableData TableData::loaded(HostTensor tensor) {
  TableData table;
  table.rows = tensor.shape[0];
  table.dim = tensor.shape[1];
  table.kind = tensor.kind;
  table.tensor = std::make_shared<const HostTensor>(std::move(tensor));
  return table;
}

double TableData::get(int64_t row, int64_t col) const {
  if (!writtenRows.empty())
    if (auto it = writtenRows.find(row); it != writtenRows.end())
      return it->second[col];
  if (tensor)
    return tensor->data[row * dim + col];
  uint64_t bits = mixBits(nameSeed ^ mixBits(row * dim + col));
  return roundToKind(bound * (2 * unitInterval(bits) - 1), kind);
}

HostTensor TableData::materialize() const {
  if (tensor && writtenRows.empty())
    return *tensor;
  HostTensor result(kind, {rows, dim});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < dim; ++c)
      result.data[r * dim + c] = get(r, c);
  return result;
}

void TableData::setRow(int64_t row, ArrayRef<double> values) {
  std::vector<double> &stored = writtenRows[row];
  stored.assign(values.begin(), values.end());
  for (double &value : stored)
    value = roundToKind(value, kind);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

LogicalResult mlir::braid::interp::checkOffsets(Operation *op,
                                               const HostTensor &offsets,
                                               int64_t numIndices) {
  int64_t numBags = offsets.getNumElements() - 1;
  if (numBags < 0)
    return op->emitError() << "offsets must have at least one entry";
  if (offsets.data.front() != 0)
    return op->emitError() << "offsets must start at 0, got "
                           << static_cast<int64_t>(offsets.data.front());
  for (int64_t b = 0; b < numBags; ++b)
    if (offsets.data[b + 1] < offsets.data[b])
      return op->emitError() << "offsets must not decrease, but offsets["
                             << b + 1 << "] = "
                             << static_cast<int64_t>(offsets.data[b + 1])
                             << " < offsets[" << b << "] = "
                             << static_cast<int64_t>(offsets.data[b]);
  if (offsets.data.back() != numIndices)
    return op->emitError() << "the last offset must be the number of indices ("
                           << numIndices << "), got "
                           << static_cast<int64_t>(offsets.data.back());
  return success();
}

FailureOr<std::array<HostTensor, 2>>
mlir::braid::interp::runSliceBags(SliceBagsOp op, const HostTensor &indices,
                                  const HostTensor &offsets) {
  if (failed(checkOffsets(op, offsets, indices.getNumElements())))
    return failure();
  int64_t numBags = offsets.getNumElements() - 1;
  int64_t start = op.getStartAttr().getInt();
  // The range stops at the batch's end; start + count may overflow.
  int64_t first = std::min(start, numBags);
  int64_t last = first + std::min(op.getCountAttr().getInt(), numBags - first);
  auto base = static_cast<int64_t>(offsets.data[first]);
  auto end = static_cast<int64_t>(offsets.data[last]);
  std::array<HostTensor, 2> result = {
      HostTensor(indices.kind, {end - base}),
      HostTensor(offsets.kind, {last - first + 1})};
  std::copy(indices.data.begin() + base, indices.data.begin() + end,
            result[0].data.begin());
  for (int64_t b = first; b <= last; ++b)
    result[1].data[b - first] = offsets.data[b] - double(base);
  return result;
}

FailureOr<HostTensor> mlir::braid::interp::runEmbeddingBag(
    EmbeddingBagOp op, const TableData &table, const HostTensor &indices,
    const HostTensor &offsets, const HostTensor *weights) {
  int64_t numIndices = indices.getNumElements();
  int64_t numBags = offsets.getNumElements() - 1;
  if (failed(checkOffsets(op, offsets, numIndices)))
    return failure();
  if (weights && weights->getNumElements() != numIndices)
    return op.emitError() << "per_sample_weights have "
                          << weights->getNumElements()
                          << " entries but there are " << numIndices
                          << " indices";
  for (int64_t i = 0; i < numIndices; ++i) {
    double index = indices.data[i];
    if (index < 0 || index >= table.getNumRows())
      return op.emitError() << "index " << formatIndex(index)
                            << " at position " << i
                            << " is out of range for table '" << op.getTable()
                            << "' with " << table.getNumRows() << " rows";
  }
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t dim = table.getDim();
  if (!resultType.isDynamicDim(0) && resultType.getDimSize(0) != numBags)
    return op.emitError() << "offsets describe " << numBags
                          << " bags but the result type has "
                          << resultType.getDimSize(0) << " rows";
  FailureOr<HostTensor> allocated =
      allocate(op, table.getKind(), {numBags, dim});
  if (failed(allocated))
    return failure();
  HostTensor &result = *allocated;
  std::vector<double> accumulator(dim);
  for (int64_t b = 0; b < numBags; ++b) {
    int64_t begin = offsets.data[b], end = offsets.data[b + 1];
    if (begin == end)
      continue; // An empty bag gives zeros.
    bool isMax = op.getMode() == PoolingMode::max;
    std::fill(accumulator.begin(), accumulator.end(),
              isMax ? -INFINITY : 0.0);
    for (int64_t i = begin; i < end; ++i) {
      int64_t row = indices.data[i];
      double scale = weights ? weights->data[i] : 1.0;
      for (int64_t c = 0; c < dim; ++c) {
        double value = table.get(row, c);
        if (isMax)
          accumulator[c] = maxPropagatingNaN(accumulator[c], value);
        else
          accumulator[c] += scale * value;
      }
    }
    double divisor =
        op.getMode() == PoolingMode::mean ? static_cast<double>(end - begin)
                                          : 1.0;
    for (int64_t c = 0; c < dim; ++c)
      result.data[b * dim + c] = accumulator[c] / divisor;
  }
  result.round();
  return result;
}

FailureOr<HostTensor> mlir::braid::interp::runLinear(LinearOp op,
                                                     const HostTensor &input,
                                                     const HostTensor &weight,
                                                     const HostTensor &bias) {
  int64_t batch = input.shape[0], in = input.shape[1];
  int64_t out = weight.shape[0];
  if (weight.shape[1] != in || bias.shape[0] != out)
    return op.emitError() << "shapes do not fit at run time: input "
                          << input.describeType() << ", weight "
                          << weight.describeType() << ", bias "
                          << bias.describeType();
  FailureOr<HostTensor> allocated = allocate(op, input.kind, {batch, out});
  if (failed(allocated))
    return failure();
  HostTensor &result = *allocated;
  for (int64_t b = 0; b < batch; ++b) {
    const double *x = &input.data[b * in];
    for (int64_t o = 0; o < out; ++o) {
      const double *w = &weight.data[o * in];
      double sum = 0;
      for (int64_t i = 0; i < in; ++i)
        sum += x[i] * w[i];
      sum += bias.data[o];
      switch (op.getActivation()) {
      case Activation::none:
        break;
      case Activation::relu:
        sum = maxPropagatingNaN(sum, 0.0);
        break;
      case Activation::sigmoid:
        sum = 1.0 / (1.0 + std::exp(-sum));
        break;
      }
      result.data[b * out + o] = sum;
    }
  }
  result.round();
  return result;
}

FailureOr<HostTensor>
mlir::braid::interp::runInteraction(InteractionOp op, const HostTensor &dense,
                                    ArrayRef<HostTensor> embeddings) {
  int64_t batch = dense.shape[0], d = dense.shape[1];
  for (auto [index, embedding] : llvm::enumerate(embeddings)) {
    if (embedding.shape[0] != batch)
      return op.emitError() << "embedding " << index << " has "
                            << embedding.shape[0]
                            << " rows at run time but dense has " << batch;
    if (op.getKind() == InteractionKind::dot && embedding.shape[1] != d)
      return op.emitError() << "embedding " << index << " has dim "
                            << embedding.shape[1]
                            << " at run time but dense has " << d;
  }
  if (op.getKind() == InteractionKind::cat) {
    int64_t columns = d;
    for (const HostTensor &embedding : embeddings)
      columns += embedding.shape[1];
    if (!isAllocatable({batch, columns}))
      return allocate(op, dense.kind, {batch, columns}); // reports the error
    SmallVector<HostTensor> parts{dense};
    parts.append(embeddings.begin(), embeddings.end());
    return HostTensor::concat(parts, 1);
  }
  int64_t numFeatures = embeddings.size();
  int64_t columns = d + numFeatures * (numFeatures + 1) / 2;
  FailureOr<HostTensor> allocated = allocate(op, dense.kind, {batch, columns});
  if (failed(allocated))
    return failure();
  HostTensor &result = *allocated;
  for (int64_t b = 0; b < batch; ++b) {
    auto vector = [&](int64_t i) -> const double * {
      return i == 0 ? &dense.data[b * d] : &embeddings[i - 1].data[b * d];
    };
    double *out = &result.data[b * columns];
    std::copy(vector(0), vector(0) + d, out);
    int64_t column = d;
    // Pairs (i, j) with i > j, row-major: (1,0), (2,0), (2,1), (3,0), ...
    for (int64_t i = 1; i <= numFeatures; ++i)
      for (int64_t j = 0; j < i; ++j) {
        double dot = 0;
        for (int64_t k = 0; k < d; ++k)
          dot += vector(i)[k] * vector(j)[k];
        out[column++] = dot;
      }
  }
  result.round();
  return result;
}
