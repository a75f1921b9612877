//===- Training.cpp - The training kernels compiled programs call ---------===//
//
// This file implements the training entry points of compiled.h: the loss,
// the linear layer's backward (GEMMs through BLAS), the embedding backward fused with the table's optimizer
// (FBGEMM's way: no gradient of the whole table exists; the gradient of
// each looked-up row is summed over the batch and the row updated in place,
// or for SGD on f32 rows each entry's share applied directly), the grouping
// of a lookup's entries by row that the generated update kernel reads
// instead where a program uses it (segment_rows), and the whole-table
// gradient of a replicated table with its update. (The dense optimizer step
// is a generated kernel, BraidToLoops/DenseUpdateKernel.cpp.) The
// optimizers' arithmetic is in doubles, with the formulas the reference
// semantics uses (braidrt/OptimizerMath.h), rounded to the buffers' types.
//
//===----------------------------------------------------------------------===//

#include "Descriptors.h"
#include "LinearGrad.h"

#include "braidrt/OptimizerMath.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

using braidrt::View;
using braidrt::viewOf;
using braidrt::LinearGradViews;
using braidrt::linearGradViewsOf;
namespace optim = braidrt::optim;

namespace {

/// bf16 as its bits; conversions round to nearest even.
struct BF16 {
  uint16_t bits;
};

template <typename T> double load(T value) { return double(value); }
template <> double load(BF16 value) {
  uint32_t word = uint32_t(value.bits) << 16;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}
/// The bf16 bits nearest `f` (ties to even; a NaN stays a quiet NaN).
uint16_t bf16BitsOf(float f) {
  uint32_t word;
  std::memcpy(&word, &f, 4);
  if (std::isnan(f))
    return uint16_t((word >> 16) | 0x40);
  word += 0x7fff + ((word >> 16) & 1);
  return uint16_t(word >> 16);
}

template <typename T> T store(double value) { return T(value); }
template <> BF16 store(double value) { return BF16{bf16BitsOf(float(value))}; }

/// The pooling modes, numbered as braid::PoolingMode.
enum class Mode : int32_t { sum = 0, mean = 1, max = 2 };

/// A table's optimizer (Adam, which tables do not take, is refused where
/// the state is read).
optim::Config configOf(int32_t kind, double lr, double eps) {
  if (kind < 0 || kind > int32_t(optim::Kind::adam))
    braidrt_fail("unknown optimizer %d", int(kind));
  return {optim::Kind(kind), lr, eps};
}

/// The gradients of the rows a batch read, in order of first use: row ids
/// and, per row, `cols` sums of type `Acc`: f32 for f32 tables (a row's few
/// contributions), doubles for 16-bit ones, whose rounding of the updated
/// row would otherwise turn the sums' last bits into a different value.
/// The buffers live as long as the process and keep their capacity, so
/// that a training step's calls allocate (and fault in) nothing after the
/// first: `slotOf` maps a row to its slot (-1 for none) and is reset for
/// the rows used when the gradients are released.
template <typename Acc> struct RowGradients {
  int64_t cols = 0;
  std::vector<int64_t> &rows;
  std::vector<Acc> &sums;
  std::vector<int32_t> &slotOf;

  RowGradients(int64_t tableRows, int64_t cols, int64_t entries)
      : cols(cols), rows(buffers().rows), sums(buffers().sums),
        slotOf(buffers().slotOf) {
    rows.clear();
    sums.clear();
    sums.reserve(size_t(std::min(entries, tableRows) * cols));
    if (int64_t(slotOf.size()) < tableRows)
      slotOf.resize(size_t(tableRows), -1);
  }
  ~RowGradients() {
    for (int64_t row : rows)
      slotOf[size_t(row)] = -1;
  }
  Acc *row(int64_t id) {
    int32_t &slot = slotOf[size_t(id)];
    if (slot < 0) {
      slot = int32_t(rows.size());
      rows.push_back(id);
      sums.resize(sums.size() + size_t(cols), Acc(0));
    }
    return &sums[size_t(slot) * size_t(cols)];
  }

private:
  struct Buffers {
    std::vector<int64_t> rows;
    std::vector<int32_t> slotOf;
    std::vector<Acc> sums;
  };
  // One set per process: a program calls the training kernels from its
  // main thread, between its parallel loops.
  static Buffers &buffers() {
    static Buffers storage;
    return storage;
  }
};

/// Prefetches every cache line of `count` elements from `first` for a
/// write (an update reads and writes its rows): a row of a table far larger
/// than the caches is a random access, and a 64-float row spans four lines,
/// of which the hardware's adjacent-line prefetch brings at most one more.
template <typename T>
inline void prefetchRowForUpdate(const T *first, int64_t count) {
  constexpr int64_t perLine = std::max<int64_t>(1, 64 / int64_t(sizeof(T)));
  for (int64_t c = 0; c < count; c += perLine)
    __builtin_prefetch(first + c, /*rw=*/1);
}

/// The row gradients' accumulator for a table of `T`.
template <typename T>
using RowGradientsOf =
    RowGradients<std::conditional_t<std::is_same_v<T, float>, float, double>>;

/// The bags of a lookup: entry j of bag b is in [begin(b), end(b)).
struct Bags {
  const int64_t *bounds = nullptr; ///< offsets (bags + 1) or lengths (bags)
  bool lengths = false;
  int64_t count = 0;
  std::vector<int64_t> starts; ///< from lengths: their running sums

