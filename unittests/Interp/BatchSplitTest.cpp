//===- BatchSplitTest.cpp - Tests of the batch split ----------------------===//
//
// This file tests how global arguments are split over the ranks of a
// partitioned program: bags keep their indices and are rebased, batch rows
// are sliced, parameters are replicated (or sliced into the blocks they are
// stored as), and results gather back in rank
// order.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/BatchSplit.h"
#include "braid/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

namespace {
constexpr StringLiteral kGlobal = R"mlir(
func.func @forward(%dense: tensor<3x2xf32> {braid.input = "dense"},
                   %idx: tensor<?xi64> {braid.input = "t.indices"},
                   %off: tensor<4xi64> {braid.input = "t.offsets"},
                   %w: tensor<3x2xf32> {braid.param = "w"}) {
  return
}
)mlir";
// The per-rank program names its arguments alike, in another order.
constexpr StringLiteral kPerRank = R"mlir(
func.func @forward(%off: tensor<?xi64> {braid.input = "t.offsets"},
                   %w: tensor<3x2xf32> {braid.param = "w"},
                   %idx: tensor<?xi64> {braid.input = "t.indices"},
                   %dense: tensor<?x2xf32> {braid.input = "dense"}) {
  return
}
)mlir";

HostTensor tensorOf(ElementKind kind, ArrayRef<int64_t> shape,
                    ArrayRef<double> values) {
  HostTensor tensor(kind, shape);
  tensor.data.assign(values.begin(), values.end());
  return tensor;
}
} // namespace

TEST(BatchSplitTest, SplitsBagsRowsAndReplicatesParameters) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> global = parseSourceString<ModuleOp>(kGlobal, &context);
  OwningOpRef<ModuleOp> perRank = parseSourceString<ModuleOp>(kPerRank, &context);
  ASSERT_TRUE(global && perRank);
  auto globalFunc = *global->getOps<func::FuncOp>().begin();
  auto rankFunc = *perRank->getOps<func::FuncOp>().begin();

  // Bags {10, 11}, {}, {12}; samples 0 and 1 on rank 0, sample 2 on rank 1.
  std::vector<HostTensor> args = {
      tensorOf(ElementKind::f32, {3, 2}, {1, 2, 3, 4, 5, 6}),
      tensorOf(ElementKind::i64, {3}, {10, 11, 12}),
      tensorOf(ElementKind::i64, {4}, {0, 2, 2, 3}),
      tensorOf(ElementKind::f32, {3, 2}, {7, 7, 7, 7, 7, 7})};
  FailureOr<RankValues> split =
      splitGlobalArguments(globalFunc, args, rankFunc, {2, 1});
  ASSERT_TRUE(succeeded(split));
  ASSERT_EQ(split->size(), 2u);
  const std::vector<HostTensor> &rank0 = (*split)[0], &rank1 = (*split)[1];
  EXPECT_EQ(rank0[0].data, (std::vector<double>{0, 2, 2}));
  EXPECT_EQ(rank0[2].data, (std::vector<double>{10, 11}));
  EXPECT_EQ(rank0[3].data, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(rank1[0].data, (std::vector<double>{0, 1}));
  EXPECT_EQ(rank1[2].data, (std::vector<double>{12}));
  EXPECT_EQ(rank1[3].data, (std::vector<double>{5, 6}));
  EXPECT_EQ(rank0[1].data, args[3].data);
  EXPECT_EQ(rank1[1].data, args[3].data);

  // Gathering the rows back gives the global tensor.
  RankValues results = {{rank0[3]}, {rank1[3]}};
  std::vector<HostTensor> gathered = gatherResults(results);
  ASSERT_EQ(gathered.size(), 1u);
  EXPECT_EQ(gathered[0].data, args[0].data);
  EXPECT_EQ(relativeError(gathered[0], args[0]), 0);
}

TEST(BatchSplitTest, RelativeErrorIsNormwise) {
  HostTensor expected = tensorOf(ElementKind::f32, {3}, {1, -4, 0});
  HostTensor actual = tensorOf(ElementKind::f32, {3}, {1, -4, 0.002});
  EXPECT_DOUBLE_EQ(relativeError(actual, expected), 0.002 / 4);
  HostTensor other = tensorOf(ElementKind::f32, {1, 3}, {1, -4, 0});
  EXPECT_TRUE(std::isinf(relativeError(other, expected)));
  HostTensor zeros = tensorOf(ElementKind::f32, {3}, {0, 0, 0});
  EXPECT_EQ(relativeError(zeros, zeros), 0);
  EXPECT_TRUE(std::isinf(relativeError(actual, zeros)));
}

