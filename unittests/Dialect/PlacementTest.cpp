//===- PlacementTest.cpp - Tests of table placements and replica groups ---===//
//
// This file tests the shard lists of every table placement, and the
// replica-group queries collectives and the interpreter rely on.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::braid;

namespace {
class PlacementTest : public ::testing::Test {
protected:
  PlacementTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  template <typename AttrTy>
  AttrTy parse(StringRef text) {
    return llvm::dyn_cast_or_null<AttrTy>(parseAttribute(text, &context));
  }
  MLIRContext context;
};
} // namespace

TEST_F(PlacementTest, TableWiseIsOneWholeShard) {
  auto attr = parse<TablePlacementAttrInterface>("#braid.table_wise<rank = 5>");
  ASSERT_TRUE(attr);
  EXPECT_EQ(attr.getShardingName(), "table_wise");
  SmallVector<TableShard> shards = attr.getShards(1000, 64);
  ASSERT_EQ(shards.size(), 1u);
  EXPECT_EQ(shards[0], (TableShard{5, 0, 1000, 0, 64}));
}

TEST_F(PlacementTest, RowWiseShardsFollowUnevenOffsets) {
  auto attr = parse<TablePlacementAttrInterface>(
      "#braid.row_wise<ranks = [2, 0, 1], row_offsets = [0, 10, 10, 100]>");
  ASSERT_TRUE(attr);
  SmallVector<TableShard> shards = attr.getShards(100, 8);
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[0], (TableShard{2, 0, 10, 0, 8}));
  EXPECT_EQ(shards[1], (TableShard{0, 10, 0, 0, 8})); // an empty range
  EXPECT_EQ(shards[2], (TableShard{1, 10, 90, 0, 8}));
  int64_t rows = 0;
  for (const TableShard &shard : shards)
    rows += shard.rows;
  EXPECT_EQ(rows, 100);
}

TEST_F(PlacementTest, ColumnWiseShardsCoverTheDim) {
  auto attr = parse<TablePlacementAttrInterface>(
      "#braid.column_wise<ranks = [3, 1], col_offsets = [0, 48, 64]>");
  ASSERT_TRUE(attr);
  SmallVector<TableShard> shards = attr.getShards(7, 64);
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0], (TableShard{3, 0, 7, 0, 48}));
  EXPECT_EQ(shards[1], (TableShard{1, 0, 7, 48, 16}));
  EXPECT_EQ(attr.getPlacementRanks(), (SmallVector<int64_t>{3, 1}));
}

TEST_F(PlacementTest, TableRowWiseAndDataParallel) {
  auto trw = parse<TableRowWiseAttr>(
      "#braid.table_row_wise<node = 1, ranks = [4, 5], row_offsets = [0, 3, 9]>");
  ASSERT_TRUE(trw);
  EXPECT_EQ(trw.getNode(), 1);
  EXPECT_EQ(cast<TablePlacementAttrInterface>(trw).getShards(9, 2)[1],
            (TableShard{5, 3, 6, 0, 2}));
  auto dp = parse<TablePlacementAttrInterface>(
      "#braid.data_parallel<ranks = [0, 1, 2]>");
  ASSERT_TRUE(dp);
  for (const TableShard &shard : dp.getShards(50, 4))
    EXPECT_EQ(shard.rows * shard.cols, 200);
}

TEST_F(PlacementTest, InvalidPlacementsDoNotParse) {
  context.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  EXPECT_FALSE(parse<TablePlacementAttrInterface>(
      "#braid.row_wise<ranks = [0, 1], row_offsets = [0, 5]>"));
  EXPECT_FALSE(parse<TablePlacementAttrInterface>(
      "#braid.column_wise<ranks = [0, 1], col_offsets = [0, 0, 4]>"));
}

TEST_F(PlacementTest, ReplicaGroupsFindRanks) {
  auto groups = parse<ReplicaGroupsAttr>(
      "#braid.replica_groups<[[0, 2, 4], [1, 3, 5]]>");
  ASSERT_TRUE(groups);
  EXPECT_EQ(groups.getGroupSize(), 3);
  EXPECT_EQ(groups.getNumGroups(), 2);
  EXPECT_EQ(groups.getGroup(1), ArrayRef<int64_t>({1, 3, 5}));
  EXPECT_EQ(groups.findRank(3), std::make_pair(int64_t(1), int64_t(1)));
  EXPECT_EQ(groups.findRank(4), std::make_pair(int64_t(0), int64_t(2)));
  EXPECT_FALSE(groups.findRank(6).has_value());
}

TEST_F(PlacementTest, ClusterWorldSize) {
  auto cluster = parse<ClusterAttr>(
      "#braid.cluster<hardware = \"dgx-h100\", nodes = 16, ranks_per_node = 8>");
  ASSERT_TRUE(cluster);
  EXPECT_EQ(cluster.getWorldSize(), 128);
  EXPECT_EQ(cluster.getHardware(), "dgx-h100");
}
