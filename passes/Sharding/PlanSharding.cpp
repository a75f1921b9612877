//===- PlanSharding.cpp - The braid-plan-sharding pass --------------------===//
//
// This file implements braid-plan-sharding: it builds the planning problem
// from a module's tables, batch and cluster, runs the chosen planner and
// writes the plan back as placements.
//
//===----------------------------------------------------------------------===//

#include "braid/Sharding/PlanSharding.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Sharding/Passes.h"
#include "braid/Support/BoundedInput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDPLANSHARDINGPASS
#include "braid/Sharding/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

FailureOr<int64_t> mlir::braid::getGlobalBatch(ModuleOp module) {
  std::optional<int64_t> batch;
  Operation *first = nullptr;
  WalkResult walk = module.walk([&](EmbeddingBagOp bag) {
    int64_t bags = bag.getResult().getType().getDimSize(0);
    if (ShapedType::isDynamic(bags)) {
      bag.emitError() << "the global batch must be static, but this bag's "
                         "result has a dynamic number of rows";
      return WalkResult::interrupt();
    }
    if (batch && *batch != bags) {
      InFlightDiagnostic diag = bag.emitError()
                                << "the global batch is ambiguous: " << bags
                                << " bags here";
      diag.attachNote(first->getLoc()) << *batch << " bags here";
      return WalkResult::interrupt();
    }
    batch = bags;
    first = bag;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (batch)
    return *batch;
  for (auto func : module.getOps<func::FuncOp>())
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), "braid.input"))
        if (auto type = dyn_cast<RankedTensorType>(arg.getType());
            type && type.getRank() > 0 && !type.isDynamicDim(0))
          return type.getDimSize(0);
  return module.emitError() << "cannot find the global batch: no embedding "
                               "bag and no statically shaped braid.input";
}

/// The placement attribute of one table's plan.
static Attribute placementAttr(MLIRContext *context, const plan::TablePlan &tp,
                               int64_t ranksPerNode) {
  SmallVector<int64_t> ranks, rowOffsets{0}, colOffsets{0};
  for (const plan::Shard &shard : tp.shards) {
    ranks.push_back(shard.rank);
    rowOffsets.push_back(shard.rowOffset + shard.rows);
    colOffsets.push_back(shard.colOffset + shard.cols);
  }
  switch (tp.type) {
  case plan::ShardingType::table_wise:
    return TableWiseAttr::get(context, ranks.front());
  case plan::ShardingType::row_wise:
    return RowWiseAttr::get(context, ranks, rowOffsets);
  case plan::ShardingType::column_wise:
    return ColumnWiseAttr::get(context, ranks, colOffsets);
  case plan::ShardingType::table_row_wise:
    return TableRowWiseAttr::get(context, ranks.front() / ranksPerNode, ranks,
                                 rowOffsets);
  case plan::ShardingType::data_parallel:
    return DataParallelAttr::get(context, ranks);
  }
  llvm_unreachable("unknown sharding type");
}

/// The sharding type a placement attribute stands for.
static plan::ShardingType shardingTypeOf(Attribute placement) {
  if (isa<TableWiseAttr>(placement))
    return plan::ShardingType::table_wise;
  if (isa<RowWiseAttr>(placement))
    return plan::ShardingType::row_wise;
  if (isa<ColumnWiseAttr>(placement))
    return plan::ShardingType::column_wise;
  if (isa<TableRowWiseAttr>(placement))
    return plan::ShardingType::table_row_wise;
  return plan::ShardingType::data_parallel;
}

