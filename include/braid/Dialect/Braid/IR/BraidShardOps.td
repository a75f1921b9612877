//===- BraidShardOps.td - Ops of partitioned embeddings ----*- tablegen -*-===//
//
// This file declares the operations braid-partition emits to look up a
// sharded table in a per-rank (SPMD) program: routing each rank's bags to the
// shard owners (`bucketize`, `all_to_all_v`), the lookup of the local shard
// (`shard_embedding_bag`) and the assembly of the pooled result
// (`combine_shards`). Shapes that depend on the data or the rank are dynamic.
//
// The batch layout they share: rank r holds b_r of the global bags, and
// every exchange gives each rank `bags_per_rank` = max_r b_r slots, the
// tail slots being empty bags, so that partial results line up for
// reduce_scatter and fixed-size all_to_all.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAIDSHARDOPS_TD
#define BRAID_DIALECT_BRAID_IR_BRAIDSHARDOPS_TD

def Braid_BucketizeOp : Braid_Op<"bucketize",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "routes this rank's bags to the owners of a sharded table";
  let description = [{
    Splits the local bags (`indices`, `offsets`) of `table` by its
    placement, for each rank of `destinations` in order: a rank holding a
    row range receives the indices inside it, rebased to the range; a rank
    holding all rows (table-wise or column-wise) receives every index; any
    other rank receives empty bags. Each destination gets `bags_per_rank`
    lengths: one per local bag, then zeros.

    `lengths` holds the destinations' lengths one after the other,
    `values` the routed indices in the same order, and `send_counts`, one
    entry per rank of the world, how many values go to that rank (the
    counts of `braid.all_to_all_v`). An index outside the table is a
    runtime error.

    ```mlir
    %len, %vals, %counts = braid.bucketize @t(%idx, %off) to [0, 1]
        bags_per_rank = 4 : (tensor<?xi64>, tensor<5xi64>)
        -> (tensor<8xi64>, tensor<?xi64>, tensor<2xi64>)
    ```

    Constraints:
    - `table` names a `braid.table` with a placement other than
      data-parallel;
    - `destinations` are strictly increasing, not negative, and include
      every rank of the placement;
    - `bags_per_rank` is not negative and, with static offsets, at least
      the number of local bags;
    - `lengths` has `bags_per_rank` entries per destination when static;
    - `values` has the element type of `indices`;
    - `send_counts` is static and has more entries than the largest
      destination.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       1DTensorOf<[AnySignlessInteger]>:$indices,
                       1DTensorOf<[AnySignlessInteger]>:$offsets,
                       DenseI64ArrayAttr:$destinations,
                       I64Attr:$bags_per_rank);
  let results = (outs 1DTensorOf<[I64]>:$lengths,
                      1DTensorOf<[AnySignlessInteger]>:$values,
                      1DTensorOf<[I64]>:$send_counts);
  let assemblyFormat = [{
    $table `(` $indices `,` $offsets `)` `to` $destinations
    `bags_per_rank` `=` $bags_per_rank attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_AllToAllVOp : Braid_Op<"all_to_all_v", [Pure]> {
  let summary = "exchanges data-dependent chunks between all ranks";
  let description = [{
    Rank `i` splits `input` along dimension 0 into consecutive chunks of
    `send_counts[j]` slices and sends chunk `j` to rank `j`; every rank
    concatenates what it receives in rank order. The counts are values, so
    the sizes may depend on the data (MPI_Alltoallv, or NCCL send/recv
    after a count exchange). It spans all ranks; `send_counts` has one entry
    per rank and they sum to the input's size along dimension 0.

    ```mlir
    %r = braid.all_to_all_v %vals, %counts
        : (tensor<?xi64>, tensor<4xi64>) -> tensor<?xi64>
    ```

    Constraints:
    - the input has at least one dimension;
    - the result has the input's element type and rank, and its sizes
      except along dimension 0;
    - `send_counts` is static.
  }];
  let arguments = (ins AnyRankedTensor:$input, 1DTensorOf<[I64]>:$send_counts);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $send_counts attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_AllToAllVStartOp : Braid_Op<"all_to_all_v_start"> {
  let summary = "starts an asynchronous all_to_all_v";
  let description = [{
    The asynchronous form of `braid.all_to_all_v`: the same operands and
    constraints; the received chunks come from `braid.wait` on the returned
    token, whose value type is the result type the synchronous form would
    have. The counts are exchanged when it starts (each rank must know how
    much it receives before the data moves); the data moves until the wait,
    beside the computation in between (`braid-overlap` places it).

    ```mlir
    %t = braid.all_to_all_v_start %vals, %counts
        : (tensor<?xi64>, tensor<4xi64>) -> !braid.token<tensor<?xi64>>
    %r = braid.wait %t : !braid.token<tensor<?xi64>>
    ```

    Constraints: those of `braid.all_to_all_v`, with the token's value type
    as the result type.
  }];
  let arguments = (ins AnyRankedTensor:$input, 1DTensorOf<[I64]>:$send_counts);
  let results = (outs Braid_TokenType:$token);
  let assemblyFormat = [{
    $input `,` $send_counts attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_FusedAllToAllVStartOp : Braid_Op<"fused_all_to_all_v_start",
    [AttrSizedOperandSegments]> {
  let summary = "starts several all_to_all_v exchanges as one";
  let description = [{
    Starts member `m`'s exchange of `inputs[m]` by `send_counts[m]`, as
    `braid.all_to_all_v_start` would, for every member at once: one token
    per member, whose wait gives that member's received chunks. The members
    move as one exchange (`braid-bucket-collectives` fuses a function's
    routed indices this way): the counts of all members in one exchange of a
    ranks x members matrix, and the values in one `all_to_all_v` of a buffer
    that holds, for each destination, every member's chunk for it in member
    order. `braid-expand-fused-exchanges` writes it in those terms before
    the backends lower it.

    ```mlir
    %ta, %tb = braid.fused_all_to_all_v_start (%a, %b) counts(%ca, %cb)
        : (tensor<?xi64>, tensor<?xi64>), (tensor<4xi64>, tensor<4xi64>)
        -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
    ```

    With `wire_type`, a signless integer type narrower than the inputs',
    the values move as that type: the pack narrows them and the unpack
    widens them back (sign-extended), so every member receives what it
    would without it. It is for values known to fit, such as the routed
    row indices of tables of fewer than 2^31 rows (`braid-fuse-collective-
    compute` sets it there); a value that does not fit is a runtime error
    of the reference semantics.

    ```mlir
    %ta, %tb = braid.fused_all_to_all_v_start (%a, %b) counts(%ca, %cb)
        {wire_type = i32} : ...
    ```

    Constraints:
    - as many inputs, counts and tokens, at least one of each;
    - every input is one-dimensional, of one element type;
    - each member has `braid.all_to_all_v`'s constraints, and every member's
      `send_counts` has the same static size (one per rank);
    - `wire_type`, where given, is a signless integer type narrower than
      the inputs' integer element type.
  }];
  let arguments = (ins Variadic<1DTensorOf<[AnySignlessInteger, AnyFloat]>>:$inputs,
                       Variadic<1DTensorOf<[I64]>>:$send_counts,
                       OptionalAttr<TypeAttr>:$wire_type);
  let results = (outs Variadic<Braid_TokenType>:$tokens);
  let assemblyFormat = [{
    `(` $inputs `)` `counts` `(` $send_counts `)` attr-dict `:`
    `(` type($inputs) `)` `,` `(` type($send_counts) `)` `->` type($tokens)
  }];
  let extraClassDeclaration = [{
    /// The most chunks (ranks x members) one fused exchange is written out
    /// with: braid-expand-fused-exchanges cuts every chunk apart on both
    /// sides, and braid-bucket-collectives fuses no more.
    static constexpr int64_t kMaxChunks = 1 << 16;
  }];
  let hasVerifier = 1;
}

def Braid_ShardEmbeddingBagOp : Braid_Op<"shard_embedding_bag",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "pools bags over this rank's shard of a table";
  let description = [{
    Looks up the shard of `table` this rank holds under the table's
    placement: `values` are rows of the shard (rebased by
    `braid.bucketize`) and bag `b` has `lengths[b]` of them. The result
    has one row per bag and as many columns as the table's widest shard;
    a narrower shard fills the rest with zeros. `sum` adds rows and gives
    0 for an empty bag; `max` takes the element-wise maximum and gives
    -inf for an empty bag (the identity of a later max-reduction).
    Partial results of 16-bit tables accumulate in f32. A rank without a
    shard holds no rows, so any value is out of range there.

    ```mlir
    %p = braid.shard_embedding_bag @t(%vals, %lens) sum
        : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
    ```

    Constraints:
    - `table` names a `braid.table` with a placement other than
      data-parallel;
    - the mode is `sum` or `max` (`braid.combine_shards` finishes `mean`);
    - the result has the widest shard's columns and the table's
      accumulation type (f32 for f16 and bf16 tables, else the table's).
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       1DTensorOf<[AnySignlessInteger]>:$values,
                       1DTensorOf<[I64]>:$lengths,
                       Braid_PoolingMode:$mode);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $table `(` $values `,` $lengths `)` $mode attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_CombineShardsOp : Braid_Op<"combine_shards",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "assembles this rank's pooled rows from shard results";
  let description = [{
    `received` holds one or more parts of `bags_per_rank` rows, the
    partial results of the shard owners for this rank's bags. For a
    column-wise table there is one part per shard, in increasing rank
    order, and the parts' leading columns are concatenated; otherwise
    there is one part (row-wise partials arrive already reduced). The
    first B rows are kept, B being the local bags of `offsets`, and the
    pooling finished: `mean` divides by the bag's size, and `mean` and
    `max` give 0 for an empty bag. The result has the table's element type.

    ```mlir
    %e = braid.combine_shards @t(%recv, %off) mean bags_per_rank = 4
        : (tensor<4x16xf32>, tensor<5xi64>) -> tensor<4x16xf32>
    ```

    Constraints:
    - `table` names a `braid.table` with a placement other than
      data-parallel;
    - `bags_per_rank` is positive and, with static offsets, at least the
      number of local bags; static received rows are `bags_per_rank`
      times the number of parts;
    - `received` has the widest shard's columns and the table's
      accumulation type;
    - the result has the table's dim and element type, and one row per
      local bag where static.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       2DTensorOf<[AnyFloat]>:$received,
                       1DTensorOf<[AnySignlessInteger]>:$offsets,
                       Braid_PoolingMode:$mode,
                       I64Attr:$bags_per_rank);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $table `(` $received `,` $offsets `)` $mode `bags_per_rank` `=` $bags_per_rank
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // BRAID_DIALECT_BRAID_IR_BRAIDSHARDOPS_TD
