//===- Prefetch.h - What the kernels' row prefetches share ------*- C++ -*-===//
//
// This file defines the cache geometry the generated kernels prefetch table
// rows by: the pooling kernel prefetches the rows of entries ahead, the
// embedding update the rows (and state) of segments ahead, one prefetch
// per cache line of a row.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOLOOPS_PREFETCH_H
#define BRAID_CONVERSION_BRAIDTOLOOPS_PREFETCH_H

#include <algorithm>
#include <cstdint>

namespace mlir::braid {

/// Cache line size in bytes (x86-64 and most AArch64 cores).
inline constexpr int64_t kCacheLineBytes = 64;

/// How many elements of `elementBits` bits one cache line holds (at least
/// one): a row's prefetches step by this many columns.
inline int64_t elementsPerCacheLine(int64_t elementBits) {
  return std::max<int64_t>(1, kCacheLineBytes /
                                  std::max<int64_t>(1, elementBits / 8));
}

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOLOOPS_PREFETCH_H