/// Fills `result.problem` (hardware, cluster shape, batch, tables) and
/// `result.tables` from `module`, whose braid.cluster is set.
static LogicalResult buildProblem(ModuleOp module, ShardingResult &result,
                                  bool training) {
  auto cluster = module->getAttrOfType<ClusterAttr>(BraidDialect::kClusterAttrName);
  if (!cluster)
    return module.emitError() << "no cluster: give the module a braid.cluster "
                                 "attribute or the pass a cluster";
  llvm::Expected<cluster::HardwareDesc> hw =
      cluster::loadHardware(cluster.getHardware());
  if (!hw)
    return module.emitError() << llvm::toString(hw.takeError());
  plan::PlanProblem &problem = result.problem;
  problem.hw = *hw;
  problem.nodes = cluster.getNodes();
  problem.ranksPerNode = cluster.getRanksPerNode();
  problem.hw.nodes = problem.nodes;
  problem.hw.ranksPerNode = problem.ranksPerNode;
  problem.reserveBytes = plan::defaultReserveBytes(*hw);
  problem.training = training;
  if (auto optimizer = module->getAttrOfType<DictionaryAttr>(
          BraidDialect::kOptimizerAttrName))
    if (auto embedding = optimizer.getAs<DictionaryAttr>("embedding"))
      if (auto type = embedding.getAs<StringAttr>("type"))
        problem.embeddingOptimizer = type.str();
  // A partitioned module records its batch split; a global one has static
  // bags.
  if (auto split = module->getAttrOfType<DenseI64ArrayAttr>(
          BraidDialect::kBatchSplitAttrName)) {
    problem.batch = 0;
    for (int64_t samples : split.asArrayRef())
      problem.batch += samples;
  } else {
    FailureOr<int64_t> batch = getGlobalBatch(module);
    if (failed(batch))
      return failure();
    problem.batch = *batch;
  }
  // The tables some lookup pools by max, in one walk of the module.
  llvm::StringSet<> maxPooled;
  module.walk([&](EmbeddingBagOp lookup) {
    if (lookup.getMode() == PoolingMode::max)
      maxPooled.insert(lookup.getTable());
  });
  for (TableOp op : module.getOps<TableOp>()) {
    plan::TableSpec table;
    table.name = op.getSymName().str();
    table.rows = op.getNumRows();
    table.dim = op.getDim();
    table.elementBytes = op.getElementType().getIntOrFloatBitWidth() / 8;
    table.poolingFactor = op.getPoolingFactor().convertToDouble();
    if (std::optional<APFloat> ratio = op.getUniqueRatio())
      table.uniqueRatio = ratio->convertToDouble();
    table.maxPooled = maxPooled.contains(op.getSymName());
    problem.tables.push_back(table);
    result.tables.push_back(op);
  }
  return success();
}

/// The cost model's name of a dense layer's element type.
static StringRef costDtypeOf(Type element) {
  return element.isBF16() ? "bf16" : element.isF16() ? "f16" : "f32";
}

/// Every braid.linear of the forward pass with a static weight, priced
/// three ways (a training step's copies of the layers are the same ones).
static void priceDenseLayers(ModuleOp module, ShardingResult &result) {
  module.walk([&](LinearOp linear) {
    if (auto func = linear->getParentOfType<func::FuncOp>())
      if (func.getSymName() == "train_step")
        return;
    // A layer braid-split-feature-gemm split in two is listed once, as
    // its late half, which reads the whole weight's columns (a slice, or
    // slices side by side).
    Value param = linear.getWeight();
    if (auto part = linear->getAttrOfType<StringAttr>(
            BraidDialect::kFeaturePartAttrName)) {
      if (part.getValue() == "early")
        return;
      if (auto columns = param.getDefiningOp<tensor::ConcatOp>())
        param = columns.getInputs().front();
    }
    // A tensor-parallel layer of a per-rank program reads a block of the
    // parameter (a slice of it, or the block it is stored as): the layer
    // is the whole parameter's.
    if (auto block = param.getDefiningOp<tensor::ExtractSliceOp>())
      param = block.getSource();
    auto weight = cast<RankedTensorType>(param.getType());
    if (!weight.hasStaticShape())
      return;
    SmallVector<int64_t, 2> shape(weight.getShape());
    if (auto argument = dyn_cast<BlockArgument>(param))
      if (auto func = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp()))
        if (auto groups = func.getArgAttrOfType<ReplicaGroupsAttr>(
                argument.getArgNumber(), BraidDialect::kParamShardAttrName)) {
          auto dim = func.getArgAttrOfType<IntegerAttr>(
              argument.getArgNumber(), BraidDialect::kShardDimAttrName);
          int64_t d = dim ? dim.getInt() : 0;
          if (d >= 0 && d < int64_t(shape.size()))
            shape[d] *= groups.getGroupSize();
        }
    StringRef dtype = costDtypeOf(weight.getElementType());
    int64_t out = shape[0], in = shape[1];
    DenseLayerChoice choice{
        linear, out, in,
        plan::estimateDenseLayer(result.problem, out, in, dtype)};
    if (DensePlacementAttr placement = linear.getPlacementAttr())
      choice.placement =
          stringifyDenseParallelism(placement.getParallelism()).str();
    result.denseLayers.push_back(std::move(choice));
  });
}

