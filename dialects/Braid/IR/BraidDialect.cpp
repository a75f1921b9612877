//===- BraidDialect.cpp - Braid dialect -----------------------------------===//
//
// This file registers the Braid dialect and verifies the discardable
// attributes it owns: `braid.cluster` on modules and `braid.input` /
// `braid.param` on function arguments.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Dialect/Braid/IR/Optimizers.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::braid;

#include "braid/Dialect/Braid/IR/BraidOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "braid/Dialect/Braid/IR/BraidOpsTypes.cpp.inc"

void BraidDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "braid/Dialect/Braid/IR/BraidOps.cpp.inc"
      >();
}

void BraidDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "braid/Dialect/Braid/IR/BraidOpsTypes.cpp.inc"
      >();
}

/// Verifies one part ("dense" or "embedding") of braid.optimizer: a type
/// of `types` and exactly that type's hyperparameters, finite, lr and eps
/// positive, betas in [0, 1).
LogicalResult mlir::braid::detail::verifyOptimizerPart(
    Operation *op, DictionaryAttr part, StringRef which,
    ArrayRef<StringRef> types) {
  auto fail = [&]() {
    return op->emitOpError()
           << "'" << BraidDialect::kOptimizerAttrName << "' " << which << ": ";
  };
  auto type = part.getAs<StringAttr>("type");
  if (!type || !llvm::is_contained(types, type.getValue())) {
    InFlightDiagnostic diag = fail() << "'type' must be one of";
    for (StringRef name : types)
      diag << " " << name;
    return diag;
  }
  SmallVector<StringRef> fields = {"type", "lr"};
  for (const OptimizerHyperparameter &parameter :
       getOptimizerHyperparameters(type.getValue()))
    fields.push_back(parameter.name);
  for (NamedAttribute field : part)
    if (!llvm::is_contained(fields, field.getName().getValue()))
      return fail() << type.getValue() << " has no '"
                    << field.getName().getValue() << "'";
  for (StringRef name : ArrayRef(fields).drop_front()) {
    auto value = part.getAs<FloatAttr>(name);
    if (!value)
      return fail() << type.getValue() << " needs '" << name
                    << "' as a float";
    double number = value.getValueAsDouble();
    bool isBeta = name.starts_with("beta");
    if (!std::isfinite(number) ||
        (isBeta ? number < 0 || number >= 1 : number <= 0))
      return fail() << "'" << name << "' must be "
                    << (isBeta ? "in [0, 1)" : "finite and positive")
                    << ", got " << number;
  }
  return success();
}