  Bags(const View<int64_t> &view, bool areLengths, int64_t entries,
       const char *op) {
    lengths = areLengths;
    count = areLengths ? view.size(0) : view.size(0) - 1;
    if (count < 0)
      braidrt_fail("%s: empty offsets", op);
    starts.resize(size_t(count) + 1, 0);
    for (int64_t b = 0; b < count; ++b) {
      int64_t begin = areLengths ? starts[b] : view.data[b];
      int64_t end = areLengths ? begin + view.data[b] : view.data[b + 1];
      if (begin < 0 || end < begin || end > entries)
        braidrt_fail("%s: bag %lld spans entries [%lld, %lld) of %lld", op,
                     (long long)b, (long long)begin, (long long)end,
                     (long long)entries);
      starts[b] = begin;
      starts[b + 1] = end;
    }
  }
  int64_t begin(int64_t b) const { return starts[b]; }
  int64_t end(int64_t b) const { return starts[b + 1]; }
};

/// Sums into `gradients` what each bag sends the rows it read: its gradient
/// (sum), that over its size (mean), or per column to the first row in bag
/// order holding the maximum (max). `grad` has `width` >= cols columns.
template <typename T>
void addBagGradients(const View<T> &table, const int64_t *rowIds,
                     const Bags &bags, const View<float> &grad, Mode mode,
                     RowGradientsOf<T> &gradients, const char *op) {
  int64_t cols = table.size(1), rows = table.size(0);
  int64_t width = grad.size(1);
  if (grad.size(0) != bags.count || width < cols)
    braidrt_fail("%s: the gradient is [%lld, %lld] for %lld bags of %lld "
                 "columns",
                 op, (long long)grad.size(0), (long long)width,
                 (long long)bags.count, (long long)cols);
  for (int64_t b = 0; b < bags.count; ++b) {
    int64_t begin = bags.begin(b), end = bags.end(b);
    if (begin == end)
      continue;
    for (int64_t j = begin; j < end; ++j)
      if (rowIds[j] < 0 || rowIds[j] >= rows)
        braidrt_fail("%s: row %lld is outside the table's %lld rows", op,
                     (long long)rowIds[j], (long long)rows);
    const float *g = grad.data + b * width;
    if (mode == Mode::max) {
      for (int64_t c = 0; c < cols; ++c) {
        int64_t best = rowIds[begin];
        for (int64_t j = begin + 1; j < end; ++j)
          if (load(table.data[rowIds[j] * cols + c]) >
              load(table.data[best * cols + c]))
            best = rowIds[j];
        gradients.row(best)[c] += g[c];
      }
      continue;
    }
    if (mode == Mode::mean) {
      using Acc = std::remove_reference_t<decltype(gradients.sums[0])>;
      Acc scale = Acc(1.0 / double(end - begin));
      for (int64_t j = begin; j < end; ++j) {
        auto *sum = gradients.row(rowIds[j]);
        for (int64_t c = 0; c < cols; ++c)
          sum[c] += Acc(g[c]) * scale;
      }
      continue;
    }
    for (int64_t j = begin; j < end; ++j) {
      if (j + 16 < end)
        __builtin_prefetch(&gradients.slotOf[size_t(rowIds[j + 16])]);
      auto *sum = gradients.row(rowIds[j]);
      for (int64_t c = 0; c < cols; ++c)
        sum[c] += g[c];
    }
  }
}

/// The optimizer's state of a table: nothing (sgd), one value per row
/// (rowwise_adagrad) or per element (adagrad), f32.
float *tableState(const braidrt_unranked_memref *state,
                  const optim::Config &config, int64_t rows, int64_t cols,
                  const char *op) {
  if (config.kind == optim::Kind::sgd)
    return nullptr;
  if (config.kind == optim::Kind::adam)
    braidrt_fail("%s: adam is not an embedding optimizer", op);
  bool rowwise = config.kind == optim::Kind::rowwise_adagrad;
  View<float> view = viewOf<float>(state, rowwise ? 1 : 2, op, "the state");
  if (view.size(0) != rows || (!rowwise && view.size(1) != cols))
    braidrt_fail("%s: the optimizer state does not match the table's "
                 "[%lld, %lld]",
                 op, (long long)rows, (long long)cols);
  return view.data;
}

/// How many bags (or rows) an embedding update handles between two calls
/// of braidrt_progress: MPI moves a started exchange only inside its calls.
constexpr int64_t kProgressEvery = 256;

/// Applies the optimizer to each row of `gradients`, in place: on an f32
/// row directly, on a 16-bit one through doubles rounded back once.
template <typename T>
void updateRows(View<T> &table, float *state, const optim::Config &config,
                const RowGradientsOf<T> &gradients) {
  int64_t cols = table.size(1);
  bool rowwise = config.kind == optim::Kind::rowwise_adagrad;
  std::vector<double> weights(static_cast<size_t>(cols));
  constexpr size_t ahead = 8;
  for (size_t slot = 0; slot < gradients.rows.size(); ++slot) {
    // Exchanges started before the update move along while it runs.
    if (slot % size_t(kProgressEvery) == 0)
      braidrt_progress();
    // The rows are random reads from a table far larger than the caches:
    // start loading a later row (and its state) while this one updates.
    if (slot + ahead < gradients.rows.size()) {
      int64_t later = gradients.rows[slot + ahead];
      prefetchRowForUpdate(table.data + later * cols, cols);
      if (state)
        prefetchRowForUpdate(state + (rowwise ? later : later * cols),
                             rowwise ? 1 : cols);
    }
    int64_t row = gradients.rows[slot];
    T *w = table.data + row * cols;
    const auto *g = &gradients.sums[slot * size_t(cols)];
    float *first = state ? state + (rowwise ? row : row * cols) : nullptr;
    if constexpr (std::is_same_v<T, float>) {
      optim::update(config, /*step=*/1, w, g, size_t(cols), first,
                    static_cast<float *>(nullptr));
    } else {
      for (int64_t c = 0; c < cols; ++c)
        weights[c] = load(w[c]);
      optim::update(config, /*step=*/1, weights.data(), g, size_t(cols),
                    first, static_cast<float *>(nullptr));
      for (int64_t c = 0; c < cols; ++c)
        w[c] = store<T>(weights[c]);
    }
  }
}

/// A function built for the widest vector unit the machine has, chosen when
/// the library loads (GCC's function multiversioning on x86-64; elsewhere
/// the baseline build alone).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BRAIDRT_WIDEST_VECTORS target_clones("avx512f", "avx2", "default")
#else
#define BRAIDRT_WIDEST_VECTORS
#endif

/// SGD on an f32 table, one entry at a time: row -= lr * scale * (its
/// bag's gradient), prefetching the rows of later entries. Built for the
/// widest vector unit the machine has (chosen when the library loads), as
/// the compiled program's own kernels are (--target-cpu native): the
/// baseline build's 4-wide loop made the update 1.3x slower on an AVX-512
/// host. A multiply and a subtraction, each rounded: the library is built
/// with -ffp-contract=off, so these units' fused multiply-add is not used.
__attribute__((BRAIDRT_WIDEST_VECTORS))
void applySgdPerEntry(View<float> &table, const int64_t *rowIds,
                      const Bags &bags, const View<float> &grad, Mode mode,
                      double lr, const char *op) {
  int64_t cols = table.size(1), rows = table.size(0), width = grad.size(1);
  if (grad.size(0) != bags.count || width < cols)
    braidrt_fail("%s: the gradient is [%lld, %lld] for %lld bags of %lld "
                 "columns",
                 op, (long long)grad.size(0), (long long)width,
                 (long long)bags.count, (long long)cols);
  int64_t entries = bags.count ? bags.end(bags.count - 1) : 0;
  for (int64_t j = 0; j < entries; ++j)
    if (rowIds[j] < 0 || rowIds[j] >= rows)
      braidrt_fail("%s: row %lld is outside the table's %lld rows", op,
                   (long long)rowIds[j], (long long)rows);
  constexpr int64_t ahead = 16;
  for (int64_t b = 0; b < bags.count; ++b) {
    // Exchanges started before the update move along while it runs.
    if (b % kProgressEvery == 0)
      braidrt_progress();
    int64_t begin = bags.begin(b), end = bags.end(b);
    if (begin == end)
      continue;
    double scale = mode == Mode::mean ? 1.0 / double(end - begin) : 1.0;
    float step = float(lr * scale);
    const float *g = grad.data + b * width;
    for (int64_t j = begin; j < end; ++j) {
      if (j + ahead < entries)
        prefetchRowForUpdate(table.data + rowIds[j + ahead] * cols, cols);
      float *w = table.data + rowIds[j] * cols;
      for (int64_t c = 0; c < cols; ++c)
        w[c] -= step * g[c];
    }
  }
}

/// addBagGradients and updateRows on an f32 table (Adagrad, and SGD with
/// max pooling), each built, with what it calls inlined, for the widest
/// vector unit the machine has, as applySgdPerEntry is.
__attribute__((BRAIDRT_WIDEST_VECTORS, flatten))
void addBagGradientsF32(const View<float> &table, const int64_t *rowIds,
                        const Bags &bags, const View<float> &grad, Mode mode,
                        RowGradientsOf<float> &gradients, const char *op) {
  addBagGradients(table, rowIds, bags, grad, mode, gradients, op);
}

__attribute__((BRAIDRT_WIDEST_VECTORS, flatten))
void updateRowsF32(View<float> &table, float *state,
                   const optim::Config &config,
                   const RowGradientsOf<float> &gradients) {
  updateRows(table, state, config, gradients);
}

template <typename T>
void bagUpdate(braidrt_unranked_memref *tableRef,
               braidrt_unranked_memref *stateRef,
               braidrt_unranked_memref *rowsRef,
               braidrt_unranked_memref *boundsRef, int32_t boundsAreLengths,
               braidrt_unranked_memref *gradRef, int32_t mode,
               int32_t optimizer, double lr, double eps) {
  const char *op = boundsAreLengths ? "shard_embedding_bag_update"
                                    : "embedding_bag_update";
  View<T> table = viewOf<T>(tableRef, 2, op, "the table");
  View<int64_t> rowIds = viewOf<int64_t>(rowsRef, 1, op, "the rows");
  View<int64_t> bounds = viewOf<int64_t>(boundsRef, 1, op, "the bags");
  View<float> grad = viewOf<float>(gradRef, 2, op, "the gradient");
  optim::Config config = configOf(optimizer, lr, eps);
  float *state = tableState(stateRef, config, table.size(0),
                            table.size(1), op);
  Bags bags(bounds, boundsAreLengths, rowIds.size(0), op);
  if constexpr (std::is_same_v<T, float>) {
    // SGD is linear in the gradient: each entry's share of its bag's
    // gradient updates its row directly, with no per-row sums (16-bit rows
    // would round once per entry; max pooling reads the rows it updates).
    if (config.kind == optim::Kind::sgd && Mode(mode) != Mode::max) {
      applySgdPerEntry(table, rowIds.data, bags, grad, Mode(mode), lr, op);
      return;
    }
  }
  RowGradientsOf<T> gradients(table.size(0), table.size(1), rowIds.size(0));
  // Every gradient is taken from the rows as the forward pass read them,
  // before any is updated (max pooling compares row values).
  if constexpr (std::is_same_v<T, float>) {
    addBagGradientsF32(table, rowIds.data, bags, grad, Mode(mode), gradients,
                       op);
    updateRowsF32(table, state, config, gradients);
  } else {
    addBagGradients(table, rowIds.data, bags, grad, Mode(mode), gradients, op);
    updateRows(table, state, config, gradients);
  }
}

/// Scratch of segmentRows, kept between calls like RowGradients' buffers.
struct SegmentBuffers {
  std::vector<uint64_t> keys, keysOut;
  std::vector<int64_t> bags, bagsOut;
  std::vector<int64_t> counts;
  static SegmentBuffers &get() {
    static SegmentBuffers storage;
    return storage;
  }
};

/// The entries of a lookup's bags grouped by the row they read, for the
/// update kernel convert-braid-to-cpu generates: a
/// stable least-significant-digit radix sort of (row, bag) pairs in entry
/// order, 11 bits a pass over the bits the table's row count needs. Each
/// row's entries stay in entry order, so the kernel sums a row's gradient
/// in the order the reference semantics does, whatever the target.
void segmentRows(braidrt_unranked_memref *rowsRef,
                 braidrt_unranked_memref *boundsRef, int32_t boundsAreLengths,
                 int64_t tableRows, braidrt_unranked_memref *sortedBagsRef,
                 braidrt_unranked_memref *segmentRowsRef,
                 braidrt_unranked_memref *segmentStartsRef,
                 braidrt_unranked_memref *countRef) {
  const char *op = boundsAreLengths ? "shard_embedding_bag_update"
                                    : "embedding_bag_update";
  View<int64_t> rowIds = viewOf<int64_t>(rowsRef, 1, op, "the rows");
  View<int64_t> bounds = viewOf<int64_t>(boundsRef, 1, op, "the bags");
  View<int64_t> sortedBags =
      viewOf<int64_t>(sortedBagsRef, 1, op, "the sorted bags");
  View<int64_t> segmentRowIds =
      viewOf<int64_t>(segmentRowsRef, 1, op, "the segments' rows");
  View<int64_t> segmentStarts =
      viewOf<int64_t>(segmentStartsRef, 1, op, "the segments' starts");
  View<int64_t> count = viewOf<int64_t>(countRef, 1, op, "the segment count");
  int64_t entries = rowIds.size(0);
  if (sortedBags.size(0) != entries || segmentRowIds.size(0) != entries ||
      segmentStarts.size(0) != entries + 1 || count.size(0) != 1)
    braidrt_fail("%s: segment buffers do not fit %lld entries", op,
                 (long long)entries);
  Bags bags(bounds, boundsAreLengths, entries, op);
  SegmentBuffers &scratch = SegmentBuffers::get();
  std::vector<uint64_t> &keys = scratch.keys;
  std::vector<int64_t> &bagOf = scratch.bags;
  keys.clear();
  bagOf.clear();
  for (int64_t b = 0; b < bags.count; ++b)
    for (int64_t j = bags.begin(b); j < bags.end(b); ++j) {
      int64_t row = rowIds.data[j];
      if (row < 0 || row >= tableRows)
        braidrt_fail("%s: row %lld is outside the table's %lld rows", op,
                     (long long)row, (long long)tableRows);
      keys.push_back(uint64_t(row));
      bagOf.push_back(b);
    }
  size_t n = keys.size();
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t(1) << kDigitBits;
  int keyBits = 0;
  while (keyBits < 63 && (uint64_t(1) << keyBits) < uint64_t(tableRows))
    ++keyBits;
  scratch.keysOut.resize(n);
  scratch.bagsOut.resize(n);
  scratch.counts.resize(kBuckets);
  for (int shift = 0; shift < keyBits; shift += kDigitBits) {
    std::fill(scratch.counts.begin(), scratch.counts.end(), 0);
    for (uint64_t key : keys)
      ++scratch.counts[(key >> shift) & (kBuckets - 1)];
    int64_t running = 0;
    for (int64_t &bucket : scratch.counts) {
      int64_t here = bucket;
      bucket = running;
      running += here;
    }
    for (size_t i = 0; i < n; ++i) {
      size_t at = size_t(scratch.counts[(keys[i] >> shift) & (kBuckets - 1)]++);
      scratch.keysOut[at] = keys[i];
      scratch.bagsOut[at] = bagOf[i];
    }
    keys.swap(scratch.keysOut);
    bagOf.swap(scratch.bagsOut);
  }
  int64_t segments = 0;
  for (size_t i = 0; i < n; ++i) {
    sortedBags.data[i] = bagOf[i];
    if (i == 0 || keys[i] != keys[i - 1]) {
      segmentRowIds.data[segments] = int64_t(keys[i]);
      segmentStarts.data[segments++] = int64_t(i);
    }
  }
  segmentStarts.data[segments] = int64_t(n);
  count.data[0] = segments;
}

template <typename T>
void bagGrad(braidrt_unranked_memref *tableRef,
             braidrt_unranked_memref *indicesRef,
             braidrt_unranked_memref *offsetsRef,
             braidrt_unranked_memref *gradRef, braidrt_unranked_memref *outRef,
             int32_t mode) {
  const char *op = "embedding_bag_grad";
  View<T> table = viewOf<T>(tableRef, 2, op, "the table");
  View<int64_t> indices = viewOf<int64_t>(indicesRef, 1, op, "the indices");
  View<int64_t> offsets = viewOf<int64_t>(offsetsRef, 1, op, "the offsets");
  View<float> grad = viewOf<float>(gradRef, 2, op, "the gradient");
  View<float> out = viewOf<float>(outRef, 2, op, "the table gradient");
  int64_t rows = table.size(0), cols = table.size(1);
  if (out.size(0) != rows || out.size(1) != cols)
    braidrt_fail("%s: the table gradient is not [%lld, %lld]", op,
                 (long long)rows, (long long)cols);
  Bags bags(offsets, false, indices.size(0), op);
  RowGradientsOf<T> gradients(rows, cols, indices.size(0));
  addBagGradients(table, indices.data, bags, grad, Mode(mode), gradients, op);
  std::fill(out.data, out.data + rows * cols, 0.0f);
  for (size_t slot = 0; slot < gradients.rows.size(); ++slot)
    for (int64_t c = 0; c < cols; ++c)
      out.data[gradients.rows[slot] * cols + c] =
          gradients.sums[slot * size_t(cols) + c];
}

template <typename T>
void tableUpdate(braidrt_unranked_memref *tableRef,
                 braidrt_unranked_memref *stateRef,
                 braidrt_unranked_memref *gradRef, int32_t optimizer,
                 double lr, double eps) {
  const char *op = "table_update";
  View<T> table = viewOf<T>(tableRef, 2, op, "the table");
  View<float> grad = viewOf<float>(gradRef, 2, op, "the gradient");
  int64_t rows = table.size(0), cols = table.size(1);
  if (grad.size(0) != rows || grad.size(1) != cols)
    braidrt_fail("%s: the gradient is not [%lld, %lld]", op, (long long)rows,
                 (long long)cols);
  optim::Config config = configOf(optimizer, lr, eps);
  float *state = tableState(stateRef, config, rows, cols, op);
  // Rows whose gradient is zero everywhere were not read on any rank.
  RowGradientsOf<T> gradients(rows, cols, rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float *g = grad.data + r * cols;
    if (std::all_of(g, g + cols, [](float v) { return v == 0.0f; }))
      continue;
    std::copy(g, g + cols, gradients.row(r));
  }
  if constexpr (std::is_same_v<T, float>)
    updateRowsF32(table, state, config, gradients);
  else
    updateRows(table, state, config, gradients);
}

} // namespace