/// Places Megatron-style pairs of the forward pass tensor-parallel where
/// the per-layer models price them faster: a `braid.linear` without a
/// placement whose result only feeds another one's input, the second
/// without activation, on a batch and hidden features that divide by the
/// ranks (what braid-partition lays out). A training step places them so
/// only where its tensor-parallel parameters will be stored as blocks
/// (`parameterBlocks`), priced as a whole step: data-parallel layers
/// all-reduce their gradients, stored blocks need no such exchange. Where
/// the parameters stay whole, their gradients are all-reduced whole either
/// way and tensor parallelism would only add the activations' exchanges.
static void placeDenseBlocks(ModuleOp module, const plan::PlanProblem &problem,
                             bool parameterBlocks) {
  int64_t ranks = problem.ranks();
  if ((problem.training && !parameterBlocks) || ranks < 2 ||
      problem.batch % ranks != 0)
    return;
  MLIRContext *context = module.getContext();
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, ranks));
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal())
    return;
  forward.walk([&](LinearOp first) {
    if (first.getPlacementAttr() || !first.getResult().hasOneUse())
      return;
    auto second = dyn_cast<LinearOp>(*first.getResult().getUsers().begin());
    if (!second || second.getInput() != first.getResult() ||
        second.getPlacementAttr() ||
        second.getActivation() != Activation::none)
      return;
    auto w1 = cast<RankedTensorType>(first.getWeight().getType());
    auto w2 = cast<RankedTensorType>(second.getWeight().getType());
    auto input = cast<RankedTensorType>(first.getInput().getType());
    if (!w1.hasStaticShape() || !w2.hasStaticShape() ||
        input.getDimSize(0) != problem.batch ||
        w1.getDimSize(0) % ranks != 0 ||
        !llvm::all_of(ValueRange{first.getWeight(), first.getBias(),
                                 second.getWeight(), second.getBias()},
                      [&](Value v) {
                        auto arg = dyn_cast<BlockArgument>(v);
                        return arg && forward.getArgAttr(
                                          arg.getArgNumber(),
                                          BraidDialect::kParamAttrName);
                      }))
      return;
    StringRef dtype = costDtypeOf(w1.getElementType());
    plan::DenseBlockCost cost = plan::estimateDenseBlock(
        problem, w1.getDimSize(1), w1.getDimSize(0), w2.getDimSize(0), dtype);
    if (problem.training ? cost.trainingTensorParallelUs >=
                               cost.trainingDataParallelUs
                         : cost.tensorParallelUs >= cost.dataParallelUs)
      return;
    first.setPlacementAttr(
        DensePlacementAttr::get(context, DenseParallelism::column, all));
    second.setPlacementAttr(
        DensePlacementAttr::get(context, DenseParallelism::row, all));
  });
}

