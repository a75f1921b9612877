//===- ScheduleBuilder.cpp - Schedules from Braid programs ----------------===//
//
// This file costs each op of a Braid function with the cost model and lays
// the ops out on per-rank streams for the simulator.
//
//===----------------------------------------------------------------------===//

#include "braid/Sim/ScheduleBuilder.h"

#include "braid/Sim/ProgramShapes.h"

#include "braid/Cost/CostModel.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::sim;
using cluster::HardwareDesc;

namespace {
/// The cost of one op on one rank.
struct OpCost {
  OpKind kind = OpKind::compute;
  double timeUs = 0;
  double memoryBoundFraction = 0;
  double memoryGBps = 0;
  bool async = false; // a `_start`: runs on the comm stream
  StringRef category;
};

std::optional<double> staticBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  return double(tensor.getNumElements()) *
         std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

int64_t elementBytes(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (auto token = dyn_cast<TokenType>(type))
    element = getElementTypeOrSelf(token.getValueType());
  if (auto complex = dyn_cast<ComplexType>(element))
    return 2 * elementBytes(complex.getElementType());
  // An index is 64 bits on every target Braid lowers to; so is any other
  // element a tensor may hold (none that Braid's ops make).
  if (!element.isIntOrFloat())
    return 8;
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

StringRef dtypeOf(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isBF16())
    return "bf16";
  if (element.isF16())
    return "f16";
  return "f32";
}

cost::CollectiveKind collectiveKind(Operation *op) {
  return TypeSwitch<Operation *, cost::CollectiveKind>(op)
      .Case<AllReduceOp, AllReduceStartOp>(
          [](auto) { return cost::CollectiveKind::all_reduce; })
      .Case<AllGatherOp, AllGatherStartOp>(
          [](auto) { return cost::CollectiveKind::all_gather; })
      .Case<ReduceScatterOp, ReduceScatterStartOp>(
          [](auto) { return cost::CollectiveKind::reduce_scatter; })
      .Case<AllToAllOp, AllToAllStartOp>(
          [](auto) { return cost::CollectiveKind::all_to_all; })
      .Default([](Operation *) { return cost::CollectiveKind::broadcast; });
}

/// What an exchange carries, for the breakdown: the routed indices and
/// their lengths (read by a shard lookup), the pooled rows (read by
/// combine_shards, directly, through a wait or a second level), the
/// gradients a training step exchanges (read by an embedding update or an
/// optimizer step, directly or unpacked from a bucket), a tensor-parallel
/// layer's activations (made by one or read by one), or anything else.
StringRef exchangeCategory(Operation *op) {
  // The parameters sharded optimizer steps updated, gathered back (packed
  // into a bucket or not).
  SmallVector<Value> producers;
  if (op->getNumOperands() > 0)
    producers.push_back(op->getOperand(0));
  for (int depth = 0; depth < 4 && !producers.empty(); ++depth) {
    SmallVector<Value> next;
    for (Value value : producers) {
      Operation *def = value.getDefiningOp();
      if (isa_and_nonnull<DenseUpdateOp, FusedDenseUpdateOp>(def))
        return "dense_parameter_all_gather";
      // A tensor-parallel layer's output (its partial sums, or its column
      // block set among zeros).
      if (auto linear = dyn_cast_or_null<LinearOp>(def))
        if (DensePlacementAttr placement = linear.getPlacementAttr())
          if (placement.getParallelism() != DenseParallelism::data_parallel)
            return "tensor_parallel_activations";
      if (isa_and_nonnull<tensor::ConcatOp, tensor::ExpandShapeOp,
                          tensor::CollapseShapeOp, tensor::InsertSliceOp>(def))
        llvm::append_range(next, def->getOperands());
    }
    producers = std::move(next);
  }
  // A value widened after a 16-bit exchange (braid-exchange-precision) is
  // read through its arith.extf, which costs no level.
  auto throughWidening = [](SmallVector<Operation *> ops) {
    SmallVector<Operation *> readers;
    for (Operation *reader : ops) {
      if (isa<arith::ExtFOp>(reader))
        llvm::append_range(readers, reader->getUsers());
      else
        readers.push_back(reader);
    }
    return readers;
  };
  SmallVector<Operation *> frontier =
      throughWidening(llvm::to_vector(op->getUsers()));
  for (int depth = 0; depth < 4 && !frontier.empty(); ++depth) {
    // The forward pass's readers first: a training step's update also
    // reads the routed indices.
    if (llvm::any_of(frontier, llvm::IsaPred<ShardEmbeddingBagOp>))
      return "index_exchange";
    if (llvm::any_of(frontier, llvm::IsaPred<CombineShardsOp>))
      return "output_exchange";
    if (llvm::any_of(frontier, llvm::IsaPred<ShardEmbeddingBagUpdateOp,
                                             EmbeddingBagUpdateOp,
                                             TableUpdateOp>))
      return "embedding_gradient_exchange";
    if (llvm::any_of(frontier,
                     llvm::IsaPred<DenseUpdateOp, FusedDenseUpdateOp>))
      return "dense_gradient_all_reduce";
    // A tensor-parallel layer's activations (or their gradients).
    if (llvm::any_of(frontier, llvm::IsaPred<LinearOp, LinearGradOp>))
      return "tensor_parallel_activations";
    SmallVector<Operation *> next;
    for (Operation *user : frontier)
      if (isa<WaitOp, AllToAllOp, AllToAllStartOp, ReduceScatterOp,
              ReduceScatterStartOp, arith::CmpFOp, arith::SelectOp,
              tensor::ExtractSliceOp, tensor::ExpandShapeOp,
              tensor::CollapseShapeOp, tensor::CastOp>(user))
        llvm::append_range(next, user->getUsers());
    frontier = throughWidening(std::move(next));
  }
  return "other_comm";
}

/// The rows of `table` that `rank` holds and the widest of its shards'
/// columns (0 and 0 where it holds none).
std::pair<int64_t, int64_t> rankPartOf(TableOp table, int64_t rank) {
  int64_t rows = 0, cols = 0;
  if (TablePlacementAttrInterface placement = table.getPlacementAttr())
    for (const TableShard &part :
         placement.getShards(table.getNumRows(), table.getDim()))
      if (part.rank == rank) {
        rows += part.rows;
        cols = std::max(cols, part.cols);
      }
  return {rows, cols};
}

/// Costs the ops of one function rank by rank.
class ProgramCoster {
public:
  ProgramCoster(const HardwareDesc &hw, int64_t numRanks, int64_t ranksPerNode,
                RoutingTable &routing)
      : hw(hw), numRanks(numRanks), ranksPerNode(ranksPerNode),
        routing(routing) {}

