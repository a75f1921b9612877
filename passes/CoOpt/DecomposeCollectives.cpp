//===- DecomposeCollectives.cpp - The braid-decompose-collectives pass ----===//
//
// This file implements braid-decompose-collectives: a synchronous
// all_reduce becomes a reduce_scatter and an all_gather over its groups
// (flat), or, over every rank of several nodes, a reduce_scatter inside each
// node, an all_reduce between the nodes and an all_gather inside each node
// (hierarchical). The simulator chooses the form, or none.
//
//===----------------------------------------------------------------------===//

#include "braid/CoOpt/Passes.h"

#include "CoOptSupport.h"

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/Builders.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDDECOMPOSECOLLECTIVESPASS
#include "braid/CoOpt/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

namespace {
enum class Form { flat, hierarchical };

/// The cluster's shape, from the module (nodes 0 when it has none).
struct ClusterShape {
  int64_t nodes = 0, perNode = 0;
  int64_t ranks() const { return nodes * perNode; }
};

/// Groups of `size` ranks: [[0, 1, ..], [size, ..], ..] with `stride` 1,
/// or [[0, stride, ..], [1, stride + 1, ..], ..].
ReplicaGroupsAttr makeGroups(MLIRContext *context, int64_t numGroups,
                             int64_t size, bool strided) {
  SmallVector<int64_t> ranks;
  for (int64_t g = 0; g < numGroups; ++g)
    for (int64_t k = 0; k < size; ++k)
      ranks.push_back(strided ? g + k * numGroups : g * size + k);
  return ReplicaGroupsAttr::get(context, size, ranks);
}

/// True when `groups` (null: every rank) is one group of all `ranks` in
/// rank order.
bool spansAllInOrder(ReplicaGroupsAttr groups, int64_t ranks) {
  if (!groups)
    return true;
  if (groups.getNumGroups() != 1 || groups.getGroupSize() != ranks)
    return false;
  for (auto [position, rank] : llvm::enumerate(groups.getGroup(0)))
    if (rank != int64_t(position))
      return false;
  return true;
}

/// Whether `op` can take `form` on `cluster`.
bool applies(AllReduceOp op, Form form, const ClusterShape &cluster) {
  RankedTensorType type = op.getInput().getType();
  if (!type.hasStaticShape() || type.getRank() == 0)
    return false;
  int64_t rows = type.getDimSize(0);
  // An integer average taken per node and then across nodes rounds twice.
  if (form == Form::hierarchical)
    return cluster.nodes > 1 && cluster.perNode > 1 &&
           spansAllInOrder(op.getReplicaGroupsAttr(), cluster.ranks()) &&
           rows % cluster.perNode == 0 &&
           (op.getReduction() != ReductionKind::avg ||
            isa<FloatType>(type.getElementType()));
  // The flat form's reduce_scatter and all_gather run over the same
  // groups, which must be blocks (the inner all_reduce of a hierarchical
  // form, between nodes, is not) that cover every rank of the cluster.
  ReplicaGroupsAttr groups = op.getReplicaGroupsAttr();
  if (groups &&
      (!groups.isBlocks() || !cluster.nodes ||
       groups.getNumGroups() * groups.getGroupSize() != cluster.ranks()))
    return false;
  std::optional<int64_t> size = op.getStaticGroupSize();
  if (!size && !groups && cluster.nodes)
    size = cluster.ranks();
  return size && *size > 1 && rows % *size == 0;
}

/// Rewrites `op` in `form` (which applies()).
void decompose(AllReduceOp op, Form form, const ClusterShape &cluster) {
  OpBuilder b(op);
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  RankedTensorType type = op.getInput().getType();
  ReplicaGroupsAttr inner = op.getReplicaGroupsAttr(), outer;
  int64_t innerSize;
  if (form == Form::hierarchical) {
    inner = makeGroups(context, cluster.nodes, cluster.perNode, false);
    outer = makeGroups(context, cluster.perNode, cluster.nodes, true);
    innerSize = cluster.perNode;
  } else {
    innerSize = op.getStaticGroupSize().value_or(cluster.ranks());
  }
  SmallVector<int64_t> shardShape(type.getShape());
  shardShape[0] /= innerSize;
  auto shardType = RankedTensorType::get(shardShape, type.getElementType());
  Value shard = ReduceScatterOp::create(b, loc, shardType,
                                        op.getReductionAttr(), op.getInput(),
                                        b.getI64IntegerAttr(0), inner);
  if (outer)
    shard = AllReduceOp::create(b, loc, op.getReductionAttr(), shard, outer);
  Value gathered = AllGatherOp::create(b, loc, type, shard,
                                       b.getI64IntegerAttr(0), inner);
  op.getResult().replaceAllUsesWith(gathered);
  op->erase();
}

/// The positions in `block` of its synchronous all_reduces that some form
/// applies to.
SmallVector<int64_t> candidatePositions(Block &block,
                                        const ClusterShape &cluster) {
  SmallVector<int64_t> positions;
  for (auto [index, op] : llvm::enumerate(block))
    if (auto allReduce = dyn_cast<AllReduceOp>(op))
      if (applies(allReduce, Form::flat, cluster) ||
          applies(allReduce, Form::hierarchical, cluster))
        positions.push_back(index);
  return positions;
}

struct BraidDecomposeCollectivesPass
    : braid::impl::BraidDecomposeCollectivesPassBase<
          BraidDecomposeCollectivesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ProgramPredictor> predictor = ProgramPredictor::forModule(module);
    if (failed(predictor))
      return signalPassFailure();
    ClusterShape cluster;
    if (auto attr = module->getAttrOfType<ClusterAttr>(
            BraidDialect::kClusterAttrName)) {
      cluster.nodes = attr.getNodes();
      cluster.perNode = attr.getRanksPerNode();
    }
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      // One all_reduce at a time, in program order; a decomposed one
      // leaves the candidates (its inner all_reduce is not full-size).
      auto alternativesAt = [&](int64_t position) {
        auto rewriteAs = [&, position](Form form) -> FunctionRewrite {
          return [&, position, form](func::FuncOp copy) -> FailureOr<bool> {
            auto op = cast<AllReduceOp>(opAt(copy, position));
            if (!applies(op, form, cluster))
              return false;
            decompose(op, form, cluster);
            return true;
          };
        };
        return SmallVector<FunctionRewrite>{rewriteAs(Form::hierarchical),
                                            rewriteAs(Form::flat)};
      };
      auto record = [&](int64_t position, RewriteOutcome outcome) {
        if (outcome != RewriteOutcome::applied) {
          ++numRejected;
          return;
        }
        // What the kept program has where the all_reduce stood.
        Operation *first = opAt(func, position);
        bool hierarchical = isa<ReduceScatterOp>(first) &&
                            isa<AllReduceOp>(first->getNextNode());
        ++(hierarchical ? numHierarchical : numFlat);
      };
      if (failed(rewriteEachCandidate(
              func, *predictor, force,
              [&](Block &block) { return candidatePositions(block, cluster); },
              alternativesAt, record)))
        return signalPassFailure();
    }
  }
};
} // namespace
