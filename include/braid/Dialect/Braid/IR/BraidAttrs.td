//===- BraidAttrs.td - Braid attributes --------------------*- tablegen -*-===//
//
// This file declares the attributes of the Braid dialect: replica groups,
// the placements of tables and dense layers, and the cluster description.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAIDATTRS_TD
#define BRAID_DIALECT_BRAID_IR_BRAIDATTRS_TD

include "braid/Dialect/Braid/IR/BraidDialect.td"
include "braid/Dialect/Braid/IR/BraidEnums.td"
include "braid/Dialect/Braid/IR/BraidInterfaces.td"
include "mlir/IR/AttrTypeBase.td"

class Braid_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Braid_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Braid_ReplicaGroupsAttr : Braid_Attr<"ReplicaGroups", "replica_groups"> {
  let summary = "lists of ranks of equal size";
  let description = [{
    The groups a collective runs in, or the source-target pairs of a
    permute: lists of non-negative ranks, all of the same size. Collectives
    additionally require their groups to be disjoint. Written as a list of
    rank lists:

    ```mlir
    #braid.replica_groups<[[0, 1, 2, 3], [4, 5, 6, 7]]>
    ```

    Inside a collective's assembly the prefix is dropped:
    `braid.all_reduce sum %x groups [[0, 1], [2, 3]] : tensor<4xf32>`.
  }];
  let parameters = (ins "int64_t":$group_size,
                        ArrayRefParameter<"int64_t">:$ranks);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Builds groups from a list of rank lists; null if they are malformed.
    static ReplicaGroupsAttr getFromGroups(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::mlir::MLIRContext *context,
        ::llvm::ArrayRef<::llvm::SmallVector<int64_t>> groups);
    int64_t getNumGroups() const;
    ::llvm::ArrayRef<int64_t> getGroup(int64_t index) const;
    /// The group holding `rank` and the rank's position in it.
    std::optional<std::pair<int64_t, int64_t>> findRank(int64_t rank) const;
    /// Whether every group is a block of consecutive ranks starting at a
    /// multiple of the group size ([[0, 1], [2, 3]], or [[4, 5]]): a rank's
    /// position is then rank mod size.
    bool isBlocks() const;
    /// The stride s when the groups tile ranks [0, worldSize) as
    /// [[0, s, 2s, ..], [1, s + 1, ..], ..] (s = the number of groups; 1 for
    /// blocks that tile): every rank takes part, at position rank / s mod
    /// size. Nothing for other layouts.
    std::optional<int64_t> getTilingStride(int64_t worldSize) const;
    /// Prints `[[0, 1], [2, 3]]`.
    void printBody(::mlir::AsmPrinter &printer) const;
    /// Parses `[[0, 1], [2, 3]]`.
    static ReplicaGroupsAttr parseBody(::mlir::AsmParser &parser);
  }];
}

class Braid_TablePlacementAttr<string name, string attrMnemonic>
    : Braid_Attr<name, attrMnemonic, [DeclareAttrInterfaceMethods<
          Braid_TablePlacementAttrInterface>]> {
  let genVerifyDecl = 1;
}