  FailureOr<OpCost> costOf(Operation &op, const ProgramShapes &shapes,
                           int64_t rank);

private:
  OpCost kernel(cost::KernelEstimate estimate, StringRef category) {
    OpCost cost;
    cost.timeUs = estimate.timeUs;
    cost.memoryBoundFraction = estimate.memoryBoundFraction;
    cost.category = category;
    return cost;
  }
  OpCost comm(double timeUs, double memoryGBps, bool async,
              StringRef category) {
    OpCost cost;
    cost.kind = OpKind::comm;
    cost.timeUs = timeUs;
    cost.memoryGBps = memoryGBps;
    cost.async = async;
    cost.category = category;
    return cost;
  }
  /// The nodes the group of `rank` spans.
  int64_t nodesOfGroup(ReplicaGroupsAttr groups, int64_t rank) const;
  /// The hardware as one of several groups that cross nodes at once sees
  /// it: the groups with a member on `rank`'s node share its NICs (the
  /// all_reduces between nodes of a hierarchical decomposition, one per
  /// position on the node, each get one NIC of a rail-optimized node);
  /// nothing when the groups share no NICs, the common case.
  std::optional<HardwareDesc> withSharedNics(ReplicaGroupsAttr groups,
                                             int64_t rank) const;
  /// An exchange over all ranks of `perPair` i64 counts between every pair.
  double countExchangeUs(int64_t perPair) const {
    std::vector<double> bytes(numRanks * numRanks, 8.0 * double(perPair));
    return cost::estimateAllToAllvUs(hw, bytes, numRanks, ranksPerNode);
  }
  /// The most bytes one rank sends and receives in an exchange whose
  /// `sendBytes` are row-major R x R.
  double busiestRankBytes(ArrayRef<double> sendBytes) const;
  /// Adds what `bucketize` routes between every pair of ranks, elements of
  /// `elementBytes`, to `sendBytes` (row-major R x R).
  void addRouted(BucketizeOp bucketize, const ProgramShapes &shapes,
                 double elementBytes, MutableArrayRef<double> sendBytes) const;
  /// An uneven exchange over all ranks, `sendBytes` row-major R x R.
  OpCost unevenExchange(ArrayRef<double> sendBytes, bool async,
                        StringRef category);

  const HardwareDesc &hw;
  int64_t numRanks, ranksPerNode;
  RoutingTable &routing;
  /// Exchanges whose cost does not depend on the rank, costed once.
  llvm::DenseMap<Operation *, OpCost> sharedCosts;
  /// Each collective's breakdown category, found once.
  llvm::DenseMap<Operation *, StringRef> categories;
};
} // namespace

int64_t ProgramCoster::nodesOfGroup(ReplicaGroupsAttr groups,
                                    int64_t rank) const {
  std::set<int64_t> nodes;
  ArrayRef<int64_t> members;
  if (groups)
    for (int64_t g = 0; g < groups.getNumGroups(); ++g)
      if (llvm::is_contained(groups.getGroup(g), rank))
        members = groups.getGroup(g);
  if (!members.empty())
    for (int64_t member : members)
      nodes.insert(member / ranksPerNode);
  else
    for (int64_t r = 0; r < numRanks; ++r)
      nodes.insert(r / ranksPerNode);
  return std::max<int64_t>(1, nodes.size());
}