void mlir::braid::applyPlan(ModuleOp module, const plan::Plan &plan,
                            int64_t ranksPerNode) {
  MLIRContext *context = module.getContext();
  for (auto [op, tp] : llvm::zip(module.getOps<TableOp>(), plan.tables))
    op.setPlacementAttr(cast<TablePlacementAttrInterface>(
        placementAttr(context, tp, ranksPerNode)));
  module->setAttr(BraidDialect::kPlannerAttrName,
                  StringAttr::get(context, plan.planner));
  // Dense layers are data-parallel unless the model places them itself.
  auto dataParallel =
      DensePlacementAttr::get(context, DenseParallelism::data_parallel, {});
  module.walk([&](LinearOp linear) {
    if (!linear.getPlacementAttr())
      linear.setPlacementAttr(dataParallel);
  });
}

FailureOr<ShardingResult>
mlir::braid::readModuleSharding(ModuleOp module, std::optional<bool> training) {
  ShardingResult result;
  if (failed(buildProblem(
          module, result,
          training.value_or(bool(module.lookupSymbol<func::FuncOp>(
              "train_step"))))))
    return failure();
  for (Operation *op : result.tables) {
    auto table = cast<TableOp>(op);
    TablePlacementAttrInterface placement = table.getPlacementAttr();
    if (!placement)
      return table.emitError() << "table '" << table.getSymName()
                               << "' has no placement";
    plan::TablePlan tp;
    tp.type = shardingTypeOf(placement);
    for (const TableShard &shard :
         placement.getShards(table.getNumRows(), table.getDim()))
      tp.shards.push_back(
          {shard.rank, shard.rowOffset, shard.rows, shard.colOffset, shard.cols});
    result.plan.tables.push_back(std::move(tp));
  }
  if (auto planner =
          module->getAttrOfType<StringAttr>(BraidDialect::kPlannerAttrName))
    result.plan.planner = planner.str();
  else
    result.plan.planner = "given";
  priceDenseLayers(module, result);
  return result;
}

