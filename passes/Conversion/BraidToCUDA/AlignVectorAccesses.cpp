//===- AlignVectorAccesses.cpp - 16-byte row loads in kernels -------------===//
//
// This file implements braid-align-vector-accesses: in an outlined kernel
// module, unmasked in-bounds 1-D vector transfers on identity-layout memrefs
// become vector.load / vector.store with the alignment that the row stride,
// the constant column offset and the host's 16-byte buffer contract prove,
// so that NVPTX emits 16-byte vector loads instead of scalar ones.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDALIGNVECTORACCESSESPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// NVPTX's 64-bit data layout. Without it, the LLVM translation of a kernel
/// takes LLVM's default layout, whose 4-byte i64 alignment makes NVPTX
/// split every index load in two.
static constexpr llvm::StringLiteral kNvptxDataLayout =
    "e-p6:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64";

/// The alignment every buffer a host passes or allocates has (bytes).
static constexpr int64_t kBufferAlignment = 16;

/// The largest power of two, up to kMaxKnownMultiple, that the index
/// `value` is provably a multiple of: a constant's own (0 is a multiple of
/// everything), a product's factors' together, a sum's smaller one; 1 when
/// nothing is known. Only powers of two matter to an alignment, and keeping
/// to them (capped) keeps a product of constants from overflowing.
static constexpr int64_t kMaxKnownMultiple = 1024;
static int64_t knownMultiple(Value value, int depth = 0) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant))) {
    uint64_t bits = constant.getZExtValue();
    return bits == 0 ? kMaxKnownMultiple
                     : std::min<int64_t>(int64_t(bits & -bits), kMaxKnownMultiple);
  }
  Operation *op = value.getDefiningOp();
  if (!op || depth > 8)
    return 1;
  if (auto mul = dyn_cast<arith::MulIOp>(op))
    return std::min(knownMultiple(mul.getLhs(), depth + 1) *
                        knownMultiple(mul.getRhs(), depth + 1),
                    kMaxKnownMultiple);
  if (auto add = dyn_cast<arith::AddIOp>(op))
    return std::min(knownMultiple(add.getLhs(), depth + 1),
                    knownMultiple(add.getRhs(), depth + 1));
  return 1;
}

/// The alignment, in bytes, that an access of `vectorType` at `indices` of
/// `memrefType` provably has, or 0 when the access does not qualify: the
/// layout must be strided with a static offset, static outer strides and a
/// unit inner one (the identity, or a view such as a fused combine's first
/// rows of a receive buffer), and the last index a constant or a provable
/// multiple (knownMultiple: a column group's first column). Every row then
/// starts at the buffer's (16-byte) start plus a multiple of the offset's
/// and the outer strides' bytes.
static int64_t provableAlignment(MemRefType memrefType, VectorType vectorType,
                                 ValueRange indices) {
  if (vectorType.getRank() != 1 || memrefType.getRank() == 0)
    return 0;
  Type element = memrefType.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return 0;
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(memrefType.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || strides.back() != 1)
    return 0;
  int64_t column = knownMultiple(indices.back());
  if (column == 1)
    return 0;
  int64_t alignment = std::gcd(kBufferAlignment, offset * elementBytes);
  for (int64_t stride : ArrayRef<int64_t>(strides).drop_back()) {
    if (ShapedType::isDynamic(stride))
      return 0;
    alignment = std::gcd(alignment, stride * elementBytes);
  }
  alignment = std::gcd(alignment, column * elementBytes);
  // A power of two (gcd with 16 is one) no larger than the access.
  int64_t accessBytes = vectorType.getNumElements() * elementBytes;
  while (alignment > accessBytes)
    alignment /= 2;
  return alignment > elementBytes ? alignment : 0;
}

/// Whether `transfer` is a plain row access: unmasked, in bounds, minor
/// identity on a memref.
template <typename TransferOp>
static bool isPlainRowAccess(TransferOp transfer) {
  return !transfer.getMask() && isa<MemRefType>(transfer.getShapedType()) &&
         transfer.getPermutationMap().isMinorIdentity() &&
         transfer.getVectorType().getRank() == 1 && transfer.isDimInBounds(0);
}

namespace {
struct BraidAlignVectorAccessesPass
    : public braid::impl::BraidAlignVectorAccessesPassBase<
          BraidAlignVectorAccessesPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    if (!module->hasAttr(LLVM::LLVMDialect::getDataLayoutAttrName()))
      module->setAttr(LLVM::LLVMDialect::getDataLayoutAttrName(),
                      StringAttr::get(&getContext(), kNvptxDataLayout));
    SmallVector<Operation *> transfers;
    getOperation().walk([&](Operation *op) {
      if (isa<vector::TransferReadOp, vector::TransferWriteOp>(op))
        transfers.push_back(op);
    });
    for (Operation *op : transfers) {
      OpBuilder builder(op);
      if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
        if (!isPlainRowAccess(read))
          continue;
        int64_t alignment =
            provableAlignment(cast<MemRefType>(read.getShapedType()),
                              read.getVectorType(), read.getIndices());
        if (alignment == 0)
          continue;
        auto load = vector::LoadOp::create(
            builder, read.getLoc(), read.getVectorType(), read.getBase(),
            read.getIndices(), /*nontemporal=*/false,
            llvm::MaybeAlign(alignment));
        read.replaceAllUsesWith(load.getResult());
        read.erase();
        continue;
      }
      auto write = cast<vector::TransferWriteOp>(op);
      if (!isPlainRowAccess(write))
        continue;
      int64_t alignment =
          provableAlignment(cast<MemRefType>(write.getShapedType()),
                            write.getVectorType(), write.getIndices());
      if (alignment == 0)
        continue;
      vector::StoreOp::create(builder, write.getLoc(), write.getVector(),
                              write.getBase(), write.getIndices(),
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(alignment));
      write.erase();
    }
  }
};
} // namespace