std::optional<HardwareDesc>
ProgramCoster::withSharedNics(ReplicaGroupsAttr groups, int64_t rank) const {
  if (!groups || groups.getNumGroups() < 2)
    return std::nullopt;
  int64_t node = rank / ranksPerNode, sharing = 0;
  for (int64_t g = 0; g < groups.getNumGroups(); ++g) {
    bool here = false, elsewhere = false;
    for (int64_t member : groups.getGroup(g)) {
      here = here || member / ranksPerNode == node;
      elsewhere = elsewhere || member / ranksPerNode != node;
    }
    sharing += here && elsewhere;
  }
  if (sharing < 2)
    return std::nullopt;
  HardwareDesc shared = hw;
  double nics = double(hw.interNode.nicsPerNode) / double(sharing);
  shared.interNode.nicsPerNode = std::max<int64_t>(1, int64_t(nics));
  if (nics < 1)
    shared.interNode.nicBandwidthGBps *= nics;
  return shared;
}

double ProgramCoster::busiestRankBytes(ArrayRef<double> sendBytes) const {
  double busiest = 0;
  for (int64_t r = 0; r < numRanks; ++r) {
    double moved = 0;
    for (int64_t j = 0; j < numRanks; ++j)
      moved += sendBytes[r * numRanks + j] + sendBytes[j * numRanks + r];
    busiest = std::max(busiest, moved);
  }
  return busiest;
}

void ProgramCoster::addRouted(BucketizeOp bucketize,
                              const ProgramShapes &shapes, double elementBytes,
                              MutableArrayRef<double> sendBytes) const {
  for (int64_t from = 0; from < numRanks; ++from)
    for (int64_t to = 0; to < numRanks; ++to)
      sendBytes[from * numRanks + to] +=
          shapes.routed(bucketize, from, to) * elementBytes;
}

OpCost ProgramCoster::unevenExchange(ArrayRef<double> sendBytes, bool async,
                                     StringRef category) {
  double timeUs =
      cost::estimateAllToAllvUs(hw, sendBytes, numRanks, ranksPerNode);
  // The memory traffic of the busiest rank: what it sends and receives.
  double busiest = busiestRankBytes(sendBytes);
  return comm(timeUs, timeUs > 0 ? busiest / timeUs * 1e-3 : 0, async,
              category);
}

/// Kernels that run one after the other, as one estimate: their times add,
/// and the share bound by memory is their times' weighted share.
static cost::KernelEstimate
inSequence(ArrayRef<cost::KernelEstimate> kernels) {
  cost::KernelEstimate sum;
  double memoryBoundUs = 0;
  for (const cost::KernelEstimate &kernel : kernels) {
    sum.timeUs += kernel.timeUs;
    memoryBoundUs += kernel.timeUs * kernel.memoryBoundFraction;
  }
  sum.memoryBoundFraction = sum.timeUs > 0 ? memoryBoundUs / sum.timeUs : 0;
  return sum;
}

/// Whether `op` is elementwise arithmetic on tensors of one shape: a kernel
/// of its own, with identity maps, once convert-elementwise-to-linalg has
/// made it a linalg.generic (a scalar operand, such as a select's
/// condition, is broadcast, and braid-fuse-elementwise-kernels leaves it).
static bool isTensorElementwiseArith(Operation *op) {
  if (!op || !isa<arith::ArithDialect>(op->getDialect()) ||
      !op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1)
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return result && llvm::all_of(op->getOperandTypes(), [&](Type type) {
           auto operand = dyn_cast<RankedTensorType>(type);
           return operand && operand.getShape() == result.getShape();
         });
}

/// Whether the backends fuse `op` into the kernel of its only reader
/// (braid-fuse-elementwise-kernels): elementwise arithmetic read by one
/// elementwise arithmetic op, once or more (the fusion patterns merge a
/// reader's repeated inputs first), and otherwise only for its sizes.
static bool fusesIntoItsReader(Operation *op) {
  if (!isTensorElementwiseArith(op))
    return false;
  Operation *reader = nullptr;
  for (Operation *user : op->getResult(0).getUsers()) {
    if (isa<tensor::DimOp>(user))
      continue;
    if (reader && reader != user)
      return false;
    reader = user;
  }
  return isTensorElementwiseArith(reader) &&
         reader->getBlock() == op->getBlock();
}

/// The values an elementwise chain's kernel reads, each once: the operands
/// of `op` and of the producers fused into it.
static void collectChainInputs(Operation *op, SetVector<Value> &inputs) {
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (def && fusesIntoItsReader(def))
      collectChainInputs(def, inputs);
    else
      inputs.insert(operand);
  }
}

