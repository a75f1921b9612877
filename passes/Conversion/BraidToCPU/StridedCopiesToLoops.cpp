//===- StridedCopiesToLoops.cpp - braid-strided-copies-to-loops -----------===//
//
// This file rewrites each `memref.copy` that the LLVM lowering could not turn
// into one `memcpy` (a side with a non-identity layout that is not a static,
// contiguous row-major block) as loops: an `scf.parallel` over every
// dimension but the innermost and an `scf.for` over the innermost, loading
// and storing one element at a time (sequential loops only, inside a
// kernel's parallel loop). LLVM vectorizes the inner loop where its stride
// is 1, where `memrefCopy` would have called `memcpy` once per element.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDSTRIDEDCOPIESTOLOOPSPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;

/// Whether finalize-memref-to-llvm copies `type` with `memcpy`: an identity
/// layout, or a static shape laid out contiguously row by row.
static bool copiesWithMemcpy(MemRefType type) {
  return type.getLayout().isIdentity() ||
         memref::isStaticShapeAndContiguousRowMajor(type);
}

/// Rewrites `copy` as loops over its source's sizes.
static void lowerToLoops(memref::CopyOp copy) {
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  Value source = copy.getSource(), target = copy.getTarget();
  int64_t rank = cast<MemRefType>(source.getType()).getRank();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.createOrFold<memref::DimOp>(loc, source, d));
  auto copyElement = [&](OpBuilder &b, Location loc, ValueRange indices) {
    Value element = memref::LoadOp::create(b, loc, source, indices);
    memref::StoreOp::create(b, loc, element, target, indices);
  };
  SmallVector<Value> lower(rank, zero), steps(rank, one);
  // Inside a kernel's parallel loop, or a single row: sequential loops (a
  // parallel region per iteration of a kernel would cost more than the
  // copy).
  if (rank == 1 || copy->getParentOfType<scf::ParallelOp>() ||
      copy->getParentOfType<scf::ForallOp>()) {
    scf::buildLoopNest(b, loc, lower, sizes, steps, copyElement);
  } else {
    auto copyRow = [&](OpBuilder &b, Location loc, ValueRange outer) {
      scf::buildLoopNest(b, loc, zero, sizes.back(), one,
                         [&](OpBuilder &b, Location loc, ValueRange inner) {
                           SmallVector<Value> indices(outer);
                           indices.push_back(inner.front());
                           copyElement(b, loc, indices);
                         });
    };
    scf::ParallelOp::create(b, loc, ArrayRef(lower).drop_back(),
                            ArrayRef(sizes).drop_back(),
                            ArrayRef(steps).drop_back(), copyRow);
  }
  copy.erase();
}

namespace {
struct BraidStridedCopiesToLoopsPass
    : braid::impl::BraidStridedCopiesToLoopsPassBase<
          BraidStridedCopiesToLoopsPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> strided;
    getOperation().walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      // Unranked copies keep the runtime call; rank 0 is one element.
      if (source && target && source.getRank() > 0 &&
          (!copiesWithMemcpy(source) || !copiesWithMemcpy(target)))
        strided.push_back(copy);
    });
    for (memref::CopyOp copy : strided)
      lowerToLoops(copy);
  }
};
} // namespace