LogicalResult BraidDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  if (attr.getName() == kOptimizerAttrName) {
    auto optimizer = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !optimizer || optimizer.size() != 2 ||
        !optimizer.getAs<DictionaryAttr>("dense") ||
        !optimizer.getAs<DictionaryAttr>("embedding"))
      return op->emitOpError() << "'" << kOptimizerAttrName
                               << "' must be {dense = {...}, embedding = "
                                  "{...}} on a module";
    if (failed(detail::verifyOptimizerPart(op, optimizer.getAs<DictionaryAttr>("dense"),
                                   "dense", getDenseOptimizerTypes())))
      return failure();
    return detail::verifyOptimizerPart(op, optimizer.getAs<DictionaryAttr>("embedding"),
                               "embedding", getEmbeddingOptimizerTypes());
  }
  if (attr.getName() == kClusterAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitOpError() << "'" << kClusterAttrName
                               << "' may only be attached to a module";
    if (!isa<ClusterAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << kClusterAttrName
             << "' must be a #braid.cluster attribute, got " << attr.getValue();
    return success();
  }
  for (StringRef name : {kModelAttrName, kPlannerAttrName})
    if (attr.getName() == name) {
      if (!isa<ModuleOp>(op) || !isa<StringAttr>(attr.getValue()))
        return op->emitOpError() << "'" << name
                                 << "' must be a string on a module";
      return success();
    }
  if (attr.getName() == kProfiledOpsAttrName) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !names ||
        !llvm::all_of(names, llvm::IsaPred<StringAttr>))
      return op->emitOpError() << "'" << kProfiledOpsAttrName
                               << "' must be an array of strings on a module";
    return success();
  }
  if (attr.getName() == kBatchSplitAttrName) {
    auto split = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !split || split.empty() ||
        llvm::any_of(split.asArrayRef(), [](int64_t n) { return n < 0; }))
      return op->emitOpError() << "'" << kBatchSplitAttrName
                               << "' must be a non-empty array<i64> of "
                                  "non-negative sample counts on a module";
    if (auto cluster = op->getAttrOfType<ClusterAttr>(kClusterAttrName);
        cluster && cluster.getWorldSize() != int64_t(split.size()))
      return op->emitOpError() << "'" << kBatchSplitAttrName << "' has "
                               << split.size() << " entries but the cluster has "
                               << cluster.getWorldSize() << " ranks";
    return success();
  }
  if (attr.getName() == kChunkAttrName) {
    auto chunk = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<AllToAllOp, AllToAllStartOp>(op) || !chunk ||
        !chunk.getType().isInteger(64) || chunk.getInt() < 0)
      return op->emitOpError() << "'" << kChunkAttrName
                               << "' must be a non-negative i64 on a "
                                  "braid.all_to_all or braid.all_to_all_start";
    return success();
  }
  if (attr.getName() == kGradPartAttrName) {
    auto part = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<LinearGradOp>(op) || !part ||
        (part.getValue() != "input" && part.getValue() != "params"))
      return op->emitOpError() << "'" << kGradPartAttrName
                               << "' must be \"input\" or \"params\" on a "
                                  "braid.linear_grad, got "
                               << attr.getValue();
    return success();
  }
  if (attr.getName() == kFeaturePartAttrName) {
    auto part = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<LinearOp>(op) || !part ||
        (part.getValue() != "early" && part.getValue() != "late"))
      return op->emitOpError() << "'" << kFeaturePartAttrName
                               << "' must be \"early\" or \"late\" on a "
                                  "braid.linear, got "
                               << attr.getValue();
    return success();
  }
  for (StringRef name : {kInputDistAttrName, kPipelinedOfAttrName})
    if (attr.getName() == name) {
      auto symbol = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
      if (!isa<FunctionOpInterface>(op) || !symbol)
        return op->emitOpError()
               << "'" << name << "' must name a function (a flat symbol "
                  "reference) on a function";
      if (!op->getParentOp())
        return success();
      Operation *target =
          SymbolTable::lookupNearestSymbolFrom(op->getParentOp(), symbol);
      if (!isa_and_nonnull<FunctionOpInterface>(target))
        return op->emitOpError() << "'" << name << "' names " << symbol
                                 << ", which is no function of the module";
      // Each names a function of its own: an input distribution function
      // or a pipelined function is no pipelined form.
      if (target == op || target->hasAttr(kInputDistAttrName) ||
          target->hasAttr(kPipelinedOfAttrName))
        return op->emitOpError()
               << "'" << name << "' names " << symbol
               << ", which is itself or a pipelined form";
      return success();
    }
  return op->emitOpError() << "unknown Braid attribute '" << attr.getName().getValue()
                           << "'";
}

/// Checks that a function argument or result attribute names something.
static LogicalResult verifyNameAttribute(Operation *op, StringRef what,
                                         unsigned index, NamedAttribute attr) {
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitOpError() << what << " " << index << ": '"
                             << attr.getName().getValue()
                             << "' must be a non-empty string";
  if (!isFileNameSafe(name.getValue()))
    return op->emitOpError()
           << what << " " << index << ": '" << attr.getName().getValue()
           << "' is \"" << name.getValue()
           << "\", which cannot name a file in a folder (braid-run reads and "
              "writes it as NAME.npy): no '/', '\\' or NUL, and no leading "
              "'.'";
  return success();
}

/// The dimension a sharded argument or result splits: its
/// `braid.shard_dim`, 0 when absent (or malformed; that is reported on the
/// attribute itself).
static int64_t shardDimOf(DictionaryAttr siblings) {
  auto dim = siblings ? dyn_cast_or_null<IntegerAttr>(
                            siblings.get(BraidDialect::kShardDimAttrName))
                      : IntegerAttr();
  return dim ? dim.getInt() : 0;
}

/// Checks `braid.state_shard` or `braid.param_shard` on argument or result
/// `index` of `op`: replica groups on a state (a parameter) tensor whose
/// dimension `braid.shard_dim` (0 by default) they split.
static LogicalResult verifyShard(Operation *op, StringRef what, unsigned index,
                                 NamedAttribute attr, Type type,
                                 DictionaryAttr siblings,
                                 StringRef holderName) {
  auto groups = dyn_cast<ReplicaGroupsAttr>(attr.getValue());
  if (!groups)
    return op->emitOpError()
           << what << " " << index << ": '" << attr.getName().getValue()
           << "' must be a #braid.replica_groups attribute";
  if (!siblings || !siblings.get(holderName))
    return op->emitOpError() << what << " " << index << ": '"
                             << attr.getName().getValue() << "' needs '"
                             << holderName << "' beside it";
  // A tensor; a lowered program passes it as a buffer or a pointer, which
  // keep the attribute for the host and are not checked.
  auto tensor = dyn_cast<TensorType>(type);
  int64_t dim = shardDimOf(siblings);
  if (tensor && (!tensor.hasRank() || dim < 0 || dim >= tensor.getRank() ||
                 tensor.isDynamicDim(dim)))
    return op->emitOpError() << what << " " << index << ": '"
                             << attr.getName().getValue()
                             << "' needs a tensor with a static dimension "
                             << dim;
  return success();
}