/// Bytes per output element that the CPU runtime's dense layers move besides
/// the one write of the product that estimateGemm counts. braid.linear
/// (runtime/lib/Compiled.cpp) fills its output with the bias, multiplies
/// into it (OpenBLAS reads it back for beta = 1) and applies the activation
/// in a pass of its own. linear_grad (runtime/lib/Training.cpp) zeroes both
/// gradients, OpenBLAS zeroes them again for beta = 0 (BETA_OPERATION,
/// driver/level3/level3.c) and reads them back as its kernel accumulates.
/// A GPU's GEMM writes its output once, its epilogue fused.
static double cpuLinearPassBytes(Activation activation) {
  return 4 /*bias fill*/ + 4 /*read back*/ +
         (activation == Activation::none ? 0 : 8 /*activation pass*/);
}
/// braid.linear on `rows` rows: its GEMM, and on a CPU the runtime's passes.
static cost::KernelEstimate linearEstimate(const HardwareDesc &hw,
                                           LinearOp linear, int64_t rows) {
  auto input = linear.getInput().getType();
  int64_t out = linear.getWeight().getType().getDimSize(0);
  cost::KernelEstimate gemm = cost::estimateGemm(
      hw, rows, out, input.getDimSize(1), dtypeOf(input));
  if (hw.device.arch != cluster::Arch::cpu)
    return gemm;
  return inSequence({gemm, cost::estimateElementwise(
                               hw, double(rows) * out *
                                       cpuLinearPassBytes(
                                           linear.getActivation()))});
}
constexpr double kCpuLinearGradPassBytes =
    4 /*runtime's fill*/ + 4 /*BLAS's beta = 0*/ + 4 /*read back*/;

