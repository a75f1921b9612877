//===- CollectiveOps.cpp - Braid collectives ------------------------------===//
//
// This file implements the rules of the Braid collectives. Each rule is
// written once, as a template over the op, and checked for both the
// synchronous form and its asynchronous `_start` form. Rules shared by every
// collective are in verifyCollectiveOp, the interface verifier.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::braid;

#include "braid/Dialect/Braid/IR/BraidOpInterfaces.cpp.inc"

static bool isStatic(int64_t size) { return !ShapedType::isDynamic(size); }

LogicalResult mlir::braid::detail::verifyCollectiveOp(Operation *op) {
  auto collective = cast<CollectiveOpInterface>(op);
  if (ReplicaGroupsAttr groups = collective.getReplicaGroupsAttr()) {
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t rank : groups.getRanks())
      if (!seen.insert(rank).second)
        return op->emitOpError()
               << "replica groups must be disjoint, but rank " << rank
               << " appears twice";
  }
  RankedTensorType input = collective.getInput().getType();
  Type resultType = op->getResult(0).getType();
  if (auto token = dyn_cast<TokenType>(resultType))
    resultType = token.getValueType();
  auto result = dyn_cast<RankedTensorType>(resultType);
  if (!result)
    return op->emitOpError() << "token value type must be a ranked tensor, "
                                "got "
                             << resultType;
  if (result.getElementType() != input.getElementType())
    return op->emitOpError() << "result element type "
                             << result.getElementType()
                             << " differs from the input's "
                             << input.getElementType();
  if (result.getRank() != input.getRank())
    return op->emitOpError() << "result has rank " << result.getRank()
                             << " but the input has rank " << input.getRank();
  return success();
}

/// Checks that `dim` is a dimension of `type`.
static LogicalResult verifyDimension(Operation *op, StringRef name,
                                     int64_t dim, RankedTensorType type) {
  if (dim < 0 || dim >= type.getRank())
    return op->emitOpError() << name << " " << dim
                             << " is not a dimension of the rank-"
                             << type.getRank() << " input";
  return success();
}

/// Checks that `result` equals `input` outside `skipA` and `skipB`.
static LogicalResult verifyOtherDimsMatch(Operation *op,
                                          RankedTensorType input,
                                          RankedTensorType result,
                                          int64_t skipA, int64_t skipB) {
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (d == skipA || d == skipB)
      continue;
    if (isStatic(input.getDimSize(d)) && isStatic(result.getDimSize(d)) &&
        input.getDimSize(d) != result.getDimSize(d))
      return op->emitOpError()
             << "result dimension " << d << " is " << result.getDimSize(d)
             << " but the input's is " << input.getDimSize(d);
  }
  return success();
}

/// Input and result types must be equal (the asynchronous forms of
/// all_reduce and broadcast, whose synchronous forms state it as a trait).
static LogicalResult verifySameType(CollectiveOpInterface op) {
  if (op.getInput().getType() != op.getResultTensorType())
    return op->emitOpError() << "result type " << op.getResultTensorType()
                             << " must be the input type "
                             << op.getInput().getType();
  return success();
}

/// The result is `group size` times the input along `dim` (all_gather), or
/// the input is `group size` times the result (reduce_scatter).
static LogicalResult verifyGrowOrShrink(CollectiveOpInterface op, int64_t dim,
                                        bool grows) {
  RankedTensorType input = op.getInput().getType();
  RankedTensorType result = op.getResultTensorType();
  if (failed(verifyDimension(op, "dim", dim, input)) ||
      failed(verifyOtherDimsMatch(op, input, result, dim, dim)))
    return failure();
  std::optional<int64_t> groupSize = op.getStaticGroupSize();
  int64_t in = input.getDimSize(dim), out = result.getDimSize(dim);
  if (!groupSize || !isStatic(in) || !isStatic(out))
    return success();
  if (grows && out != in * *groupSize)
    return op->emitOpError()
           << "gathering " << in << " along dim " << dim << " over groups of "
           << *groupSize << " gives " << in * *groupSize
           << ", but the result has " << out;
  if (!grows && (in % *groupSize != 0 || in / *groupSize != out))
    return op->emitOpError()
           << "scattering " << in << " along dim " << dim
           << " over groups of " << *groupSize << " needs the input to be "
           << *groupSize << " times the result's " << out;
  return success();
}

