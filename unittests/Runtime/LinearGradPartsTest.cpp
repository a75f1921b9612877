//===- LinearGradPartsTest.cpp - A dense layer's gradient in parts --------===//
//
// braidrt_linear_grad_gemms_f32 computes the parts of a dense layer's
// gradient that its call names: a split braid.linear_grad
// (braid-defer-weight-gradients) asks for the input gradient and the
// weight gradient in two calls. Each part alone must be bit for bit the
// part computed with the other, and leave the other's buffer unread and
// unwritten (the compiled program passes an empty placeholder).
//
//===----------------------------------------------------------------------===//

#include "braidrt/braidrt.h"
#include "braidrt/compiled.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

/// A row-major 2-D f32 memref descriptor of `data` and the unranked memref
/// that points at it.
struct Matrix {
  std::vector<float> data;
  int64_t descriptor[7] = {};
  braidrt_unranked_memref memref{};

  Matrix(int64_t rows, int64_t cols, float fill = 0.0f)
      : data(size_t(rows * cols), fill) {
    descriptor[0] = descriptor[1] = reinterpret_cast<int64_t>(data.data());
    descriptor[2] = 0;
    descriptor[3] = rows;
    descriptor[4] = cols;
    descriptor[5] = cols;
    descriptor[6] = 1;
    memref = {2, descriptor};
  }
  Matrix(const Matrix &) = delete;
};

void fill(Matrix &m, float scale) {
  for (size_t i = 0; i < m.data.size(); ++i)
    m.data[i] = std::sin(scale * float(i + 1));
}

TEST(LinearGradParts, EachPartAloneIsThePartOfBoth) {
  const int64_t batch = 37, in = 11, out = 5;
  Matrix x(batch, in), w(out, in), g(batch, out);
  fill(x, 0.37f);
  fill(w, 0.11f);
  fill(g, 0.23f);
  Matrix dxBoth(batch, in, -1), dwBoth(out, in, -1);
  _mlir_ciface_braidrt_linear_grad_gemms_f32(&x.memref, &w.memref, &g.memref,
                                             &dxBoth.memref, &dwBoth.memref,
                                             BRAIDRT_GRAD_BOTH);
  // The input part, with an empty placeholder for the weight gradient.
  Matrix dx(batch, in, -1), none(0, 0);
  _mlir_ciface_braidrt_linear_grad_gemms_f32(&x.memref, &w.memref, &g.memref,
                                             &dx.memref, &none.memref,
                                             BRAIDRT_GRAD_INPUT);
  EXPECT_EQ(dx.data, dxBoth.data);
  // The weight part, with a buffer it must leave as it is.
  Matrix dw(out, in, -1), untouched(batch, in, 7.0f);
  _mlir_ciface_braidrt_linear_grad_gemms_f32(&x.memref, &w.memref, &g.memref,
                                             &untouched.memref, &dw.memref,
                                             BRAIDRT_GRAD_WEIGHT);
  EXPECT_EQ(dw.data, dwBoth.data);
  EXPECT_EQ(untouched.data, std::vector<float>(size_t(batch * in), 7.0f));
  // And the gradients are the definition's: dx = g w, dw = g^T x.
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < in; ++i) {
      double sum = 0;
      for (int64_t o = 0; o < out; ++o)
        sum += double(g.data[size_t(b * out + o)]) * w.data[size_t(o * in + i)];
      EXPECT_NEAR(dx.data[size_t(b * in + i)], sum, 1e-4);
    }
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) {
      double sum = 0;
      for (int64_t b = 0; b < batch; ++b)
        sum += double(g.data[size_t(b * out + o)]) * x.data[size_t(b * in + i)];
      EXPECT_NEAR(dw.data[size_t(o * in + i)], sum, 1e-4);
    }
}

TEST(LinearGradParts, NoPartIsAnError) {
  Matrix x(2, 3), w(4, 3), g(2, 4), dx(2, 3), dw(4, 3);
  EXPECT_EXIT(_mlir_ciface_braidrt_linear_grad_gemms_f32(
                  &x.memref, &w.memref, &g.memref, &dx.memref, &dw.memref, 0),
              testing::ExitedWithCode(1), "linear_grad: no gradient parts 0");
}

} // namespace