FailureOr<OpCost> ProgramCoster::costOf(Operation &op,
                                        const ProgramShapes &shapes,
                                        int64_t rank) {
  if (auto linear = dyn_cast<LinearOp>(op)) {
    auto input = linear.getInput().getType();
    auto weight = linear.getWeight().getType();
    if (!weight.hasStaticShape() || input.isDynamicDim(1))
      return linear.emitError() << "braid-sim needs static weights and "
                                   "features";
    return kernel(
        linearEstimate(hw, linear,
                       int64_t(std::ceil(shapes.rows(linear.getInput())))),
        "dense");
  }
  if (isa<EmbeddingBagOp, ShardEmbeddingBagOp>(op)) {
    TableOp table = routing.tableOf(&op);
    if (!table)
      return op.emitError() << "braid-sim needs the looked-up table";
    cost::EmbeddingBagShape shape;
    shape.elementBytes = elementBytes(table.getElementType());
    shape.dim = table.getDim();
    shape.rows = table.getNumRows();
    if (auto ratio = table.getUniqueRatio())
      shape.uniqueRatio = ratio->convertToDouble();
    double indices;
    if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
      shape.bags = int64_t(std::ceil(shapes.rows(bag.getResult())));
      indices = shapes.elements(bag.getIndices());
    } else {
      auto shard = cast<ShardEmbeddingBagOp>(op);
      shape.bags = int64_t(std::ceil(shapes.rows(shard.getLengths())));
      indices = shapes.elements(shard.getValues());
      // This rank's part of the table.
      std::tie(shape.rows, shape.dim) = rankPartOf(table, rank);
      if (!shape.rows) {
        // No shard here: the kernel only fills its empty partials.
        double bytes = shapes.elements(shard.getResult()) *
                       elementBytes(shard.getResult().getType());
        return kernel(cost::estimateElementwise(hw, bytes), "lookup");
      }
    }
    shape.poolingFactor = shape.bags ? indices / shape.bags : 0;
    return kernel(cost::estimateEmbeddingBag(hw, shape), "lookup");
  }
  if (auto grad = dyn_cast<LinearGradOp>(op)) {
    // Two GEMMs, the input's gradient (g w) and the weight's (g^T x), and
    // the activation's gradient on the way in (on a CPU, with the runtime's
    // passes over the two gradients).
    auto input = grad.getInput().getType();
    auto weight = grad.getWeight().getType();
    if (!weight.hasStaticShape() || input.isDynamicDim(1))
      return grad.emitError() << "braid-sim needs static weights and "
                                 "features";
    int64_t batch = int64_t(std::ceil(shapes.rows(grad.getInput())));
    int64_t out = weight.getDimSize(0), in = weight.getDimSize(1);
    // A gradient nothing reads is not computed (one part of a split
    // linear_grad, braid-defer-weight-gradients).
    bool inputRead = !grad.getInputGrad().use_empty();
    bool weightRead = !grad.getWeightGrad().use_empty();
    SmallVector<cost::KernelEstimate> parts;
    if (inputRead)
      parts.push_back(cost::estimateGemm(hw, batch, in, out, dtypeOf(input)));
    if (weightRead)
      parts.push_back(cost::estimateGemm(hw, out, in, batch, dtypeOf(input)));
    double passBytes = 3 * shapes.elements(grad.getResultGrad()) * 4;
    if (hw.device.arch == cluster::Arch::cpu)
      passBytes += (double(batch) * in * inputRead +
                    double(out) * in * weightRead) *
                   kCpuLinearGradPassBytes;
    parts.push_back(cost::estimateElementwise(hw, passBytes));
    return kernel(inSequence(parts), "dense");
  }
  if (isa<ShardEmbeddingBagUpdateOp, EmbeddingBagUpdateOp>(op)) {
    // The backward of a lookup fused with the optimizer: each looked-up row
    // read and written once (a lookup's gather, twice the bytes) with its
    // optimizer state, plus the pooled gradient read.
    TableOp table = routing.tableOf(&op);
    if (!table)
      return op.emitError() << "braid-sim needs the updated table";
    auto optimizer = op.getAttrOfType<DictionaryAttr>("optimizer");
    StringRef type = optimizer ? optimizer.getAs<StringAttr>("type").getValue()
                               : StringRef("sgd");
    cost::EmbeddingBagShape shape;
    shape.dim = table.getDim();
    shape.rows = table.getNumRows();
    if (auto ratio = table.getUniqueRatio())
      shape.uniqueRatio = ratio->convertToDouble();
    double indices, bags;
    if (auto whole = dyn_cast<EmbeddingBagUpdateOp>(op)) {
      bags = shapes.rows(whole.getOffsets()) - 1;
      indices = shapes.elements(whole.getIndices());
    } else {
      auto shard = cast<ShardEmbeddingBagUpdateOp>(op);
      bags = shapes.rows(shard.getLengths());
      indices = shapes.elements(shard.getValues());
      std::tie(shape.rows, shape.dim) = rankPartOf(table, rank);
      if (!shape.rows)
        return OpCost{};
    }
    double rowBytes = 2.0 * elementBytes(table.getElementType());
    if (type == "adagrad")
      rowBytes += 8; // the state, read and written per element
    else if (type == "rowwise_adagrad")
      rowBytes += 8.0 / std::max<int64_t>(1, shape.dim);
    shape.elementBytes = int64_t(std::ceil(rowBytes));
    shape.bags = int64_t(std::ceil(bags));
    shape.poolingFactor = bags > 0 ? indices / bags : 0;
    cost::KernelEstimate update = cost::estimateEmbeddingBag(hw, shape);
    // On a CPU the runtime runs the update (runtime/lib/Training.cpp): but
    // for SGD on sum or mean bags, which moves each row by each entry's share,
    // it first sums every distinct row's gradient into a buffer appended
    // slot by slot (zeroed and accumulated, a write and its read for
    // ownership), which the optimizer's pass reads back: three streams of
    // the accumulator's bytes (f32 for f32 tables, f64 for 16-bit ones).
    auto mode = op.getAttrOfType<PoolingModeAttr>("mode");
    bool sums = type != "sgd" || (mode && mode.getValue() == PoolingMode::max);
    if (hw.device.arch == cluster::Arch::cpu && sums) {
      double distinct = std::min(indices * shape.uniqueRatio, double(shape.rows));
      double accumulator = table.getElementType().isF32() ? 4.0 : 8.0;
      update = inSequence(
          {update, cost::estimateElementwise(
                       hw, 3 * distinct * double(shape.dim) * accumulator)});
    }
    return kernel(update, "embedding_update");
  }
  if (isa<EmbeddingBagGradOp, TableUpdateOp, DenseUpdateOp>(op)) {
    // Streaming over a replicated table's whole gradient (filled, then
    // read by the update with the table and its state), or over a dense
    // parameter, its gradient and its optimizer state.
    double bytes = 0;
    for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
      if (isa<RankedTensorType>(value.getType()))
        bytes += shapes.elements(value) * elementBytes(value.getType());
    if (isa<TableUpdateOp>(op))
      if (TableOp table = routing.tableOf(&op))
        bytes += 2.0 * double(table.getNumRows()) * table.getDim() *
                 elementBytes(table.getElementType());
    return kernel(cost::estimateElementwise(hw, bytes),
                  isa<DenseUpdateOp>(op) ? "optimizer" : "embedding_update");
  }
  // One kernel for a bucket's optimizer steps: every member's parameter,
  // state and results, and its gradient's elements of the bucket (not the
  // rest of it).
  if (auto fused = dyn_cast<FusedDenseUpdateOp>(op)) {
    double bytes = 0;
    for (Value value : llvm::concat<Value>(fused.getParams(), fused.getState(),
                                           fused->getResults()))
      bytes += shapes.elements(value) * elementBytes(value.getType());
    for (Value param : fused.getParams())
      bytes += shapes.elements(param) * elementBytes(param.getType());
    return kernel(cost::estimateElementwise(hw, bytes), "optimizer");
  }
  // A range of bags: its indices are a view, its offsets a rebased copy.
  if (auto slice = dyn_cast<SliceBagsOp>(op))
    return kernel(cost::estimateElementwise(
                      hw, 2 * shapes.elements(slice.getResultOffsets()) *
                              elementBytes(slice.getResultOffsets().getType())),
                  "routing");
  if (isa<BucketizeOp, CombineShardsOp, CombineShardsGradOp>(op)) {
    double bytes = 0;
    for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
      bytes += shapes.elements(value) * elementBytes(value.getType());
    return kernel(cost::estimateElementwise(hw, bytes), "routing");
  }
  if (isa<AllToAllVOp, AllToAllVStartOp>(op)) {
    auto [it, inserted] = sharedCosts.try_emplace(&op);
    if (!inserted)
      return it->second;
    Value input = op.getOperand(0);
    auto bucketize = input.getDefiningOp<BucketizeOp>();
    if (!bucketize)
      return op.emitError() << "braid-sim needs the counts of all_to_all_v "
                               "from braid.bucketize";
    std::vector<double> sendBytes(numRanks * numRanks, 0.0);
    addRouted(bucketize, shapes, elementBytes(input.getType()), sendBytes);
    // The start form moves the data on the communication stream, after
    // each rank has learnt what it receives (an exchange of one count per
    // pair of ranks, as every backend runs it).
    OpCost cost =
        unevenExchange(sendBytes, isa<AllToAllVStartOp>(op), "index_exchange");
    cost.timeUs += countExchangeUs(1);
    return it->second = cost;
  }
  if (auto fused = dyn_cast<FusedAllToAllVStartOp>(op)) {
    auto [it, inserted] = sharedCosts.try_emplace(&op);
    if (!inserted)
      return it->second;
    // One exchange of every member's values (as its wire type, when it
    // has one)...
    std::vector<double> sendBytes(numRanks * numRanks, 0.0);
    double bytes = elementBytes(fused.getInputs().front().getType());
    double wireBytes = bytes;
    if (std::optional<Type> wire = fused.getWireType())
      wireBytes = std::max(1u, wire->getIntOrFloatBitWidth() / 8);
    for (Value input : fused.getInputs()) {
      auto bucketize = input.getDefiningOp<BucketizeOp>();
      if (!bucketize)
        return op.emitError() << "braid-sim needs the counts of "
                                 "fused_all_to_all_v_start from braid.bucketize";
      addRouted(bucketize, shapes, wireBytes, sendBytes);
    }
    OpCost cost = unevenExchange(sendBytes, /*async=*/true, "index_exchange");
    // ...after one exchange of their counts, a ranks x members matrix, and
    // the all_to_all_v's own of the summed counts...
    cost.timeUs += countExchangeUs(fused.getInputs().size()) + countExchangeUs(1);
    // ...with the values packed by destination and unpacked by member (a
    // copy each of what the busiest rank sends and receives, which reads
    // one width and writes the other where the wire is narrower).
    cost.timeUs += cost::estimateElementwise(
                       hw, busiestRankBytes(sendBytes) * (bytes + wireBytes) /
                               wireBytes)
                       .timeUs;
    return it->second = cost;
  }
  if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
    RankedTensorType inType = collective.getInput().getType();
    double rowBytes = elementBytes(inType);
    for (int64_t d = 1; d < inType.getRank(); ++d)
      rowBytes *= inType.getDimSize(d);
    cost::CollectiveKind kind = collectiveKind(&op);
    // What it carries follows from its users: the same on every rank.
    auto [known, inserted] = categories.try_emplace(&op);
    if (inserted)
      known->second = exchangeCategory(&op);
    StringRef category = known->second;
    ReplicaGroupsAttr groups = collective.getReplicaGroupsAttr();
    int64_t groupSize = collective.getStaticGroupSize().value_or(numRanks);
    // A rank in no group takes no part: nothing to wait for or carry.
    if (groups && llvm::none_of(llvm::seq<int64_t>(0, groups.getNumGroups()),
                                [&](int64_t g) {
                                  return llvm::is_contained(groups.getGroup(g),
                                                            rank);
                                }))
      return comm(0, 0, collective.isAsync(), category);
    // An uneven all_to_all over every rank: its split_sizes are the matrix.
    auto sizes = op.getAttrOfType<DenseI64ArrayAttr>("split_sizes");
    if (kind == cost::CollectiveKind::all_to_all && sizes &&
        groupSize == numRanks &&
        (!groups || (groups.getNumGroups() == 1 &&
                     llvm::all_of(groups.getGroup(0), [&](int64_t rank) {
                       return rank >= 0 && rank < numRanks;
                     })))) {
      auto [it, inserted] = sharedCosts.try_emplace(&op);
      if (!inserted)
        return it->second;
      // Group position i is rank groups[i] (or i).
      std::vector<double> sendBytes(numRanks * numRanks);
      for (int64_t i = 0; i < numRanks; ++i)
        for (int64_t j = 0; j < numRanks; ++j) {
          int64_t from = groups ? groups.getGroup(0)[i] : i;
          int64_t to = groups ? groups.getGroup(0)[j] : j;
          sendBytes[from * numRanks + to] = sizes[i * numRanks + j] * rowBytes;
        }
      return it->second =
                 unevenExchange(sendBytes, collective.isAsync(), category);
    }
    double inBytes = shapes.elements(collective.getInput()) *
                     elementBytes(inType);
    double outBytes = shapes.elements(op.getResult(0)) *
                      elementBytes(collective.getResultTensorType());
    double bytes = kind == cost::CollectiveKind::all_gather ? outBytes
                                                            : inBytes;
    std::optional<HardwareDesc> shared = withSharedNics(groups, rank);
    cost::CollectiveEstimate estimate =
        cost::estimateCollective(shared ? *shared : hw, kind, bytes, groupSize,
                                 nodesOfGroup(groups, rank));
    return comm(estimate.timeUs, cost::collectiveMemoryGBps(estimate),
                collective.isAsync(), category);
  }
  if (auto permute = dyn_cast<PermuteOp>(op)) {
    double bytes = shapes.elements(permute.getInput()) *
                   elementBytes(permute.getInput().getType());
    // One send and one receive per rank: a broadcast-sized transfer.
    cost::CollectiveEstimate estimate = cost::estimateCollective(
        hw, cost::CollectiveKind::broadcast, bytes, 2,
        numRanks > ranksPerNode ? 2 : 1);
    return comm(estimate.timeUs, cost::collectiveMemoryGBps(estimate), false,
                "other_comm");
  }
  // Reshapes and slices are views of their source once bufferized (a
  // bucket's members, unpacked).
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
          tensor::ExtractSliceOp, tensor::CastOp>(op))
    return OpCost{};
  // A size is the tensor's metadata: reading it moves no data.
  if (isa<tensor::DimOp>(op))
    return OpCost{};
  // A chain of elementwise arithmetic is one kernel that reads the chain's
  // inputs and writes its last result: the ops fused into their reader cost
  // nothing of their own.
  if (isTensorElementwiseArith(&op)) {
    if (fusesIntoItsReader(&op))
      return OpCost{};
    SetVector<Value> inputs;
    collectChainInputs(&op, inputs);
    double bytes = shapes.elements(op.getResult(0)) *
                   elementBytes(op.getResult(0).getType());
    for (Value input : inputs)
      if (isa<RankedTensorType>(input.getType()))
        bytes += shapes.elements(input) * elementBytes(input.getType());
    return kernel(cost::estimateElementwise(hw, bytes), "dense");
  }
  if (isa<InteractionOp, InteractionGradOp, BceWithLogitsOp>(op) ||
      op.getDialect()->getNamespace() == "arith" ||
      op.getDialect()->getNamespace() == "tensor") {
    if (isa<arith::ConstantOp>(op) || op.getNumResults() == 0)
      return OpCost{};
    double bytes = 0;
    for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
      if (isa<RankedTensorType>(value.getType()))
        bytes += shapes.elements(value) * elementBytes(value.getType());
    // Scalar index arithmetic (a rank's offset) runs on the host.
    if (bytes == 0)
      return OpCost{};
    return kernel(cost::estimateElementwise(hw, bytes), "dense");
  }
  if (isa<RankOp, WorldSizeOp, WaitOp, func::ReturnOp>(op))
    return OpCost{};
  return op.emitError() << "braid-sim cannot cost '" << op.getName() << "'";
}

