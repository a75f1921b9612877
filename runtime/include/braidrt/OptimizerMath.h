//===- OptimizerMath.h - The optimizers' update formulas --------*- C++ -*-===//
//
// The update formulas of Braid's optimizers, in one place for the two that
// apply them: the runtime's training kernels (compiled programs) and the
// reference semantics (lib/Interp). The formulas are torch.optim's (SGD,
// Adagrad with initial accumulator 0, Adam with bias correction) and
// FBGEMM's row-wise Adagrad. Weights and gradients are doubles; the state
// is kept in the caller's type (f32 in compiled programs, doubles in the
// reference semantics). Header-only C++ with no dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef BRAIDRT_OPTIMIZERMATH_H
#define BRAIDRT_OPTIMIZERMATH_H

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace braidrt::optim {

/// The optimizer types, numbered as compiled programs pass them.
enum class Kind : int32_t { sgd = 0, adagrad = 1, rowwise_adagrad = 2, adam = 3 };

struct Config {
  Kind kind = Kind::sgd;
  double lr = 0, eps = 0, beta1 = 0, beta2 = 0;
};

/// State tensors per weight element: sgd none, adagrad and adam one or two
/// of the weight's size, rowwise_adagrad one value per row.
inline int numStates(Kind kind) {
  return kind == Kind::sgd ? 0 : kind == Kind::adam ? 2 : 1;
}

/// One update of the `n` weights `w` (one row, for rowwise_adagrad) by the
/// gradient `g` at `step` (from 1; Adam's bias correction reads it).
/// `first` holds n values (one for rowwise_adagrad), `second` n for Adam.
/// The arithmetic is in doubles whatever the types of the weights, the
/// gradient and the state, which are converted on load and store.
template <typename Weight, typename Grad, typename State>
inline void update(const Config &config, int64_t step, Weight *w,
                   const Grad *g, size_t n, State *first, State *second) {
  auto grad = [&](size_t i) { return double(g[i]); };
  auto move = [&](size_t i, double delta) {
    w[i] = Weight(double(w[i]) - delta);
  };
  switch (config.kind) {
  case Kind::sgd:
    for (size_t i = 0; i < n; ++i)
      move(i, config.lr * grad(i));
    return;
  case Kind::adagrad:
    for (size_t i = 0; i < n; ++i) {
      double sum = double(first[i]) + grad(i) * grad(i);
      first[i] = State(sum);
      move(i, config.lr * grad(i) / (std::sqrt(sum) + config.eps));
    }
    return;
  case Kind::rowwise_adagrad: {
    double meanSquare = 0;
    for (size_t i = 0; i < n; ++i)
      meanSquare += grad(i) * grad(i);
    double sum = double(first[0]) + (n ? meanSquare / double(n) : 0.0);
    first[0] = State(sum);
    double scale = config.lr / (std::sqrt(sum) + config.eps);
    for (size_t i = 0; i < n; ++i)
      move(i, scale * grad(i));
    return;
  }
  case Kind::adam: {
    double correction1 = 1 - std::pow(config.beta1, double(step));
    double correction2 = 1 - std::pow(config.beta2, double(step));
    for (size_t i = 0; i < n; ++i) {
      double m = config.beta1 * double(first[i]) + (1 - config.beta1) * grad(i);
      double v = config.beta2 * double(second[i]) +
                 (1 - config.beta2) * grad(i) * grad(i);
      first[i] = State(m);
      second[i] = State(v);
      move(i, config.lr * (m / correction1) /
                  (std::sqrt(v / correction2) + config.eps));
    }
    return;
  }
  }
}

} // namespace braidrt::optim

#endif // BRAIDRT_OPTIMIZERMATH_H
