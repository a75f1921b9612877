//===- Memory.cpp - Managed memory, cached between a program's calls ------===//
//
// This file implements the CUDA runtime's buffers: managed memory (host and
// device see the same address) kept in a cache when freed and handed out
// again to a later allocation of a close size, as PyTorch's and JAX's
// allocators do on the GPU. A compiled program allocates its intermediate
// buffers afresh on every call; without the cache each call pays a
// cuMemAllocManaged and a cuMemFree (which waits for the whole device) per
// buffer, and the device takes a page fault on the first touch of every page
// of every new buffer. A reused block's pages are already where the kernels
// last touched them.
//
// A block is cached only while no started collective is outstanding:
// compute kernels and blocking collectives are complete when their host call
// returns, so a freed block is then idle; a started collective (an event the
// program has not waited for yet) may still read or write it, and the block
// is then released to the driver as before, whose cuMemFree waits for it.
// $BRAIDRT_CUDA_CACHING=0 turns the cache off.
//
//===----------------------------------------------------------------------===//

#include "CudaCheck.h"

#include "braidrt/braidrt.h"
#include "braidrt/cuda.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

using namespace braidrt::cuda;

namespace {
struct Cache {
  std::mutex mutex;
  /// Free blocks by their size.
  std::multimap<size_t, void *> free;
  /// Every block the driver gave: its size, and whether it is in `free`.
  struct Block {
    size_t size;
    bool cached;
  };
  std::unordered_map<void *, Block> blocks;
  int64_t reused = 0;
};
} // namespace

static Cache &cache() {
  static Cache instance;
  return instance;
}

static std::atomic<int64_t> &outstandingCollectives() {
  static std::atomic<int64_t> count{0};
  return count;
}

void braidrt::cuda::collectiveStarted() { ++outstandingCollectives(); }
void braidrt::cuda::collectiveWaited() { --outstandingCollectives(); }

static bool cachingEnabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("BRAIDRT_CUDA_CACHING");
    return !value || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

/// The size a block of `bytes` is made with: 512-byte steps up to 1 MiB,
/// 2 MiB steps above (the driver's large-page size), so that buffers of a
/// shape that varies a little between calls still share blocks.
static size_t blockSize(size_t bytes) {
  constexpr size_t small = 512, large = size_t(2) << 20;
  if (bytes <= (size_t(1) << 20))
    return (std::max<size_t>(bytes, 1) + small - 1) / small * small;
  return (bytes + large - 1) / large * large;
}

/// Gives every cached block back to the driver. The caller holds the lock.
static void releaseCached(Cache &c, const Driver &table) {
  for (auto &[size, pointer] : c.free) {
    c.blocks.erase(pointer);
    BRAIDRT_CU(table.memFree(reinterpret_cast<CUdeviceptr>(pointer)));
  }
  c.free.clear();
}

void *braidrt_cuda_alloc(size_t bytes) {
  const Driver &table = driver();
  Cache &c = cache();
  // No device holds half the address space; rounding such a size up
  // would wrap around.
  if (bytes > std::numeric_limits<size_t>::max() / 2)
    braidrt_fail("cannot allocate %zu bytes of managed memory", bytes);
  size_t size = blockSize(bytes);
  std::lock_guard<std::mutex> lock(c.mutex);
  // The smallest free block that fits, if it wastes at most half of itself.
  auto found = c.free.lower_bound(size);
  if (found != c.free.end() && found->first <= 2 * size) {
    void *pointer = found->second;
    c.free.erase(found);
    c.blocks[pointer].cached = false;
    ++c.reused;
    return pointer;
  }
  CUdeviceptr pointer = 0;
  CUresult result =
      table.memAllocManaged(&pointer, size, CU_MEM_ATTACH_GLOBAL);
  if (result == CUDA_ERROR_OUT_OF_MEMORY && !c.free.empty()) {
    releaseCached(c, table);
    result = table.memAllocManaged(&pointer, size, CU_MEM_ATTACH_GLOBAL);
  }
  BRAIDRT_CU(result);
  c.blocks[reinterpret_cast<void *>(pointer)] = {size, false};
  return reinterpret_cast<void *>(pointer);
}

void braidrt_cuda_free(void *pointer) {
  if (!pointer)
    return;
  const Driver &table = driver();
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto known = c.blocks.find(pointer);
  if (known == c.blocks.end() || known->second.cached)
    braidrt_fail("braidrt_cuda_free of %p, which braidrt_cuda_alloc did not "
                 "give or which is already free",
                 pointer);
  if (cachingEnabled() && outstandingCollectives().load() == 0) {
    known->second.cached = true;
    c.free.emplace(known->second.size, pointer);
    return;
  }
  c.blocks.erase(known);
  BRAIDRT_CU(table.memFree(reinterpret_cast<CUdeviceptr>(pointer)));
}

int64_t braidrt_cuda_reused_blocks(void) {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.reused;
}