FailureOr<std::vector<SimOp>>
mlir::braid::sim::buildSchedule(func::FuncOp func, const HardwareDesc &hw,
                                int64_t numRanks, int64_t ranksPerNode) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return func.emitError() << "braid-sim needs a function with one block";
  if (numRanks < 1 || ranksPerNode < 1)
    return func.emitError() << "braid-sim needs at least one rank";
  SmallVector<int64_t> batchSplit;
  if (auto module = func->getParentOfType<ModuleOp>())
    if (auto split = module->getAttrOfType<DenseI64ArrayAttr>(
            BraidDialect::kBatchSplitAttrName))
      llvm::append_range(batchSplit, split.asArrayRef());
  if (!batchSplit.empty() && int64_t(batchSplit.size()) != numRanks)
    return func.emitError()
           << "the program is partitioned for " << batchSplit.size()
           << " ranks, not " << numRanks;
  // Per op of the function, its SimOp index on rank 0; rank r adds r * stride.
  llvm::DenseMap<Operation *, int64_t> indexOf;
  std::vector<Operation *> costed;
  for (Operation &op : func.getBody().front())
    if (!isa<func::ReturnOp>(op)) {
      indexOf[&op] = costed.size();
      costed.push_back(&op);
    }
  int64_t stride = costed.size();
  RoutingTable routing(numRanks);
  ProgramCoster coster(hw, numRanks, ranksPerNode, routing);
  std::vector<SimOp> ops(stride * numRanks);
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    FailureOr<ProgramShapes> shapes =
        ProgramShapes::bind(func, rank, numRanks, batchSplit, routing);
    if (failed(shapes))
      return failure();
    for (int64_t i = 0; i < stride; ++i) {
      Operation *op = costed[i];
      FailureOr<OpCost> cost = coster.costOf(*op, *shapes, rank);
      if (failed(cost))
        return failure();
      SimOp &simOp = ops[rank * stride + i];
      simOp.name = getReportName(op);
      simOp.category = cost->category.str();
      simOp.rank = rank;
      simOp.stream = cost->async ? 1 : 0;
      simOp.kind = cost->kind;
      simOp.durationUs = cost->timeUs;
      // The ranks' skew: compute times spread evenly over
      // mean * (1 +- rankSkew), rank 0 the slowest (Hardware.h).
      if (numRanks > 1 && cost->kind == OpKind::compute && !cost->async &&
          hw.rankSkew > 0)
        simOp.durationUs *=
            1 + hw.rankSkew * (1 - 2.0 * double(rank) / double(numRanks - 1));
      simOp.memoryBoundFraction = cost->memoryBoundFraction;
      simOp.memoryGBps = cost->memoryGBps;
      // Data dependencies on the same rank.
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (auto it = indexOf.find(def); it != indexOf.end())
            simOp.deps.push_back(rank * stride + it->second);
    }
  }
  // The ranks of one replica group run one collective: they start together
  // and each takes as long as the group's slowest member. Groups run
  // independently (a table-row-wise table's intra-node reduce_scatter names
  // only the owner node's ranks); a collective without groups spans every
  // rank.
  int64_t collectiveId = 0;
  for (int64_t i = 0; i < stride; ++i) {
    if (ops[i].kind != OpKind::comm)
      continue;
    SmallVector<SmallVector<int64_t>> groups;
    auto collective = dyn_cast<CollectiveOpInterface>(costed[i]);
    ReplicaGroupsAttr attr =
        collective ? collective.getReplicaGroupsAttr() : ReplicaGroupsAttr();
    std::vector<bool> grouped(numRanks, false);
    if (attr)
      for (int64_t g = 0; g < attr.getNumGroups(); ++g) {
        SmallVector<int64_t> members;
        for (int64_t rank : attr.getGroup(g))
          if (rank >= 0 && rank < numRanks && !grouped[rank]) {
            grouped[rank] = true;
            members.push_back(rank);
          }
        groups.push_back(std::move(members));
      }
    // Without groups every rank is in one; with them, a rank in none runs
    // alone (and costs nothing).
    SmallVector<int64_t> rest;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      if (!grouped[rank]) {
        if (attr)
          groups.push_back({rank});
        else
          rest.push_back(rank);
      }
    if (!rest.empty())
      groups.push_back(std::move(rest));
    for (ArrayRef<int64_t> members : groups) {
      if (members.empty())
        continue;
      double longest = 0;
      for (int64_t rank : members)
        longest = std::max(longest, ops[rank * stride + i].durationUs);
      for (int64_t rank : members) {
        ops[rank * stride + i].collectiveId = collectiveId;
        ops[rank * stride + i].durationUs = longest;
      }
      ++collectiveId;
    }
  }
  return ops;
}

