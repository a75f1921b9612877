//===- FlattenParallelLoops.cpp - Kernels' loops in one dimension ---------===//
//
// This file implements braid-flatten-parallel-loops: each outermost
// multi-dimensional scf.parallel becomes one loop over the product of its
// dimensions, so the GPU mapping puts it on a one-dimensional grid (whose x
// dimension holds 2^31 - 1 blocks where y holds 65,535) with consecutive
// threads on consecutive elements.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDFLATTENPARALLELLOOPSPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
struct BraidFlattenParallelLoopsPass
    : public braid::impl::BraidFlattenParallelLoopsPassBase<
          BraidFlattenParallelLoopsPass> {
  void runOnOperation() override {
    // The kernels: parallel loops of several dimensions with no parallel
    // loop around them and no reduction (a reduction's combining region
    // is written for the loop's own dimensions).
    SmallVector<scf::ParallelOp> kernels;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      if (loop.getNumLoops() > 1 && loop.getNumReductions() == 0)
        kernels.push_back(loop);
      // Loops nested in this one run inside its threads: not kernels.
      return WalkResult::skip();
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : kernels) {
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
    }
  }
};
} // namespace
