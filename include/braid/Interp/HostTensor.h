//===- HostTensor.h - Tensors of the reference semantics --------*- C++ -*-===//
//
// This file declares HostTensor, the value the reference semantics computes
// with: a shape, an element kind and the elements held as doubles. Doubles
// hold every f16/bf16/f32 value and every integer below 2^53 exactly; after
// each operation, floating-point results are rounded to their element kind.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INTERP_HOSTTENSOR_H
#define BRAID_INTERP_HOSTTENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class Type;
} // namespace mlir

namespace mlir::braid::interp {

/// The element kinds the reference semantics knows.
enum class ElementKind { f16, bf16, f32, f64, i1, i32, i64, index };

/// The kind of an MLIR element type, or std::nullopt if unsupported.
std::optional<ElementKind> getElementKind(Type type);
llvm::StringRef stringifyElementKind(ElementKind kind);
bool isFloatKind(ElementKind kind);

/// Rounds `value` to the nearest value of `kind` (ties to even).
double roundToKind(double value, ElementKind kind);

/// A dense row-major tensor on the host.
struct HostTensor {
  ElementKind kind = ElementKind::f32;
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<double> data;

  HostTensor() = default;
  HostTensor(ElementKind kind, llvm::ArrayRef<int64_t> shape);

  int64_t getRank() const { return shape.size(); }
  int64_t getNumElements() const { return data.size(); }
  /// Rounds every element to `kind`.
  void round();
  /// "tensor<2x3xf32>".
  std::string describeType() const;
  /// Elements as nested lists: `[[1, 2], [3, 4]]`, %.6g per element.
  std::string formatValues() const;

  /// Elements `[offset, offset + size)` along `dim`.
  HostTensor slice(int64_t dim, int64_t offset, int64_t size) const;
  /// Concatenates `parts` along `dim`; all other dimensions must match.
  static HostTensor concat(llvm::ArrayRef<HostTensor> parts, int64_t dim);
};

/// Product of `shape`, or std::nullopt on overflow or a negative size.
std::optional<int64_t> getNumElements(llvm::ArrayRef<int64_t> shape);

/// The largest tensor the reference semantics holds: 2^28 elements (2 GiB of
/// doubles). Larger shapes are errors, never an allocation failure.
constexpr int64_t kMaxTensorElements = int64_t(1) << 28;

/// The largest integer magnitude a HostTensor holds exactly (2^53); integer
/// inputs beyond it are refused rather than rounded.
constexpr int64_t kMaxExactInteger = int64_t(1) << 53;

/// True when a tensor of `shape` can be held.
inline bool isAllocatable(llvm::ArrayRef<int64_t> shape) {
  std::optional<int64_t> count = getNumElements(shape);
  return count && *count <= kMaxTensorElements;
}

} // namespace mlir::braid::interp

#endif // BRAID_INTERP_HOSTTENSOR_H