FailureOr<ProgramPrediction>
mlir::braid::sim::simulateProgram(func::FuncOp func, const HardwareDesc &hw,
                                  int64_t numRanks, int64_t ranksPerNode) {
  FailureOr<std::vector<SimOp>> schedule =
      buildSchedule(func, hw, numRanks, ranksPerNode);
  if (failed(schedule))
    return failure();
  llvm::Expected<SimResult> result = simulate(
      *schedule, numRanks,
      [&](double memoryBoundFraction, double commMemoryGBps) {
        return cost::overlapDilation(hw, memoryBoundFraction, commMemoryGBps);
      },
      hw.commRateBesideCompute);
  if (!result)
    return func.emitError() << llvm::toString(result.takeError());
  ProgramPrediction prediction;
  prediction.schedule = std::move(*schedule);
  prediction.result = std::move(*result);
  // The breakdown of the rank that finishes last.
  const SimResult &sim = prediction.result;
  int64_t critical = 0;
  for (int64_t r = 1; r < int64_t(sim.ranks.size()); ++r)
    if (sim.ranks[r].endUs > sim.ranks[critical].endUs)
      critical = r;
  prediction.criticalRank = critical;
  for (size_t i = 0; i < prediction.schedule.size(); ++i) {
    const SimOp &op = prediction.schedule[i];
    if (op.rank != critical || op.category.empty())
      continue;
    prediction.categoryUs[op.category] += sim.endUs[i] - sim.startUs[i];
  }
  return prediction;
}