TEST(BatchSplitTest, RelativeErrorComparesNonFiniteValuesExactly) {
  double inf = std::numeric_limits<double>::infinity();
  double nan = std::numeric_limits<double>::quiet_NaN();
  // An infinity in the reference does not scale the finite differences
  // away: they are measured against the largest finite value.
  HostTensor expected = tensorOf(ElementKind::f32, {3}, {inf, 2, -4});
  HostTensor actual = tensorOf(ElementKind::f32, {3}, {inf, 2, -3});
  EXPECT_DOUBLE_EQ(relativeError(actual, expected), 1.0 / 4);
  EXPECT_EQ(relativeError(expected, expected), 0);
  // An infinity of the other sign, a finite value for an infinity, and a
  // number for a NaN are as far as can be; NaN against NaN matches.
  HostTensor flipped = tensorOf(ElementKind::f32, {3}, {-inf, 2, -4});
  EXPECT_TRUE(std::isinf(relativeError(flipped, expected)));
  HostTensor finite = tensorOf(ElementKind::f32, {3}, {1e30, 2, -4});
  EXPECT_TRUE(std::isinf(relativeError(finite, expected)));
  HostTensor withNan = tensorOf(ElementKind::f32, {2}, {nan, 1});
  EXPECT_EQ(relativeError(withNan, withNan), 0);
  HostTensor noNan = tensorOf(ElementKind::f32, {2}, {0, 1});
  EXPECT_TRUE(std::isinf(relativeError(noNan, withNan)));
  EXPECT_TRUE(std::isinf(relativeError(withNan, noNan)));
}

TEST(BatchSplitTest, MismatchedOffsetsAreErrors) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.getDiagEngine().registerHandler([](Diagnostic &) {});
  OwningOpRef<ModuleOp> global = parseSourceString<ModuleOp>(kGlobal, &context);
  OwningOpRef<ModuleOp> perRank = parseSourceString<ModuleOp>(kPerRank, &context);
  ASSERT_TRUE(global && perRank);
  std::vector<HostTensor> args = {
      tensorOf(ElementKind::f32, {3, 2}, {1, 2, 3, 4, 5, 6}),
      tensorOf(ElementKind::i64, {3}, {10, 11, 12}),
      tensorOf(ElementKind::i64, {4}, {0, 2, 2, 3}),
      tensorOf(ElementKind::f32, {3, 2}, {7, 7, 7, 7, 7, 7})};
  // A split of 4 samples does not fit 3 bags.
  EXPECT_TRUE(failed(splitGlobalArguments(
      *global->getOps<func::FuncOp>().begin(), args,
      *perRank->getOps<func::FuncOp>().begin(), {2, 2})));
}

// A parameter stored as blocks (braid.param_shard, braid.shard_dim): each
// rank takes its own block along the shard dimension, and a global value
// the blocks do not divide is an error.
TEST(BatchSplitTest, ParametersStoredAsBlocksAreSliced) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.getDiagEngine().registerHandler([](Diagnostic &) {});
  constexpr StringLiteral global = R"mlir(
func.func @forward(%x: tensor<2x1xf32> {braid.input = "dense"},
                   %w: tensor<2x4xf32> {braid.param = "w"}) {
  return
}
)mlir";
  constexpr StringLiteral perRank = R"mlir(
func.func @forward(%x: tensor<?x1xf32> {braid.input = "dense"},
                   %w: tensor<2x2xf32> {braid.param = "w", braid.param_shard = #braid.replica_groups<[[0, 1]]>, braid.shard_dim = 1 : i64}) {
  return
}
)mlir";
  OwningOpRef<ModuleOp> globalModule =
      parseSourceString<ModuleOp>(global, &context);
  OwningOpRef<ModuleOp> rankModule =
      parseSourceString<ModuleOp>(perRank, &context);
  ASSERT_TRUE(globalModule && rankModule);
  auto globalFunc = *globalModule->getOps<func::FuncOp>().begin();
  auto rankFunc = *rankModule->getOps<func::FuncOp>().begin();
  std::vector<HostTensor> args = {
      tensorOf(ElementKind::f32, {2, 1}, {1, 2}),
      tensorOf(ElementKind::f32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})};
  FailureOr<RankValues> split =
      splitGlobalArguments(globalFunc, args, rankFunc, {1, 1});
  ASSERT_TRUE(succeeded(split));
  EXPECT_EQ((*split)[0][1].shape, (SmallVector<int64_t, 4>{2, 2}));
  EXPECT_EQ((*split)[0][1].data, (std::vector<double>{0, 1, 4, 5}));
  EXPECT_EQ((*split)[1][1].data, (std::vector<double>{2, 3, 6, 7}));
  // The blocks, concatenated along the shard dimension, are the whole.
  EXPECT_EQ(HostTensor::concat({(*split)[0][1], (*split)[1][1]}, 1).data,
            args[1].data);
  // Three columns do not split into two blocks.
  args[1] = tensorOf(ElementKind::f32, {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_TRUE(failed(splitGlobalArguments(globalFunc, args, rankFunc, {1, 1})));
}