extern "C" {

void _mlir_ciface_braidrt_bce_with_logits(braidrt_unranked_memref *logitsRef,
                                          braidrt_unranked_memref *labelsRef,
                                          braidrt_unranked_memref *lossRef,
                                          braidrt_unranked_memref *gradRef,
                                          double scale) {
  const char *op = "bce_with_logits";
  View<float> logits = viewOf<float>(logitsRef, 2, op, "the logits");
  View<float> labels = viewOf<float>(labelsRef, 1, op, "the labels");
  View<float> loss = viewOf<float>(lossRef, 0, op, "the loss");
  View<float> grad = viewOf<float>(gradRef, 2, op, "the logits' gradient");
  int64_t batch = logits.size(0);
  if (logits.size(1) != 1 || labels.size(0) != batch ||
      grad.size(0) != batch || grad.size(1) != 1)
    braidrt_fail("%s: %lld labels for [%lld, %lld] logits", op,
                 (long long)labels.size(0), (long long)batch,
                 (long long)logits.size(1));
  double sum = 0;
  for (int64_t b = 0; b < batch; ++b) {
    double z = logits.data[b], y = labels.data[b];
    sum += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
    grad.data[b] = float(scale * (1 / (1 + std::exp(-z)) - y));
  }
  loss.data[0] = float(scale * sum);
}

void _mlir_ciface_braidrt_linear_grad_gemms_f32(
    braidrt_unranked_memref *inputRef, braidrt_unranked_memref *weightRef,
    braidrt_unranked_memref *gradRef, braidrt_unranked_memref *inputGradRef,
    braidrt_unranked_memref *weightGradRef, int32_t parts) {
  LinearGradViews v = linearGradViewsOf(inputRef, weightRef, gradRef,
                                        inputGradRef, weightGradRef, parts,
                                        "linear_grad");
  View<float> &x = v.x, &w = v.w, &dx = v.dx, &dw = v.dw;
  const float *g = v.g.data;
  int64_t batch = v.batch, in = v.in, out = v.out;
  if (v.input)
    std::fill(dx.data, dx.data + batch * in, 0.0f);
  if (v.weight)
    std::fill(dw.data, dw.data + out * in, 0.0f);
  if (batch == 0 || in == 0 || out == 0)
    return;
  // dx = g w ([B, out] x [out, in]) by blocks of the batch's rows, and
  // dw = g^T x ([out, B] x [B, in]) by blocks of its output rows: each
  // block is a whole row's dot products, so the results are the unblocked
  // ones, and the exchanges in flight move along between blocks.
  constexpr int64_t kBlocks = 4;
  int64_t rowBlock = (batch + kBlocks - 1) / kBlocks;
  for (int64_t b = 0; v.input && b < batch; b += rowBlock) {
    braidrt_progress();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                std::min(rowBlock, batch - b), in, out, 1.0f,
                g + b * out, out, w.data, in, 0.0f, dx.data + b * in,
                in);
  }
  int64_t outBlock = (out + kBlocks - 1) / kBlocks;
  for (int64_t o = 0; v.weight && o < out; o += outBlock) {
    braidrt_progress();
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans,
                std::min(outBlock, out - o), in, batch, 1.0f, g + o, out,
                x.data, in, 0.0f, dw.data + o * in, in);
  }
  braidrt_progress();
}