FailureOr<double> mlir::braid::sim::estimateDenseStageUs(
    func::FuncOp func, const HardwareDesc &hw, int64_t batch, int64_t ranks) {
  if (batch < 1 || ranks < 1)
    return func.emitError() << "the dense stage needs a positive batch and "
                               "rank count";
  int64_t share = (batch + ranks - 1) / ranks;
  double fraction = double(share) / double(batch);
  double totalUs = 0;
  for (Operation &op : func.getBody().getOps()) {
    if (isa<EmbeddingBagOp, func::ReturnOp, arith::ConstantOp>(op))
      continue;
    if (auto linear = dyn_cast<LinearOp>(op)) {
      auto input = linear.getInput().getType();
      auto weight = linear.getWeight().getType();
      if (!input.hasStaticShape() || !weight.hasStaticShape())
        return linear.emitError() << "the dense stage needs static shapes";
      int64_t rows = (input.getDimSize(0) + ranks - 1) / ranks;
      totalUs += linearEstimate(hw, linear, rows).timeUs;
      continue;
    }
    if (isa<InteractionOp>(op) || op.getDialect()->getNamespace() == "arith" ||
        op.getDialect()->getNamespace() == "tensor") {
      double bytes = 0;
      for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
        bytes += staticBytes(value.getType()).value_or(0);
      totalUs += cost::estimateElementwise(hw, bytes * fraction).timeUs;
      continue;
    }
    return op.emitError() << "the dense stage cannot cost '" << op.getName()
                          << "'";
  }
  return totalUs;
}