def Braid_TableWiseAttr : Braid_TablePlacementAttr<"TableWise", "table_wise"> {
  let summary = "the whole table on one rank";
  let description = [{
    ```mlir
    #braid.table_wise<rank = 3>
    ```
  }];
  let parameters = (ins "int64_t":$rank);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Braid_RowWiseAttr : Braid_TablePlacementAttr<"RowWise", "row_wise"> {
  let summary = "rows split over ranks, ranges may be uneven";
  let description = [{
    Rank `ranks[i]` holds rows `[row_offsets[i], row_offsets[i+1])`.
    `row_offsets` starts at 0, never decreases and ends at the table's rows.

    ```mlir
    #braid.row_wise<ranks = [0, 1, 2], row_offsets = [0, 400, 700, 1000]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$ranks,
                        ArrayRefParameter<"int64_t">:$row_offsets);
  let assemblyFormat =
      "`<` `ranks` `=` `[` $ranks `]` `,` `row_offsets` `=` `[` $row_offsets `]` `>`";
}

def Braid_ColumnWiseAttr
    : Braid_TablePlacementAttr<"ColumnWise", "column_wise"> {
  let summary = "columns split over ranks";
  let description = [{
    Rank `ranks[i]` holds columns `[col_offsets[i], col_offsets[i+1])` of
    every row. `col_offsets` starts at 0, increases strictly and ends at the
    table's dim.

    ```mlir
    #braid.column_wise<ranks = [0, 1], col_offsets = [0, 32, 64]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$ranks,
                        ArrayRefParameter<"int64_t">:$col_offsets);
  let assemblyFormat =
      "`<` `ranks` `=` `[` $ranks `]` `,` `col_offsets` `=` `[` $col_offsets `]` `>`";
}

def Braid_TableRowWiseAttr
    : Braid_TablePlacementAttr<"TableRowWise", "table_row_wise"> {
  let summary = "rows split over the ranks of one node";
  let description = [{
    Row-wise sharding inside node `node`: the same rules as `row_wise`, and
    when the module names a cluster every rank must belong to that node.

    ```mlir
    #braid.table_row_wise<node = 1, ranks = [8, 9], row_offsets = [0, 50, 100]>
    ```
  }];
  let parameters = (ins "int64_t":$node, ArrayRefParameter<"int64_t">:$ranks,
                        ArrayRefParameter<"int64_t">:$row_offsets);
  let assemblyFormat = "`<` `node` `=` $node `,` `ranks` `=` `[` $ranks `]` `,` "
                       "`row_offsets` `=` `[` $row_offsets `]` `>`";
}

def Braid_DataParallelAttr
    : Braid_TablePlacementAttr<"DataParallel", "data_parallel"> {
  let summary = "the whole table replicated on every listed rank";
  let description = [{
    ```mlir
    #braid.data_parallel<ranks = [0, 1, 2, 3]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$ranks);
  let assemblyFormat = "`<` `ranks` `=` `[` $ranks `]` `>`";
}

def Braid_DensePlacementAttr : Braid_Attr<"DensePlacement", "dense_placement"> {
  let summary = "the parallelization of a dense layer";
  let description = [{
    `data_parallel` replicates the weights and splits the batch; `column`
    splits the output features (weight rows) over `ranks`, `row` splits the
    input features (weight columns) over `ranks`. Tensor-parallel forms need
    at least two ranks.

    ```mlir
    #braid.dense_placement<data_parallel>
    #braid.dense_placement<column, ranks = [0, 1]>
    ```
  }];
  let parameters = (ins EnumParameter<Braid_DenseParallelism>:$parallelism,
                        OptionalArrayRefParameter<"int64_t">:$ranks);
  let assemblyFormat =
      "`<` $parallelism (`,` `ranks` `=` `[` $ranks^ `]`)? `>`";
  let genVerifyDecl = 1;
}

def Braid_ClusterAttr : Braid_Attr<"Cluster", "cluster"> {
  let summary = "the cluster a module is compiled for";
  let description = [{
    Names a hardware description (a preset such as `dgx-h100` or a file) and
    the shape of the cluster. The world size is `nodes * ranks_per_node`;
    rank `r` lives on node `r / ranks_per_node`.

    ```mlir
    module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100",
                                                      nodes = 2, ranks_per_node = 8>} {}
    ```
  }];
  let parameters = (ins StringRefParameter<>:$hardware, "int64_t":$nodes,
                        "int64_t":$ranks_per_node);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getWorldSize() const { return getNodes() * getRanksPerNode(); }
  }];
}

#endif // BRAID_DIALECT_BRAID_IR_BRAIDATTRS_TD
