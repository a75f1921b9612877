//===- SegmentRowsTest.cpp - The runtime's grouping of entries by row -----===//
//
// braidrt_segment_rows is what makes the generated embedding update
// deterministic: each distinct row once, in increasing order, with its
// entries' bags in entry order. Checked against a plain sort on random
// lookups, offsets and lengths alike, and on tables wide enough to need
// more than one radix pass.
//
//===----------------------------------------------------------------------===//

#include "braidrt/compiled.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace {

/// A 1-D memref descriptor of `data` (allocated, aligned, offset, size,
/// stride), and the unranked memref that points at it.
struct Buffer {
  std::vector<int64_t> data;
  int64_t descriptor[5] = {};
  braidrt_unranked_memref memref{};

  explicit Buffer(std::vector<int64_t> values) : data(std::move(values)) {
    descriptor[0] = descriptor[1] = reinterpret_cast<int64_t>(data.data());
    descriptor[2] = 0;
    descriptor[3] = int64_t(data.size());
    descriptor[4] = 1;
    memref = {1, descriptor};
  }
  Buffer(const Buffer &) = delete;
};

struct Segments {
  std::vector<int64_t> sortedBags, rows, starts;
  int64_t count = 0;
};

Segments segment(const std::vector<int64_t> &rowIds,
                 const std::vector<int64_t> &bounds, bool lengths,
                 int64_t tableRows) {
  size_t n = rowIds.size();
  Buffer rows(rowIds), bags(bounds), sorted(std::vector<int64_t>(n, -1)),
      segmentRows(std::vector<int64_t>(n, -1)),
      starts(std::vector<int64_t>(n + 1, -1)), count({-1});
  _mlir_ciface_braidrt_segment_rows(
      &rows.memref, &bags.memref, lengths, tableRows, &sorted.memref,
      &segmentRows.memref, &starts.memref, &count.memref);
  Segments out{sorted.data, segmentRows.data, starts.data, count.data[0]};
  out.rows.resize(size_t(out.count));
  out.starts.resize(size_t(out.count + 1));
  // Entries past the last bag's end have no sorted position.
  out.sortedBags.resize(size_t(out.starts.back()));
  return out;
}

/// What segment_rows must produce: (row, bag) pairs in entry order, sorted
/// stably by row.
Segments expected(const std::vector<int64_t> &rowIds,
                  const std::vector<int64_t> &starts) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t b = 0; b + 1 < starts.size(); ++b)
    for (int64_t j = starts[b]; j < starts[b + 1]; ++j)
      pairs.push_back({rowIds[size_t(j)], int64_t(b)});
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](auto &x, auto &y) { return x.first < y.first; });
  Segments out;
  for (size_t i = 0; i < pairs.size(); ++i) {
    out.sortedBags.push_back(pairs[i].second);
    if (i == 0 || pairs[i].first != pairs[i - 1].first) {
      out.rows.push_back(pairs[i].first);
      out.starts.push_back(int64_t(i));
    }
  }
  out.starts.push_back(int64_t(pairs.size()));
  out.count = int64_t(out.rows.size());
  return out;
}

void checkRandomLookup(int64_t tableRows, int64_t bags, int64_t maxPooling,
                       unsigned seed) {
  std::mt19937_64 random(seed);
  std::vector<int64_t> lengths, offsets = {0}, rowIds;
  for (int64_t b = 0; b < bags; ++b) {
    int64_t size = int64_t(random() % uint64_t(maxPooling + 1));
    lengths.push_back(size);
    offsets.push_back(offsets.back() + size);
    for (int64_t j = 0; j < size; ++j)
      rowIds.push_back(int64_t(random() % uint64_t(tableRows)));
  }
  Segments want = expected(rowIds, offsets);
  for (bool useLengths : {false, true}) {
    Segments got =
        segment(rowIds, useLengths ? lengths : offsets, useLengths, tableRows);
    EXPECT_EQ(got.count, want.count) << tableRows << " rows";
    EXPECT_EQ(got.rows, want.rows) << tableRows << " rows";
    EXPECT_EQ(got.starts, want.starts) << tableRows << " rows";
    EXPECT_EQ(got.sortedBags, want.sortedBags) << tableRows << " rows";
  }
}

TEST(RuntimeSegmentRows, GroupsEntriesByRowInEntryOrder) {
  // One radix pass (8 rows: hot rows, long segments), two (5000) and
  // three (2^40 rows, far more than the entries).
  checkRandomLookup(8, 300, 6, 1);
  checkRandomLookup(5000, 200, 5, 2);
  checkRandomLookup(int64_t(1) << 40, 100, 4, 3);
}

TEST(RuntimeSegmentRows, EmptyBagsAndNoEntries) {
  Segments none = segment({}, {0, 0, 0}, false, 10);
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.starts, std::vector<int64_t>({0}));
  // Entries past the last bag's end are not part of the lookup.
  Segments some = segment({3, 3, 1, 9}, {0, 0, 3}, false, 10);
  EXPECT_EQ(some.count, 2);
  EXPECT_EQ(some.rows, std::vector<int64_t>({1, 3}));
  EXPECT_EQ(some.starts, std::vector<int64_t>({0, 1, 3}));
  EXPECT_EQ(some.sortedBags, std::vector<int64_t>({1, 1, 1}));
}

TEST(RuntimeSegmentRows, RowOutsideTheTableIsAnError) {
  EXPECT_EXIT(segment({2, 10}, {0, 2}, false, 10), testing::ExitedWithCode(1),
              "embedding_bag_update: row 10 is outside the table's 10 rows");
  EXPECT_EXIT(segment({-1}, {1}, true, 10), testing::ExitedWithCode(1),
              "shard_embedding_bag_update: row -1 is outside the table's 10 "
              "rows");
  EXPECT_EXIT(segment({1, 2}, {0, 3}, false, 10), testing::ExitedWithCode(1),
              "bag 0 spans entries \\[0, 3\\) of 2");
}

} // namespace