/// Reads `plan.json`'s tables into placements on `module`'s tables; each
/// error names the file and the JSON path. Returns the file's planner.
static FailureOr<std::string> applyPlanFile(ModuleOp module, StringRef path,
                                            int64_t ranks,
                                            int64_t ranksPerNode) {
  MLIRContext *context = module.getContext();
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readBoundedFile(path, kMaxJsonFileBytes, "the plan");
  if (!buffer)
    return module.emitError() << llvm::toString(buffer.takeError());
  llvm::Expected<llvm::json::Value> parsed =
      parseBoundedJson((*buffer)->getBuffer());
  if (!parsed)
    return module.emitError() << path << ": "
                              << llvm::toString(parsed.takeError());
  auto fail = [&](const llvm::Twine &where, const llvm::Twine &what) {
    return module.emitError() << path << ": " << where << ": " << what;
  };
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *entries = root ? root->getArray("tables") : nullptr;
  if (!entries)
    return fail("$", "expected an object with a \"tables\" array");
  llvm::StringMap<TableOp> tables;
  for (TableOp table : module.getOps<TableOp>())
    tables[table.getSymName()] = table;
  llvm::StringSet<> placed;
  for (auto [t, value] : llvm::enumerate(*entries)) {
    std::string at = ("$.tables[" + llvm::Twine(t) + "]").str();
    const llvm::json::Object *entry = value.getAsObject();
    std::optional<llvm::StringRef> name =
        entry ? entry->getString("name") : std::nullopt;
    if (!name)
      return fail(at, "expected an object with a string \"name\"");
    auto table = tables.find(*name);
    if (table == tables.end())
      return fail(at + ".name", "the model has no table '" + *name + "'");
    if (!placed.insert(*name).second)
      return fail(at + ".name", "table '" + *name + "' is planned twice");
    std::optional<llvm::StringRef> sharding = entry->getString("sharding");
    std::optional<plan::ShardingType> type =
        sharding ? plan::symbolizeShardingType(*sharding) : std::nullopt;
    if (!type)
      return fail(at + ".sharding",
                  "expected table_wise, row_wise, column_wise, "
                  "table_row_wise or data_parallel");
    const llvm::json::Array *shards = entry->getArray("shards");
    if (!shards || shards->empty())
      return fail(at + ".shards", "expected a non-empty array of shards");
    TableOp op = table->second;
    int64_t rows = op.getNumRows(), dim = op.getDim();
    plan::TablePlan tp;
    tp.type = *type;
    for (auto [i, shardValue] : llvm::enumerate(*shards)) {
      std::string shardAt = (at + ".shards[" + llvm::Twine(i) + "]").str();
      const llvm::json::Object *shard = shardValue.getAsObject();
      plan::Shard parsedShard;
      for (auto [key, field] :
           {std::pair{"rank", &parsedShard.rank},
            std::pair{"row_offset", &parsedShard.rowOffset},
            std::pair{"rows", &parsedShard.rows},
            std::pair{"col_offset", &parsedShard.colOffset},
            std::pair{"cols", &parsedShard.cols}}) {
        std::optional<int64_t> number =
            shard ? shard->getInteger(key) : std::nullopt;
        if (!number || *number < 0)
          return fail(shardAt + "." + key, "expected a non-negative integer");
        *field = *number;
      }
      // Inside the table, so that no sum below can overflow.
      if (parsedShard.rowOffset > rows ||
          parsedShard.rows > rows - parsedShard.rowOffset ||
          parsedShard.colOffset > dim ||
          parsedShard.cols > dim - parsedShard.colOffset)
        return fail(shardAt, "the shard lies outside the table's " +
                                 llvm::Twine(rows) + " x " + llvm::Twine(dim) +
                                 " rows and columns");
      if (parsedShard.rank >= ranks)
        return fail(shardAt + ".rank", "rank " + llvm::Twine(parsedShard.rank) +
                                           " is outside the cluster's " +
                                           llvm::Twine(ranks) + " ranks");
      tp.shards.push_back(parsedShard);
    }
    // braid-compile's plan.json lists the shards' ranks beside them; an
    // edited file whose list disagrees says two things, so it is refused.
    if (const llvm::json::Value *listed = entry->get("ranks")) {
      const llvm::json::Array *array = listed->getAsArray();
      bool same = array && array->size() == tp.shards.size();
      for (size_t i = 0; same && i < tp.shards.size(); ++i)
        same = (*array)[i].getAsInteger() == tp.shards[i].rank;
      if (!same)
        return fail(at + ".ranks", "the ranks listed are not the shards' "
                                   "ranks in order (the shards decide; drop "
                                   "the list or correct it)");
    }
    // The placement attributes hold consecutive ranges: the shards must
    // tile the table in order, as braid-compile writes them.
    bool rowSplit = *type == plan::ShardingType::row_wise ||
                    *type == plan::ShardingType::table_row_wise;
    bool colSplit = *type == plan::ShardingType::column_wise;
    int64_t next = 0;
    for (auto [i, shard] : llvm::enumerate(tp.shards)) {
      std::string shardAt = (at + ".shards[" + llvm::Twine(i) + "]").str();
      int64_t offset = rowSplit ? shard.rowOffset : shard.colOffset;
      int64_t size = rowSplit ? shard.rows : shard.cols;
      bool whole = (rowSplit || (shard.rowOffset == 0 && shard.rows == rows)) &&
                   (colSplit || (shard.colOffset == 0 && shard.cols == dim));
      if (!whole || ((rowSplit || colSplit) && offset != next))
        return fail(shardAt, "a " + *sharding +
                                 " shard must cover " +
                                 (rowSplit   ? "all columns of the rows after "
                                               "the previous shard"
                                  : colSplit ? "all rows of the columns after "
                                               "the previous shard"
                                             : "the whole table"));
      next = offset + size;
    }
    if ((rowSplit && next != rows) || (colSplit && next != dim))
      return fail(at + ".shards", "the shards end at " + llvm::Twine(next) +
                                      " but the table has " +
                                      llvm::Twine(rowSplit ? rows : dim) +
                                      (rowSplit ? " rows" : " columns"));
    if (*type == plan::ShardingType::table_wise && tp.shards.size() != 1)
      return fail(at + ".shards", "a table_wise table has one shard");
    // TorchRec may give one rank several consecutive shards (more shards
    // than ranks): they are one range to look up, so they merge. A rank
    // with two ranges apart is not supported: it looks up one range.
    if (rowSplit || colSplit) {
      std::vector<plan::Shard> merged;
      llvm::DenseMap<int64_t, size_t> firstShardOf;
      for (auto [i, shard] : llvm::enumerate(tp.shards)) {
        if (!merged.empty() && merged.back().rank == shard.rank) {
          (rowSplit ? merged.back().rows : merged.back().cols) +=
              rowSplit ? shard.rows : shard.cols;
          continue;
        }
        auto [it, inserted] = firstShardOf.try_emplace(shard.rank, i);
        if (!inserted)
          return fail(at + ".shards[" + llvm::Twine(i) + "]",
                      "rank " + llvm::Twine(shard.rank) +
                          " also holds shard " + llvm::Twine(it->second) +
                          ", and the two are not adjacent: a rank looks up "
                          "one contiguous range of a table");
        merged.push_back(shard);
      }
      tp.shards = std::move(merged);
    }
    auto placement = cast<TablePlacementAttrInterface>(
        placementAttr(context, tp, ranksPerNode));
    if (failed(placement.verifyForTable(rows, dim, [&] {
          return module.emitError() << path << ": " << at << ": ";
        })))
      return failure();
    op.setPlacementAttr(placement);
  }
  for (TableOp table : module.getOps<TableOp>())
    if (!placed.contains(table.getSymName()))
      return fail("$.tables", "the plan has no entry for table '" +
                                  table.getSymName() + "'");
  if (std::optional<llvm::StringRef> planner = root->getString("planner"))
    return planner->str();
  return std::string("given");
}

