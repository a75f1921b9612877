//===- Descriptors.h - Reading MLIR memref descriptors ----------*- C++ -*-===//
//
// Typed, checked views of the unranked memref descriptors compiled programs
// pass through MLIR's C interface (compiled.h), for the runtime's kernels.
// A mismatch in rank or layout is a compiler bug, reported like any runtime
// error (braidrt_fail).
//
//===----------------------------------------------------------------------===//

#ifndef BRAIDRT_LIB_DESCRIPTORS_H
#define BRAIDRT_LIB_DESCRIPTORS_H

#include "braidrt/braidrt.h"
#include "braidrt/compiled.h"

#include <cstdint>

namespace braidrt {

/// A ranked view: the first element, the sizes and the strides (elements).
template <typename T> struct View {
  T *data = nullptr;
  int64_t rank = 0;
  const int64_t *sizes = nullptr, *strides = nullptr;

  int64_t size(int64_t d) const { return sizes[d]; }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d = 0; d < rank; ++d)
      n *= sizes[d];
    return n;
  }
  /// Whether the elements are dense and row-major.
  bool isRowMajor() const {
    int64_t inner = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (sizes[d] > 1 && strides[d] != inner)
        return false;
      inner *= sizes[d];
    }
    return true;
  }
};

/// The view of `memref`, which must have rank `rank` and be row-major; `op`
/// and `what` name it in the message otherwise.
template <typename T>
View<T> viewOf(const braidrt_unranked_memref *memref, int64_t rank,
               const char *op, const char *what) {
  if (!memref || memref->rank != rank)
    braidrt_fail("%s: %s has rank %lld, expected %lld", op, what,
                 static_cast<long long>(memref ? memref->rank : -1),
                 static_cast<long long>(rank));
  auto *words = static_cast<int64_t *>(memref->descriptor);
  View<T> view;
  view.data = reinterpret_cast<T *>(words[1]) + words[2];
  view.rank = rank;
  view.sizes = words + 3;
  view.strides = words + 3 + rank;
  if (!view.isRowMajor())
    braidrt_fail("%s: %s is not a row-major buffer", op, what);
  return view;
}

} // namespace braidrt

#endif // BRAIDRT_LIB_DESCRIPTORS_H
