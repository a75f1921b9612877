//===- HostTensor.cpp - Tensors of the reference semantics ----------------===//
//
// This file implements HostTensor: element kinds, rounding, slicing and
// concatenation along one dimension, and printing.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/HostTensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <functional>

using namespace mlir;
using namespace mlir::braid::interp;

std::optional<ElementKind> mlir::braid::interp::getElementKind(Type type) {
  if (type.isF16())
    return ElementKind::f16;
  if (type.isBF16())
    return ElementKind::bf16;
  if (type.isF32())
    return ElementKind::f32;
  if (type.isF64())
    return ElementKind::f64;
  if (type.isSignlessInteger(1))
    return ElementKind::i1;
  if (type.isSignlessInteger(32))
    return ElementKind::i32;
  if (type.isSignlessInteger(64))
    return ElementKind::i64;
  if (type.isIndex())
    return ElementKind::index;
  return std::nullopt;
}

llvm::StringRef mlir::braid::interp::stringifyElementKind(ElementKind kind) {
  switch (kind) {
  case ElementKind::f16:
    return "f16";
  case ElementKind::bf16:
    return "bf16";
  case ElementKind::f32:
    return "f32";
  case ElementKind::f64:
    return "f64";
  case ElementKind::i1:
    return "i1";
  case ElementKind::i32:
    return "i32";
  case ElementKind::i64:
    return "i64";
  case ElementKind::index:
    return "index";
  }
  return "?";
}

bool mlir::braid::interp::isFloatKind(ElementKind kind) {
  return kind == ElementKind::f16 || kind == ElementKind::bf16 ||
         kind == ElementKind::f32 || kind == ElementKind::f64;
}

double mlir::braid::interp::roundToKind(double value, ElementKind kind) {
  switch (kind) {
  case ElementKind::f64:
    return value;
  case ElementKind::f32:
    return static_cast<float>(value);
  case ElementKind::f16:
  case ElementKind::bf16: {
    llvm::APFloat apValue(value);
    bool losesInfo = false;
    apValue.convert(kind == ElementKind::f16 ? llvm::APFloat::IEEEhalf()
                                             : llvm::APFloat::BFloat(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    apValue.convert(llvm::APFloat::IEEEdouble(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    return apValue.convertToDouble();
  }
  case ElementKind::i1:
    return value != 0 ? 1 : 0;
  case ElementKind::i32:
  case ElementKind::i64:
  case ElementKind::index: {
    // Truncation toward zero; a value outside the type's range (or NaN)
    // stays as it is rather than passing through a cast that is undefined
    // there, so that a check can report it as given.
    double truncated = std::trunc(value);
    double limit = kind == ElementKind::i32 ? 2147483648.0 : 9223372036854775808.0;
    if (!(truncated >= -limit && truncated < limit))
      return value;
    return truncated;
  }
  }
  return value;
}

std::optional<int64_t>
mlir::braid::interp::getNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape) {
    if (size < 0)
      return std::nullopt;
    if (size != 0 && count > INT64_MAX / size)
      return std::nullopt;
    count *= size;
  }
  return count;
}

HostTensor::HostTensor(ElementKind kind, llvm::ArrayRef<int64_t> shape)
    : kind(kind), shape(shape.begin(), shape.end()) {
  data.assign(*interp::getNumElements(shape), 0.0);
}

void HostTensor::round() {
  if (kind == ElementKind::f64)
    return;
  for (double &value : data)
    value = roundToKind(value, kind);
}

std::string HostTensor::describeType() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "tensor<";
  for (int64_t size : shape)
    os << size << 'x';
  os << stringifyElementKind(kind) << '>';
  return text;
}

std::string HostTensor::formatValues() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Prints dimension `dim` starting at element `offset`; returns the stride.
  std::function<void(int64_t, int64_t)> print = [&](int64_t dim,
                                                    int64_t offset) {
    if (dim == getRank()) {
      double value = data[offset];
      if (value == 0)
        value = 0; // no "-0"
      os << llvm::format("%.6g", value);
      return;
    }
    int64_t stride = 1;
    for (int64_t d = dim + 1; d < getRank(); ++d)
      stride *= shape[d];
    os << '[';
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (i)
        os << ", ";
      print(dim + 1, offset + i * stride);
    }
    os << ']';
  };
  print(0, 0);
  return text;
}

/// Splits `shape` around `dim` into (outer, size along dim, inner).
static void splitAround(llvm::ArrayRef<int64_t> shape, int64_t dim,
                        int64_t &outer, int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
}

HostTensor HostTensor::slice(int64_t dim, int64_t offset, int64_t size) const {
  assert(dim >= 0 && dim < getRank() && offset >= 0 &&
         offset + size <= shape[dim] && "slice out of bounds");
  llvm::SmallVector<int64_t, 4> resultShape(shape);
  resultShape[dim] = size;
  HostTensor result(kind, resultShape);
  int64_t outer, inner;
  splitAround(shape, dim, outer, inner);
  // No copy of zero elements: an empty vector's data() may be null, which
  // memcpy must not be given.
  if (size * inner == 0)
    return result;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(result.data.data() + o * size * inner,
                data.data() + (o * shape[dim] + offset) * inner,
                sizeof(double) * size * inner);
  return result;
}

HostTensor HostTensor::concat(llvm::ArrayRef<HostTensor> parts, int64_t dim) {
  assert(!parts.empty() && "nothing to concatenate");
  llvm::SmallVector<int64_t, 4> resultShape(parts.front().shape);
  resultShape[dim] = 0;
  for (const HostTensor &part : parts)
    resultShape[dim] += part.shape[dim];
  HostTensor result(parts.front().kind, resultShape);
  int64_t outer, inner;
  splitAround(resultShape, dim, outer, inner);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t position = 0;
    for (const HostTensor &part : parts) {
      int64_t chunk = part.shape[dim] * inner;
      if (chunk > 0)
        std::memcpy(result.data.data() + o * resultShape[dim] * inner +
                        position,
                    part.data.data() + o * chunk, sizeof(double) * chunk);
      position += chunk;
    }
  }
  return result;
}