FailureOr<ShardingResult>
mlir::braid::planModuleSharding(ModuleOp module,
                                const ShardingOptions &options) {
  MLIRContext *context = module.getContext();
  if (!options.cluster.empty()) {
    // Nodes or ranks per node 0: the hardware description's topology.
    int64_t nodes = options.nodes;
    int64_t ranksPerNode = options.ranksPerNode;
    if (nodes == 0 || ranksPerNode == 0) {
      llvm::Expected<cluster::HardwareDesc> hw =
          cluster::loadHardware(options.cluster);
      if (!hw)
        return module.emitError() << llvm::toString(hw.takeError());
      if (nodes == 0)
        nodes = hw->nodes;
      if (ranksPerNode == 0)
        ranksPerNode = hw->ranksPerNode;
    }
    if (nodes < 1 || ranksPerNode < 1)
      return module.emitError() << "a cluster needs nodes >= 1 and "
                                   "ranks-per-node >= 1, got "
                                << nodes << " and " << ranksPerNode;
    // Every rank's program is planned and simulated (exchanges as R x R
    // matrices): bound the world so that a compile ends in seconds.
    if (nodes > kMaxWorldSize / ranksPerNode)
      return module.emitError()
             << "a cluster of " << nodes << " x " << ranksPerNode
             << " ranks is more than the " << kMaxWorldSize
             << " Braid plans and simulates";
    module->setAttr(BraidDialect::kClusterAttrName,
                    ClusterAttr::get(context, options.cluster, nodes,
                                     ranksPerNode));
  }
  StringRef planner = options.planner;
  // A plan file: its placements, kept and priced as they are. It is the
  // plan, so another way of choosing one beside it is an error (it was
  // silently dropped, or silently overwrote the file's plan).
  if (!options.planFile.empty() &&
      (!options.forceSharding.empty() ||
       (planner != "braid" && planner != "keep")))
    return module.emitError()
           << "a plan file is the plan: give it without "
           << (options.forceSharding.empty()
                   ? "planner=" + planner.str()
                   : "force-sharding=" + options.forceSharding);
  if (!options.planFile.empty()) {
    auto cluster =
        module->getAttrOfType<ClusterAttr>(BraidDialect::kClusterAttrName);
    if (!cluster)
      return module.emitError() << "no cluster: give the module a "
                                   "braid.cluster attribute or the pass a "
                                   "cluster";
    FailureOr<std::string> from =
        applyPlanFile(module, options.planFile, cluster.getWorldSize(),
                      cluster.getRanksPerNode());
    if (failed(from))
      return failure();
    module->setAttr(BraidDialect::kPlannerAttrName,
                    StringAttr::get(context, *from));
    planner = "keep";
  }
  // `keep`: the tables' own placements, priced as they are.
  if (planner == "keep" && options.forceSharding.empty()) {
    for (TableOp table : module.getOps<TableOp>())
      if (!table.getPlacementAttr())
        return table.emitError()
               << "planner=keep needs every table to carry a placement, but '"
               << table.getSymName() << "' has none";
    if (!module->hasAttr(BraidDialect::kPlannerAttrName))
      module->setAttr(BraidDialect::kPlannerAttrName,
                      StringAttr::get(context, "given"));
    auto dataParallel =
        DensePlacementAttr::get(context, DenseParallelism::data_parallel, {});
    module.walk([&](LinearOp linear) {
      if (!linear.getPlacementAttr())
        linear.setPlacementAttr(dataParallel);
    });
    return readModuleSharding(module, options.train);
  }

  ShardingResult result;
  if (failed(buildProblem(module, result, options.train)))
    return failure();
  plan::PlanProblem &problem = result.problem;
  auto start = std::chrono::steady_clock::now();
  std::optional<llvm::Expected<plan::Plan>> chosen;
  if (!options.forceSharding.empty()) {
    std::optional<plan::ShardingType> type =
        plan::symbolizeShardingType(options.forceSharding);
    if (!type)
      return module.emitError()
             << "unknown sharding type '" << options.forceSharding
             << "' (expected table_wise, row_wise, column_wise, "
                "table_row_wise or data_parallel)";
    chosen.emplace(plan::planForced(problem, *type));
  } else if (planner == "braid") {
    chosen.emplace(plan::planBraid(problem));
  } else if (std::optional<plan::GreedyKey> key =
                 planner.consume_front("greedy:")
                     ? plan::symbolizeGreedyKey(planner)
                     : std::nullopt) {
    chosen.emplace(plan::planGreedy(problem, *key));
  } else {
    return module.emitError()
           << "unknown planner '" << options.planner
           << "' (expected braid, greedy:size, greedy:dim, "
              "greedy:dim_pooling, greedy:dim_pooling_logrows or keep)";
  }
  result.planningSeconds = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count();
  if (!*chosen)
    return module.emitError() << "planning failed: "
                              << llvm::toString(chosen->takeError());
  result.plan = std::move(**chosen);

  placeDenseBlocks(module, problem, options.parameterBlocks);
  applyPlan(module, result.plan, problem.ranksPerNode);
  priceDenseLayers(module, result);
  return result;
}

namespace {
struct BraidPlanShardingPass
    : braid::impl::BraidPlanShardingPassBase<BraidPlanShardingPass> {
  using Base::Base;
  void runOnOperation() override {
    ShardingOptions options;
    options.planner = planner;
    options.forceSharding = forceSharding;
    options.planFile = planFile;
    options.cluster = cluster;
    options.nodes = nodes;
    options.ranksPerNode = ranksPerNode;
    options.train = train;
    options.parameterBlocks = parameterBlocks;
    if (failed(planModuleSharding(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace
