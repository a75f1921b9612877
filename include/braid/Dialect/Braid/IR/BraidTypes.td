//===- BraidTypes.td - Braid types -------------------------*- tablegen -*-===//
//
// This file declares the types of the Braid dialect.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAIDTYPES_TD
#define BRAID_DIALECT_BRAID_IR_BRAIDTYPES_TD

include "braid/Dialect/Braid/IR/BraidDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Braid_TokenType : TypeDef<Braid_Dialect, "Token"> {
  let mnemonic = "token";
  let summary = "a collective in flight";
  let description = [{
    Returned by the `_start` form of a collective and consumed by
    `braid.wait`, which yields the collective's result of type `value_type`.

    ```mlir
    !braid.token<tensor<64x128xf32>>
    ```
  }];
  let parameters = (ins "::mlir::Type":$value_type);
  let assemblyFormat = "`<` $value_type `>`";
}

#endif // BRAID_DIALECT_BRAID_IR_BRAIDTYPES_TD
