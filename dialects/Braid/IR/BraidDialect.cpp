//===- BraidDialect.cpp - Braid dialect -----------------------------------===//
//
// This file registers the Braid dialect and verifies the discardable
// attributes it owns: `braid.cluster` on modules and `braid.input` /
// `braid.param` on function arguments.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

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

LogicalResult BraidDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
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
  return op->emitOpError() << "unknown Braid attribute '" << attr.getName().getValue()
                           << "'";
}

LogicalResult BraidDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  if (attr.getName() != kInputAttrName && attr.getName() != kParamAttrName &&
      attr.getName() != kTableAttrName)
    return op->emitOpError() << "unknown Braid argument attribute '"
                             << attr.getName().getValue() << "'";
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitOpError() << "argument " << argIndex << ": '"
                             << attr.getName().getValue()
                             << "' must be a non-empty string";
  return success();
}
