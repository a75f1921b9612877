//===- BraidOps.td - Braid operations ----------------------*- tablegen -*-===//
//
// This file declares the operations of the Braid dialect: tables, the DLRM
// compute ops, and collectives with their asynchronous start/wait forms.
// Every op's description ends with a "Constraints:" list; the verifier
// enforces exactly that list.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAIDOPS_TD
#define BRAID_DIALECT_BRAID_IR_BRAIDOPS_TD

include "braid/Dialect/Braid/IR/BraidDialect.td"
include "braid/Dialect/Braid/IR/BraidAttrs.td"
include "braid/Dialect/Braid/IR/BraidTypes.td"
include "braid/Dialect/Braid/IR/BraidInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Tables and compute
//===----------------------------------------------------------------------===//

def Braid_TableOp : Braid_Op<"table", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "declares an embedding table";
  let description = [{
    Declares a `rows` x `dim` embedding table as a module-level symbol, with
    the access statistics the cost model reads: the mean number of rows a bag
    pools (`pooling_factor`) and, optionally, the fraction of looked-up rows
    that are distinct in a batch (`unique_ratio`). The planner adds a
    `placement`.

    Example:

    ```mlir
    braid.table @user_id : tensor<1000000x64xf32> pooling_factor = 20.0
        unique_ratio = 0.35 placement = #braid.row_wise<ranks = [0, 1],
        row_offsets = [0, 500000, 1000000]>
    ```

    Constraints:
    - the type is a statically shaped rank-2 tensor of f16, bf16, f32 or f64
      with at least one row and one column;
    - `pooling_factor` is finite and not negative;
    - `unique_ratio`, when present, is in (0, 1];
    - the placement, when present, fits the table's rows and columns;
    - when the module names a cluster, every rank of the placement is below
      its world size, and a table-row-wise node is one of its nodes holding
      all of the placement's ranks.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyRankedTensor>:$table_type,
                       F64Attr:$pooling_factor,
                       OptionalAttr<F64Attr>:$unique_ratio,
                       OptionalAttr<Braid_TablePlacementAttrInterface>:$placement);
  let assemblyFormat = [{
    $sym_name `:` $table_type `pooling_factor` `=` $pooling_factor
    (`unique_ratio` `=` $unique_ratio^)? (`placement` `=` $placement^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The largest mean bag size a table may declare: beyond it the inputs
    /// generated for it, and the predictions, overflow.
    static constexpr double kMaxPoolingFactor = 1e6;
    int64_t getNumRows() { return getTableType().getDimSize(0); }
    int64_t getDim() { return getTableType().getDimSize(1); }
    ::mlir::Type getElementType() { return getTableType().getElementType(); }
  }];
}

def Braid_EmbeddingBagOp : Braid_Op<"embedding_bag",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "pools rows of a table over jagged bags";
  let description = [{
    Looks up `indices` in `table` and pools each bag. Bag `b` holds
    `indices[offsets[b] .. offsets[b+1])`; `offsets` has B + 1 entries and its
    last entry is the number of indices (`torch.nn.EmbeddingBag` with
    `include_last_offset=True`). `sum` adds the rows, each scaled by its
    per-sample weight when weights are given; `mean` divides the sum by the
    bag's size; `max` takes the element-wise maximum. An empty bag gives
    zeros. An index outside the table is a runtime error.

    Example:

    ```mlir
    %e = braid.embedding_bag @user_id(%indices, %offsets) sum
        : (tensor<?xi64>, tensor<33xi64>) -> tensor<32x64xf32>
    ```

    Constraints:
    - `table` names a `braid.table` in the enclosing module;
    - the result is rank 2, its second dimension is the table's dim and its
      element type is the table's;
    - `offsets` has at least one entry and, when both are static, one more
      entry than the result has rows;
    - `per_sample_weights`, when present, have the result's element type, as
      many entries as `indices` when both are static, and need mode `sum`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       1DTensorOf<[AnySignlessInteger]>:$indices,
                       1DTensorOf<[AnySignlessInteger]>:$offsets,
                       Optional<1DTensorOf<[AnyFloat]>>:$per_sample_weights,
                       Braid_PoolingMode:$mode);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $table `(` $indices `,` $offsets (`,` `weights` $per_sample_weights^)? `)`
    $mode attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_SliceBagsOp : Braid_Op<"slice_bags", [Pure]> {
  let summary = "takes a range of bags out of a jagged batch";
  let description = [{
    Bags `[start, start + count)` of the batch `indices`, `offsets` (the
    layout of `braid.embedding_bag`), as a jagged batch of their own: the
    result's offsets are the range's, less the offset of its first bag, so
    they start at 0 and end at the number of result indices, and the result's
    indices are the range's. A range that runs past the batch's B bags
    stops at its end, so the result has `min(count, max(B - start, 0))`
    bags; a range wholly past it has none (offsets `[0]`). Bags of a batch
    are independent, so a lookup of each range, concatenated, is the lookup
    of the batch (`braid-chunk-lookups` pipelines a forward pass that way).

    ```mlir
    %idx1, %off1 = braid.slice_bags %idx, %off bags [4, 4]
        : (tensor<?xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>)
    ```

    Constraints:
    - `start` is not negative and `count` is positive;
    - each result has its operand's element type and a dynamic size (how
      many bags and indices a range holds depends on the batch).
  }];
  let arguments = (ins 1DTensorOf<[AnySignlessInteger]>:$indices,
                       1DTensorOf<[AnySignlessInteger]>:$offsets,
                       I64Attr:$start, I64Attr:$count);
  let results = (outs 1DTensorOf<[AnySignlessInteger]>:$result_indices,
                      1DTensorOf<[AnySignlessInteger]>:$result_offsets);
  let assemblyFormat = [{
    $indices `,` $offsets `bags` ` ` `[` $start `,` $count `]` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_LinearOp : Braid_Op<"linear", [Pure]> {
  let summary = "a dense layer with bias and fused activation";
  let description = [{
    Computes `activation(input * weight^T + bias)` with `weight` in PyTorch's
    [out, in] layout. An optional `placement` attribute records how the
    planner parallelizes the layer:
    `braid.linear %x, %w, %b relu {placement = #braid.dense_placement<data_parallel>} : ...`.

    Example:

    ```mlir
    %h = braid.linear %x, %w, %b relu
        : tensor<32x13xf32>, tensor<512x13xf32>, tensor<512xf32> -> tensor<32x512xf32>
    ```

    Constraints:
    - `input` is [B, in], `weight` is [out, in], `bias` is [out] and the
      result is [B, out], wherever the sizes are static;
    - all four share one element type.
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                       2DTensorOf<[AnyFloat]>:$weight,
                       1DTensorOf<[AnyFloat]>:$bias,
                       Braid_Activation:$activation,
                       OptionalAttr<Braid_DensePlacementAttr>:$placement);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias $activation attr-dict
    `:` type($input) `,` type($weight) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Braid_InteractionOp : Braid_Op<"interaction", [Pure]> {
  let summary = "DLRM feature interaction";
  let description = [{
    `dot` is DLRM's interaction: stack the dense vector and the F pooled
    embeddings (F + 1 vectors of one dim d), take the dot products of pairs
    (i, j) with i > j in row-major order (no self-interaction), and append
    them to the dense vector: the result has d + F(F+1)/2 columns. `cat`
    concatenates the dense vector and the embeddings.

    Example:

    ```mlir
    %z = braid.interaction dot %dense, %e0, %e1
        : (tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x19xf32>
    ```

    Constraints:
    - there is at least one embedding;
    - every operand and the result are rank 2 and have the same number of
      rows where static, and share one element type;
    - for `dot`, every embedding has the dense vector's dim and the result has
      d + F(F+1)/2 columns;
    - for `cat`, the result has the sum of the operands' columns.
  }];
  let arguments = (ins Braid_InteractionKind:$kind,
                       2DTensorOf<[AnyFloat]>:$dense,
                       Variadic<2DTensorOf<[AnyFloat]>>:$embeddings);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $kind $dense `,` $embeddings attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ranks
//===----------------------------------------------------------------------===//

def Braid_RankOp : Braid_Op<"rank", [Pure]> {
  let summary = "the rank this program runs on";
  let description = [{
    In a per-rank (SPMD) program, the calling rank in [0, world size).

    ```mlir
    %r = braid.rank : index
    ```

    Constraints: none beyond the types.
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Braid_WorldSizeOp : Braid_Op<"world_size", [Pure]> {
  let summary = "the number of ranks";
  let description = [{
    ```mlir
    %n = braid.world_size : index
    ```

    Constraints: none beyond the types.
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//



/// Defines a synchronous collective `NAME#Op` and its asynchronous
/// `NAME#StartOp` with the same arguments and checks.
multiclass Braid_Collective<string opMnemonic, dag args, string operandFormat,
                            string resultFormat, string opSummary,
                            string opDescription, list<Trait> syncTraits = []> {
  def NAME#Op : Braid_Op<opMnemonic, !listconcat([Pure,
      DeclareOpInterfaceMethods<Braid_CollectiveOpInterface>], syncTraits)> {
    let summary = opSummary;
    let description = opDescription # [{

The collective runs independently in each replica group; without
`groups` it spans all ranks. A group of one rank makes it the identity,
which the folder uses, and so does being in no group: a rank that no
group names takes no part and its result is its input (a table-row-wise
table's intra-node reduce_scatter names only its owner node's ranks). The `_start` form takes the same operands and
attributes and returns a `!braid.token` of the result type for
`braid.wait`.

The synchronous form is `Pure`: its result depends only on its operand
and the ranks' operands, and it writes nothing else. Every rank runs the
same program through the same deterministic passes, so when CSE merges,
DCE drops or a scheduler moves a collective, it does so on every rank
alike and the ranks still enter the same collectives in the same order.
The `_start` form is not pure: it begins communication that its
`braid.wait` completes, and the two must stay paired.

Constraints (shared by every collective):
- `groups`, when present, are disjoint, non-negative and of equal size;
- the result has the input's element type and rank.
}];
    let arguments = args;
    let results = (outs AnyRankedTensor:$result);
    let assemblyFormat = operandFormat #
        " custom<ReplicaGroups>($replica_groups) attr-dict `:` type($input) " #
        resultFormat;
    let hasVerifier = 1;
    let hasFolder = 1;
  }
  def NAME#StartOp : Braid_Op<opMnemonic # "_start",
      [DeclareOpInterfaceMethods<Braid_CollectiveOpInterface>]> {
    let summary = "starts an asynchronous " # opMnemonic;
    let description = [{
The asynchronous form of `braid.}] # opMnemonic # [{`: same operands,
attributes and constraints; the result comes from `braid.wait` on the
returned token, whose value type must be the result type the synchronous
form would have. The token is waited for by exactly one `braid.wait` and
used by nothing else.
}];
    let arguments = args;
    let results = (outs Braid_TokenType:$token);
    let assemblyFormat = operandFormat #
        " custom<ReplicaGroups>($replica_groups) attr-dict `:` type($input)" #
        " `->` qualified(type($token))";
    let hasVerifier = 1;
  }
}

defm Braid_AllReduce : Braid_Collective<"all_reduce",
    (ins Braid_ReductionKind:$reduction, AnyRankedTensor:$input,
         OptionalAttr<Braid_ReplicaGroupsAttr>:$replica_groups),
    "$reduction $input", "", "reduces a tensor across ranks", [{
Every rank of a group receives the element-wise reduction (`sum`, `max`,
`min` or `avg`) of the group's inputs.

```mlir
%r = braid.all_reduce sum %x groups [[0, 1], [2, 3]] : tensor<64x128xf32>
```

Constraints:
- the result type is the input type.
}], [AllTypesMatch<["input", "result"]>]>;

defm Braid_AllGather : Braid_Collective<"all_gather",
    (ins AnyRankedTensor:$input, I64Attr:$dim,
         OptionalAttr<Braid_ReplicaGroupsAttr>:$replica_groups),
    "$input `dim` `=` $dim", "`->` type($result)",
    "concatenates the inputs of a group along one dimension", [{
Every rank receives the inputs of its group, in group order, concatenated
along `dim`.

```mlir
%r = braid.all_gather %x dim = 0 groups [[0, 1]] : tensor<4x8xf32> -> tensor<8x8xf32>
```

Constraints:
- `dim` is a dimension of the input;
- the result matches the input except along `dim`, where it is the
  group size times the input's size when both are static.
}]>;

defm Braid_ReduceScatter : Braid_Collective<"reduce_scatter",
    (ins Braid_ReductionKind:$reduction, AnyRankedTensor:$input,
         I64Attr:$dim, OptionalAttr<Braid_ReplicaGroupsAttr>:$replica_groups),
    "$reduction $input `dim` `=` $dim", "`->` type($result)",
    "reduces across a group and scatters the result", [{
The group's inputs are reduced element-wise; the reduction is split into
group-size equal chunks along `dim`, and the rank at group position `p`
receives chunk `p`.

```mlir
%r = braid.reduce_scatter sum %x dim = 0 groups [[0, 1]] : tensor<8x4xf32> -> tensor<4x4xf32>
```

Constraints:
- `dim` is a dimension of the input;
- the result matches the input except along `dim`, where the input's
  size is the group size times the result's when both are static.
}]>;

defm Braid_AllToAll : Braid_Collective<"all_to_all",
    (ins AnyRankedTensor:$input, I64Attr:$split_dim, I64Attr:$concat_dim,
         OptionalAttr<DenseI64ArrayAttr>:$split_sizes,
         OptionalAttr<Braid_ReplicaGroupsAttr>:$replica_groups),
    [{$input `split_dim` `=` $split_dim `concat_dim` `=` $concat_dim
      (`split_sizes` `=` $split_sizes^)?}], "`->` type($result)",
    "exchanges chunks between every pair of ranks of a group", [{
Each rank splits its input along `split_dim` into one chunk per group
member, sends chunk `j` to the member at position `j`, and concatenates
what it receives, in group order, along `concat_dim`.

Without `split_sizes` the chunks are equal. With `split_sizes`, a
row-major G x G matrix for a group of G, the member at position `i`
sends `split_sizes[i * G + j]` slices to position `j` (uneven
all_to_all): its input has the sum of row `i` slices along `split_dim`
and its result the sum of column `i`. Uneven exchanges split and
concatenate along the same dimension.

```mlir
%r = braid.all_to_all %ids split_dim = 0 concat_dim = 0
    split_sizes = [1, 2, 3, 0] groups [[0, 1]] : tensor<?xi64> -> tensor<?xi64>
```

Constraints:
- `split_dim` and `concat_dim` are dimensions of the input;
- the result matches the input except along `split_dim` and
  `concat_dim`;
- without `split_sizes`, a static input size along `split_dim` divides
  by the group size, and static result sizes are the input's divided
  (along `split_dim`) and multiplied (along `concat_dim`) by it;
- `split_sizes` needs explicit `groups`, equal `split_dim` and
  `concat_dim`, G x G non-negative entries, and when the input size
  along that dimension is static, every row of the matrix sums to it
  (and likewise every column to a static result size).
}]>;

defm Braid_Broadcast : Braid_Collective<"broadcast",
    (ins AnyRankedTensor:$input, I64Attr:$root,
         OptionalAttr<Braid_ReplicaGroupsAttr>:$replica_groups),
    "$input `root` `=` $root", "",
    "copies the input of one group member to all members", [{
Every rank of a group receives the input of the member at group position
`root`.

```mlir
%r = braid.broadcast %x root = 0 groups [[0, 1, 2, 3]] : tensor<16xf32>
```

Constraints:
- the result type is the input type;
- `root` is not negative and, with explicit groups, below the group size.
}], [AllTypesMatch<["input", "result"]>]>;

def Braid_PermuteOp : Braid_Op<"permute",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "sends each rank's input to another rank";
  let description = [{
    For every pair `[source, target]`, `target` receives the input of
    `source`. A rank that is no pair's target receives zeros. This is the
    send/recv primitive of pipelines and rings.

    ```mlir
    %r = braid.permute %x pairs [[0, 1], [1, 2], [2, 0]] : tensor<8xf32>
    ```

    Constraints:
    - every pair has two non-negative ranks;
    - no rank is the source of two pairs or the target of two pairs.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Braid_ReplicaGroupsAttr:$source_target_pairs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `pairs` custom<PairList>($source_target_pairs) attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Braid_WaitOp : Braid_Op<"wait", [TypesMatchWith<
    "the result type is the token's value type", "token", "result",
    "::llvm::cast<::mlir::braid::TokenType>($_self).getValueType()">]> {
  let summary = "waits for an asynchronous collective";
  let description = [{
    Blocks until the collective that produced `token` completes and returns
    its result. Between a `_start` and its `wait`, independent computation
    overlaps with the communication.

    ```mlir
    %t = braid.all_reduce_start sum %x : tensor<64xf32> -> !braid.token<tensor<64xf32>>
    %y = braid.linear ...
    %r = braid.wait %t : !braid.token<tensor<64xf32>>
    ```

    Constraints:
    - the result has the token's value type (checked by the type
      constraint).
  }];
  let arguments = (ins Braid_TokenType:$token);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$token attr-dict `:` qualified(type($token))";
  let hasCanonicalizer = 1;
}

include "braid/Dialect/Braid/IR/BraidShardOps.td"
include "braid/Dialect/Braid/IR/BraidTrainOps.td"

#endif // BRAID_DIALECT_BRAID_IR_BRAIDOPS_TD