/// Checks `braid.shard_dim`: an integer beside a shard attribute.
static LogicalResult verifyShardDim(Operation *op, StringRef what,
                                    unsigned index, NamedAttribute attr,
                                    DictionaryAttr siblings) {
  auto dim = dyn_cast<IntegerAttr>(attr.getValue());
  if (!dim || dim.getInt() < 0)
    return op->emitOpError() << what << " " << index << ": '"
                             << attr.getName().getValue()
                             << "' must be a non-negative integer";
  if (!siblings || (!siblings.get(BraidDialect::kParamShardAttrName) &&
                    !siblings.get(BraidDialect::kStateShardAttrName)))
    return op->emitOpError() << what << " " << index << ": '"
                             << attr.getName().getValue() << "' needs '"
                             << BraidDialect::kParamShardAttrName << "' or '"
                             << BraidDialect::kStateShardAttrName
                             << "' beside it";
  return success();
}

/// Checks the shard attributes on argument or result `index` of `op`, or
/// returns std::nullopt for any other attribute.
static std::optional<LogicalResult>
verifyShardAttribute(Operation *op, bool isArgument, unsigned index,
                     NamedAttribute attr) {
  StringRef what = isArgument ? "argument" : "result";
  bool isShard = attr.getName() == BraidDialect::kStateShardAttrName ||
                 attr.getName() == BraidDialect::kParamShardAttrName;
  if (!isShard && attr.getName() != BraidDialect::kShardDimAttrName)
    return std::nullopt;
  auto func = dyn_cast<FunctionOpInterface>(op);
  unsigned count = func ? (isArgument ? func.getNumArguments()
                                      : func.getNumResults())
                        : 0;
  if (!func || index >= count)
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' belongs on a function's " << what << "s";
  DictionaryAttr siblings =
      isArgument ? func.getArgAttrDict(index) : func.getResultAttrDict(index);
  if (!isShard)
    return verifyShardDim(op, what, index, attr, siblings);
  Type type = isArgument ? func.getArgumentTypes()[index]
                         : func.getResultTypes()[index];
  return verifyShard(op, what, index, attr, type, siblings,
                     attr.getName() == BraidDialect::kStateShardAttrName
                         ? BraidDialect::kStateAttrName
                         : BraidDialect::kParamAttrName);
}

LogicalResult BraidDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  if (std::optional<LogicalResult> shard =
          verifyShardAttribute(op, /*isArgument=*/true, argIndex, attr))
    return *shard;
  if (attr.getName() != kInputAttrName && attr.getName() != kParamAttrName &&
      attr.getName() != kTableAttrName && attr.getName() != kStateAttrName &&
      attr.getName() != kTableStateAttrName &&
      attr.getName() != kNextInputAttrName && attr.getName() != kCarriedAttrName)
    return op->emitOpError() << "unknown Braid argument attribute '"
                             << attr.getName().getValue() << "'";
  return verifyNameAttribute(op, "argument", argIndex, attr);
}

LogicalResult BraidDialect::verifyRegionResultAttribute(Operation *op,
                                                        unsigned regionIndex,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  if (std::optional<LogicalResult> shard =
          verifyShardAttribute(op, /*isArgument=*/false, resultIndex, attr))
    return *shard;
  if (attr.getName() != kOutputAttrName && attr.getName() != kParamAttrName &&
      attr.getName() != kStateAttrName && attr.getName() != kCarriedAttrName)
    return op->emitOpError() << "unknown Braid result attribute '"
                             << attr.getName().getValue() << "'";
  return verifyNameAttribute(op, "result", resultIndex, attr);
}

bool mlir::braid::isPipelineCompanion(Operation *func) {
  if (func->hasAttr(BraidDialect::kPipelinedOfAttrName))
    return true;
  auto symbol = dyn_cast_or_null<SymbolOpInterface>(func);
  Operation *parent = func->getParentOp();
  if (!symbol || !parent)
    return false;
  for (Region &region : parent->getRegions())
    for (Operation &other : region.getOps())
      if (auto dist = other.getAttrOfType<FlatSymbolRefAttr>(
              BraidDialect::kInputDistAttrName);
          dist && dist.getValue() == symbol.getName())
        return true;
  return false;
}

std::string mlir::braid::getReportName(Operation *op) {
  std::string name = op->getName().stripDialect().str();
  if (auto table = op->getAttrOfType<FlatSymbolRefAttr>("table"))
    name += " @" + table.getValue().str();
  return name;
}
