//===- BraidInterfaces.td - Braid interfaces ---------------*- tablegen -*-===//
//
// This file declares the interfaces shared by Braid attributes and ops: the
// placement of an embedding table, and the checks common to all collectives.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAIDINTERFACES_TD
#define BRAID_DIALECT_BRAID_IR_BRAIDINTERFACES_TD

include "mlir/IR/OpBase.td"

def Braid_TablePlacementAttrInterface
    : AttrInterface<"TablePlacementAttrInterface"> {
  let cppNamespace = "::mlir::braid";
  let description = [{
    A placement of an embedding table over ranks: which rank holds which rows
    and columns. Every sharding type (table-wise, row-wise, column-wise,
    table-row-wise, data-parallel) implements it, so the cost model, the
    partitioner and the runtime see one shape of answer: a list of shards.
  }];
  let methods = [
    InterfaceMethod<"The TorchRec name of the sharding type.",
      "::llvm::StringRef", "getShardingName">,
    InterfaceMethod<"The ranks holding a shard, in shard order.",
      "::llvm::SmallVector<int64_t>", "getPlacementRanks">,
    InterfaceMethod<[{
        The shards of a `rows` x `dim` table under this placement.
      }], "::llvm::SmallVector<::mlir::braid::TableShard>", "getShards",
      (ins "int64_t":$rows, "int64_t":$dim)>,
    InterfaceMethod<[{
        Checks that the placement fits a `rows` x `dim` table.
      }], "::mlir::LogicalResult", "verifyForTable",
      (ins "int64_t":$rows, "int64_t":$dim,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
  ];
}

def Braid_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::braid";
  let description = [{
    A collective over replica groups. The synchronous form returns its result
    tensor; the asynchronous `_start` form returns a `!braid.token` whose
    value type is that tensor. The checks every collective shares (valid
    groups, matching element types) are made here, once.
  }];
  let methods = [
    InterfaceMethod<"The tensor the collective sends.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getInput">,
    InterfaceMethod<[{
        The replica groups, or null when the collective spans all ranks.
      }], "::mlir::braid::ReplicaGroupsAttr", "getReplicaGroupsAttr">,
    InterfaceMethod<"The type of the tensor the collective produces.",
      "::mlir::RankedTensorType", "getResultTensorType", (ins), [{}], [{
        ::mlir::Type type = $_op->getResult(0).getType();
        if (auto token = ::llvm::dyn_cast<::mlir::braid::TokenType>(type))
          return ::llvm::cast<::mlir::RankedTensorType>(token.getValueType());
        return ::llvm::cast<::mlir::RankedTensorType>(type);
      }]>,
    InterfaceMethod<"True for the `_start` form that returns a token.",
      "bool", "isAsync", (ins), [{}], [{
        return ::llvm::isa<::mlir::braid::TokenType>(
            $_op->getResult(0).getType());
      }]>,
    InterfaceMethod<[{
        The size of every replica group, or std::nullopt when the collective
        spans all ranks and the size is only known at run time.
      }], "std::optional<int64_t>", "getStaticGroupSize", (ins), [{}], [{
        if (auto groups = $_op.getReplicaGroupsAttr())
          return groups.getGroupSize();
        return std::nullopt;
      }]>,
  ];
  let verify = [{ return ::mlir::braid::detail::verifyCollectiveOp($_op); }];
}

def Braid_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::braid";
  let description = [{
    The gradient rule of an op, which `braid-differentiate` calls while it
    walks the forward program backwards. Braid's own ops and the arith ops
    models use get their rules as external models, one beside another in
    `GradientRules.cpp`.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the gradients of the op's
        operands from the gradients of its results (`resultGrads`, one per
        result, null where the loss does not depend on the result). Fills
        `operandGrads` with one value per operand, null where the operand
        gets no gradient (integers, constants, or an operand whose
        gradient the rule consumed itself, as a fused embedding update
        does). Gradients are f32 tensors of the value's shape. Fails with
        a located error when the op cannot be differentiated as it is.
      }], "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads,
           "const ::mlir::braid::GradientContext &":$context,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // BRAID_DIALECT_BRAID_IR_BRAIDINTERFACES_TD