void _mlir_ciface_braidrt_segment_rows(
    braidrt_unranked_memref *rows, braidrt_unranked_memref *bounds,
    int32_t bounds_are_lengths, int64_t table_rows,
    braidrt_unranked_memref *sorted_bags, braidrt_unranked_memref *segment_rows,
    braidrt_unranked_memref *segment_starts, braidrt_unranked_memref *count) {
  segmentRows(rows, bounds, bounds_are_lengths, table_rows, sorted_bags,
              segment_rows, segment_starts, count);
}

#define BRAIDRT_TABLE_KERNELS(SUFFIX, TYPE)                                    \
  void _mlir_ciface_braidrt_bag_update_##SUFFIX(                               \
      braidrt_unranked_memref *table, braidrt_unranked_memref *state,          \
      braidrt_unranked_memref *rows, braidrt_unranked_memref *bounds,          \
      int32_t bounds_are_lengths, braidrt_unranked_memref *grad, int32_t mode, \
      int32_t optimizer, double lr, double eps) {                              \
    bagUpdate<TYPE>(table, state, rows, bounds, bounds_are_lengths, grad,      \
                    mode, optimizer, lr, eps);                                 \
  }                                                                            \
  void _mlir_ciface_braidrt_bag_grad_##SUFFIX(                                 \
      braidrt_unranked_memref *table, braidrt_unranked_memref *indices,        \
      braidrt_unranked_memref *offsets, braidrt_unranked_memref *grad,         \
      braidrt_unranked_memref *out, int32_t mode) {                            \
    bagGrad<TYPE>(table, indices, offsets, grad, out, mode);                   \
  }                                                                            \
  void _mlir_ciface_braidrt_table_update_##SUFFIX(                             \
      braidrt_unranked_memref *table, braidrt_unranked_memref *state,          \
      braidrt_unranked_memref *grad, int32_t optimizer, double lr,             \
      double eps) {                                                            \
    tableUpdate<TYPE>(table, state, grad, optimizer, lr, eps);                 \
  }
BRAIDRT_TABLE_KERNELS(f32, float)
BRAIDRT_TABLE_KERNELS(f16, _Float16)
BRAIDRT_TABLE_KERNELS(bf16, BF16)
#undef BRAIDRT_TABLE_KERNELS

} // extern "C"

/// The compiler runtime's f32 -> bf16 conversion, which LLVM calls where a
/// CPU has no bf16 instructions (x86 without AVX512-BF16): GCC 12's libgcc
/// does not have it, and a compiled program with a bf16 table would not
/// load. Programs link against this library, so it provides the routine
/// (weak: a libgcc or compiler-rt that has one takes precedence). A bf16 is
/// returned in the low 16 bits of the floating-point return register, as
/// the x86-64 and AArch64 ABIs pass it, hence the float carrying its bits.
extern "C" __attribute__((weak, visibility("default"))) float
__truncsfbf2(float value) {
  uint32_t word = bf16BitsOf(value);
  float carrier;
  std::memcpy(&carrier, &word, 4);
  return carrier;
}
