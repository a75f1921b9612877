//===- HostTensorTest.cpp - Tests of HostTensor ---------------------------===//
//
// This file tests slicing, concatenation, rounding and printing of the
// reference semantics' tensors.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/HostTensor.h"

#include "gtest/gtest.h"

#include <cmath>
#include <numeric>

using namespace mlir::braid::interp;

static HostTensor iota(llvm::ArrayRef<int64_t> shape) {
  HostTensor tensor(ElementKind::f32, shape);
  std::iota(tensor.data.begin(), tensor.data.end(), 0.0);
  return tensor;
}

TEST(HostTensorTest, SliceAlongEachDimension) {
  HostTensor t = iota({2, 3, 4});
  HostTensor rows = t.slice(0, 1, 1);
  EXPECT_EQ(rows.shape, (llvm::SmallVector<int64_t, 4>{1, 3, 4}));
  EXPECT_EQ(rows.data.front(), 12);
  HostTensor middle = t.slice(1, 1, 2);
  EXPECT_EQ(middle.shape, (llvm::SmallVector<int64_t, 4>{2, 2, 4}));
  EXPECT_EQ(middle.data, (std::vector<double>{4, 5, 6, 7, 8, 9, 10, 11, 16, 17,
                                              18, 19, 20, 21, 22, 23}));
  HostTensor last = t.slice(2, 3, 1);
  EXPECT_EQ(last.data, (std::vector<double>{3, 7, 11, 15, 19, 23}));
  EXPECT_EQ(t.slice(1, 2, 0).getNumElements(), 0);
}

TEST(HostTensorTest, ConcatInvertsSlice) {
  HostTensor t = iota({3, 5});
  for (int64_t dim = 0; dim < 2; ++dim) {
    HostTensor a = t.slice(dim, 0, 1), b = t.slice(dim, 1, t.shape[dim] - 1);
    HostTensor joined = HostTensor::concat({a, b}, dim);
    EXPECT_EQ(joined.shape, t.shape);
    EXPECT_EQ(joined.data, t.data);
  }
}

TEST(HostTensorTest, RoundsToTheElementKind) {
  EXPECT_EQ(roundToKind(1.0 + 1e-12, ElementKind::f32), 1.0);
  EXPECT_EQ(roundToKind(0.1, ElementKind::f32), static_cast<double>(0.1f));
  // f16 has 10 fraction bits: 1 + 2^-11 rounds to even, i.e. 1.
  EXPECT_EQ(roundToKind(1.0 + std::ldexp(1.0, -11), ElementKind::f16), 1.0);
  EXPECT_EQ(roundToKind(1.0 + std::ldexp(1.0, -10), ElementKind::f16),
            1.0 + std::ldexp(1.0, -10));
  // bf16 has 7 fraction bits.
  EXPECT_EQ(roundToKind(1.0 + std::ldexp(1.0, -9), ElementKind::bf16), 1.0);
  EXPECT_EQ(roundToKind(70000.0, ElementKind::f16), INFINITY);
  EXPECT_EQ(roundToKind(-3.0, ElementKind::i1), 1.0);
}

TEST(HostTensorTest, PrintsNestedLists) {
  HostTensor t = iota({2, 2});
  t.data[3] = -0.0;
  EXPECT_EQ(t.formatValues(), "[[0, 1], [2, 0]]");
  EXPECT_EQ(t.describeType(), "tensor<2x2xf32>");
  HostTensor scalar(ElementKind::index, {});
  scalar.data[0] = 7;
  EXPECT_EQ(scalar.formatValues(), "7");
}

TEST(HostTensorTest, ElementCountOverflowIsReported) {
  EXPECT_EQ(getNumElements({1 << 20, 1 << 20}), int64_t(1) << 40);
  EXPECT_FALSE(getNumElements({int64_t(1) << 40, int64_t(1) << 40}));
  EXPECT_FALSE(getNumElements({-1, 4}));
}
