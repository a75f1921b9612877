//===- BraidEnums.td - Braid enumerations ------------------*- tablegen -*-===//
//
// This file declares the enumerations of the Braid dialect.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAIDENUMS_TD
#define BRAID_DIALECT_BRAID_IR_BRAIDENUMS_TD

include "braid/Dialect/Braid/IR/BraidDialect.td"
include "mlir/IR/EnumAttr.td"

// Plain integer-backed enums: they print as bare keywords inside ops
// (`braid.embedding_bag @t(...) sum`), like arith.cmpi predicates.

def Braid_PoolingMode : I32EnumAttr<"PoolingMode",
    "how an embedding bag pools the rows of a bag", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::mlir::braid";
}

def Braid_Activation : I32EnumAttr<"Activation",
    "the activation fused after a linear layer", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"relu", 1>,
      I32EnumAttrCase<"sigmoid", 2>]> {
  let cppNamespace = "::mlir::braid";
}

def Braid_InteractionKind : I32EnumAttr<"InteractionKind",
    "how dense and embedding features interact", [
      I32EnumAttrCase<"dot", 0>, I32EnumAttrCase<"cat", 1>]> {
  let cppNamespace = "::mlir::braid";
}

def Braid_ReductionKind : I32EnumAttr<"ReductionKind",
    "the reduction of a reducing collective", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"avg", 3>]> {
  let cppNamespace = "::mlir::braid";
}

def Braid_DenseParallelism : I32EnumAttr<"DenseParallelism",
    "how a dense layer is parallelized", [
      I32EnumAttrCase<"data_parallel", 0>,
      I32EnumAttrCase<"column", 1, "column">,
      I32EnumAttrCase<"row", 2, "row">]> {
  let cppNamespace = "::mlir::braid";
}

#endif // BRAID_DIALECT_BRAID_IR_BRAIDENUMS_TD