template <typename OpTy>
static LogicalResult verifyAllToAll(OpTy op) {
  auto collective = cast<CollectiveOpInterface>(op.getOperation());
  RankedTensorType input = op.getInput().getType();
  RankedTensorType result = collective.getResultTensorType();
  int64_t splitDim = op.getSplitDim(), concatDim = op.getConcatDim();
  if (failed(verifyDimension(op, "split_dim", splitDim, input)) ||
      failed(verifyDimension(op, "concat_dim", concatDim, input)) ||
      failed(verifyOtherDimsMatch(op, input, result, splitDim, concatDim)))
    return failure();
  std::optional<int64_t> groupSize = collective.getStaticGroupSize();
  std::optional<ArrayRef<int64_t>> splitSizes = op.getSplitSizes();
  if (!splitSizes) {
    if (!groupSize)
      return success();
    int64_t in = input.getDimSize(splitDim);
    if (!isStatic(in))
      return success();
    if (in % *groupSize != 0)
      return op.emitOpError()
             << "input size " << in << " along split_dim " << splitDim
             << " does not divide into " << *groupSize
             << " equal chunks; give split_sizes for an uneven exchange";
    SmallVector<int64_t> expected = llvm::to_vector(input.getShape());
    expected[splitDim] /= *groupSize;
    if (isStatic(expected[concatDim]))
      expected[concatDim] *= *groupSize;
    for (int64_t d : {splitDim, concatDim})
      if (isStatic(result.getDimSize(d)) && isStatic(expected[d]) &&
          result.getDimSize(d) != expected[d])
        return op.emitOpError()
               << "result dimension " << d << " should be " << expected[d]
               << " for an even all_to_all over groups of " << *groupSize
               << ", got " << result.getDimSize(d);
    return success();
  }
  if (!groupSize)
    return op.emitOpError() << "split_sizes need explicit groups";
  if (splitDim != concatDim)
    return op.emitOpError() << "split_sizes need split_dim and concat_dim to "
                               "be equal, got "
                            << splitDim << " and " << concatDim;
  int64_t g = *groupSize;
  if (static_cast<int64_t>(splitSizes->size()) != g * g)
    return op.emitOpError() << "split_sizes must have " << g * g
                            << " entries (groups of " << g << "), got "
                            << splitSizes->size();
  for (int64_t size : *splitSizes)
    if (size < 0)
      return op.emitOpError() << "split_sizes must not be negative, got "
                              << size;
  int64_t in = input.getDimSize(splitDim), out = result.getDimSize(splitDim);
  for (int64_t i = 0; i < g; ++i) {
    int64_t rowSum = 0, colSum = 0;
    for (int64_t j = 0; j < g; ++j) {
      rowSum += (*splitSizes)[i * g + j];
      colSum += (*splitSizes)[j * g + i];
    }
    if (isStatic(in) && rowSum != in)
      return op.emitOpError()
             << "all_to_all split sizes of group position " << i << " sum to "
             << rowSum << " but the operand has " << in << " along dim "
             << splitDim;
    if (isStatic(out) && colSum != out)
      return op.emitOpError()
             << "all_to_all group position " << i << " receives " << colSum
             << " but the result has " << out << " along dim " << splitDim;
  }
  return success();
}

template <typename OpTy>
static LogicalResult verifyBroadcast(OpTy op) {
  auto collective = cast<CollectiveOpInterface>(op.getOperation());
  int64_t root = op.getRoot();
  std::optional<int64_t> groupSize = collective.getStaticGroupSize();
  if (root < 0 || (groupSize && root >= *groupSize))
    return op.emitOpError() << "root " << root
                            << " is not a position in groups of "
                            << (groupSize ? std::to_string(*groupSize)
                                          : std::string("any size"));
  return verifySameType(collective);
}

/// A collective over groups of one rank returns its input.
static OpFoldResult foldTrivialCollective(CollectiveOpInterface op) {
  if (op.getStaticGroupSize() == 1 &&
      op.getInput().getType() == op.getResultTensorType())
    return op.getInput();
  return {};
}

LogicalResult mlir::braid::verifyTokensWaitedOnce(Operation *op) {
  for (Value token : op->getResults()) {
    if (!isa<TokenType>(token.getType()))
      continue;
    int64_t waits = 0, others = 0;
    for (Operation *user : token.getUsers())
      ++(isa<WaitOp>(user) ? waits : others);
    if (waits != 1 || others != 0)
      return op->emitOpError()
             << "returns a token that must be waited for by exactly one "
                "braid.wait and used by nothing else; token "
             << cast<OpResult>(token).getResultNumber() << " has " << waits
             << " wait(s) and " << others << " other use(s)";
  }
  return success();
}

LogicalResult AllReduceOp::verify() { return success(); }
LogicalResult AllReduceStartOp::verify() {
  if (failed(verifySameType(*this)))
    return failure();
  return verifyTokensWaitedOnce(*this);
}
OpFoldResult AllReduceOp::fold(FoldAdaptor) {
  return foldTrivialCollective(*this);
}

LogicalResult AllGatherOp::verify() {
  return verifyGrowOrShrink(*this, getDim(), /*grows=*/true);
}
LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyGrowOrShrink(*this, getDim(), /*grows=*/true)))
    return failure();
  return verifyTokensWaitedOnce(*this);
}
OpFoldResult AllGatherOp::fold(FoldAdaptor) {
  return foldTrivialCollective(*this);
}

LogicalResult ReduceScatterOp::verify() {
  return verifyGrowOrShrink(*this, getDim(), /*grows=*/false);
}
LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyGrowOrShrink(*this, getDim(), /*grows=*/false)))
    return failure();
  return verifyTokensWaitedOnce(*this);
}
OpFoldResult ReduceScatterOp::fold(FoldAdaptor) {
  return foldTrivialCollective(*this);
}

LogicalResult AllToAllOp::verify() { return verifyAllToAll(*this); }
LogicalResult AllToAllStartOp::verify() {
  if (failed(verifyAllToAll(*this)))
    return failure();
  return verifyTokensWaitedOnce(*this);
}
OpFoldResult AllToAllOp::fold(FoldAdaptor) {
  return foldTrivialCollective(*this);
}

LogicalResult BroadcastOp::verify() { return verifyBroadcast(*this); }
LogicalResult BroadcastStartOp::verify() {
  if (failed(verifyBroadcast(*this)))
    return failure();
  return verifyTokensWaitedOnce(*this);
}
OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  return foldTrivialCollective(*this);
}
