//===- BraidTrainOps.td - Ops of the training step ----------*- tablegen -*-===//
//
// This file declares the operations braid-differentiate emits to build a
// training step from a forward program: the loss, the gradient of each
// forward op that needs its own kernel, the fused embedding backward and
// optimizer updates, and the dense optimizer update. Gradients are f32
// whatever the element type of the value they belong to (a 16-bit table's
// pooled rows have f32 gradients), so that no precision is lost between the
// loss and the update.
//
// The optimizer of an update op is a copy of one part of the module's
// braid.optimizer, verified the same way.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_DIALECT_BRAID_IR_BRAIDTRAINOPS_TD
#define BRAID_DIALECT_BRAID_IR_BRAIDTRAINOPS_TD

def Braid_BceWithLogitsOp : Braid_Op<"bce_with_logits", [Pure]> {
  let summary = "binary cross-entropy of a logit and its gradient";
  let description = [{
    For logits `z` [B, 1] and labels `y` [B], computes
    `loss = scale * sum_b (max(z_b, 0) - z_b y_b + log(1 + exp(-|z_b|)))`
    (the stable form of PyTorch's `BCEWithLogitsLoss`) and its gradient
    `logits_grad_b = scale * (sigmoid(z_b) - y_b)`. With `scale` one over
    the global batch, the loss of every rank's bags adds up (one
    `all_reduce`) to the mean over the global batch.

    ```mlir
    %loss, %dz = braid.bce_with_logits %z, %y scale = 1.250000e-01
        : tensor<?x1xf32>, tensor<?xf32> -> tensor<f32>, tensor<?x1xf32>
    ```

    Constraints:
    - `logits` is [B, 1] and `labels` is [B] where static, and
      `logits_grad` has the type of `logits`;
    - `scale` is finite and positive.
  }];
  let arguments = (ins 2DTensorOf<[F32]>:$logits, 1DTensorOf<[F32]>:$labels,
                       F64Attr:$scale);
  let results = (outs 0DTensorOf<[F32]>:$loss, 2DTensorOf<[F32]>:$logits_grad);
  let assemblyFormat = [{
    $logits `,` $labels `scale` `=` $scale attr-dict `:` type($logits) `,`
    type($labels) `->` type($loss) `,` type($logits_grad)
  }];
  let hasVerifier = 1;
}

def Braid_LinearGradOp : Braid_Op<"linear_grad", [Pure]> {
  let summary = "the gradients of a braid.linear";
  let description = [{
    Given the input `x`, the weight `w` and the result `y` of
    `y = activation(x w^T + b)` and the gradient `dy` of `y`, computes the
    pre-activation gradient `g` (`dy` where `y > 0` for relu,
    `dy * y * (1 - y)` for sigmoid, `dy` for none) and from it
    `input_grad = g w`, `weight_grad = g^T x` and `bias_grad` the column
    sums of `g`.

    ```mlir
    %dx, %dw, %db = braid.linear_grad %x, %w, %y, %dy relu
        : (tensor<?x13xf32>, tensor<32x13xf32>, tensor<?x32xf32>, tensor<?x32xf32>)
          -> (tensor<?x13xf32>, tensor<32x13xf32>, tensor<32xf32>)
    ```

    A result nothing reads need not be computed: the backends and the
    simulator leave out the GEMM of an unread `input_grad` or
    `weight_grad`. `braid-defer-weight-gradients` splits one op into two
    copies marked `braid.grad_part = "input"` and `"params"`, which keeps
    them apart through CSE.

    Constraints:
    - `x` is [B, in], `w` is [out, in], `y` and `dy` are [B, out] where
      static;
    - the gradients have the shapes of `x`, `w` and [out], all f32;
    - with `braid.grad_part = "input"` the weight and bias gradients are
      unread, with `"params"` the input gradient is.
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                       2DTensorOf<[AnyFloat]>:$weight,
                       2DTensorOf<[AnyFloat]>:$result,
                       2DTensorOf<[F32]>:$result_grad,
                       Braid_Activation:$activation);
  let results = (outs 2DTensorOf<[F32]>:$input_grad,
                      2DTensorOf<[F32]>:$weight_grad,
                      1DTensorOf<[F32]>:$bias_grad);
  let assemblyFormat = [{
    $input `,` $weight `,` $result `,` $result_grad $activation attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_InteractionGradOp : Braid_Op<"interaction_grad",
    [Pure]> {
  let summary = "the gradients of a braid.interaction's features";
  let description = [{
    Given the gradient of a `braid.interaction`'s result and its features
    (the dense vector, then the pooled embeddings), returns one gradient
    per feature: for `cat` the result gradient's columns of that feature;
    for `dot` the dense vector's own columns plus, for each pairwise
    product `<f_i, f_k>`, its gradient times the other vector.

    ```mlir
    %dd, %de = braid.interaction_grad dot %dr, %d, %e
        : (tensor<?x17xf32>, tensor<?x16xf32>, tensor<?x16xf32>)
          -> (tensor<?x16xf32>, tensor<?x16xf32>)
    ```

    Constraints:
    - one result per feature, each f32 with its feature's shape;
    - `result_grad` has the interaction's width: the features' total
      columns for `cat`; for `dot`, with n features of dim d,
      d + n (n - 1) / 2.
  }];
  let arguments = (ins Braid_InteractionKind:$kind,
                       2DTensorOf<[F32]>:$result_grad,
                       2DTensorOf<[AnyFloat]>:$dense,
                       Variadic<2DTensorOf<[AnyFloat]>>:$embeddings);
  let results = (outs Variadic<2DTensorOf<[F32]>>:$feature_grads);
  let assemblyFormat = [{
    $kind $result_grad `,` $dense (`,` $embeddings^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_EmbeddingBagUpdateOp : Braid_Op<"embedding_bag_update",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a bag lookup's backward fused with the table's optimizer";
  let description = [{
    Updates the rows of `table` that the bags of `indices` and `offsets`
    read, given the gradient of the pooled result, the way FBGEMM's
    table-batched embedding does: each row's gradient is the sum of what
    its bags send it (`sum`: the bag's gradient; `mean`: that over the
    bag's size; `max`: per column, to the first row in bag order holding
    the maximum), then the embedding optimizer updates the row and its
    state. Rows not read are untouched; no gradient of the whole table
    exists. The program holds the table whole (one rank, or the table's
    only rank).

    ```mlir
    braid.embedding_bag_update @t(%idx, %off, %dp) sum
        optimizer = {eps = 1.0e-08 : f64, lr = 5.0e-02 : f64, type = "rowwise_adagrad"}
        : tensor<?xi64>, tensor<?xi64>, tensor<?x16xf32>
    ```

    Constraints:
    - `table` names a `braid.table`;
    - `pooled_grad` is [bags, dim] f32 where static;
    - `optimizer` is a valid `embedding` part of `braid.optimizer`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       1DTensorOf<[AnySignlessInteger]>:$indices,
                       1DTensorOf<[AnySignlessInteger]>:$offsets,
                       2DTensorOf<[F32]>:$pooled_grad,
                       Braid_PoolingMode:$mode,
                       DictionaryAttr:$optimizer);
  let assemblyFormat = [{
    $table `(` $indices `,` $offsets `,` $pooled_grad `)` $mode
    `optimizer` `=` $optimizer attr-dict `:` type($indices) `,`
    type($offsets) `,` type($pooled_grad)
  }];
  let hasVerifier = 1;
}

def Braid_ShardEmbeddingBagUpdateOp : Braid_Op<"shard_embedding_bag_update",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a shard lookup's backward fused with the table's optimizer";
  let description = [{
    The backward of `braid.shard_embedding_bag`, fused with the embedding
    optimizer: the bags `values` and `lengths` routed to this rank's
    shard receive `pooled_grad` (one row per bag, the widest shard's
    columns, of which this shard's leading columns are used), each read
    row of the shard sums what its bags send it (`sum`; `max`: per
    column, to the first row in bag order holding the shard's maximum),
    and the optimizer updates the row and its state. Only the shard's
    rows that were read are touched.

    ```mlir
    braid.shard_embedding_bag_update @t(%vals, %lens, %dp) sum
        optimizer = {lr = 1.0e-01 : f64, type = "sgd"}
        : tensor<?xi64>, tensor<?xi64>, tensor<?x16xf32>
    ```

    Constraints:
    - `table` names a `braid.table` with a placement other than
      data-parallel;
    - the mode is `sum` or `max`;
    - `pooled_grad` is f32 with the widest shard's columns;
    - `optimizer` is a valid `embedding` part of `braid.optimizer`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       1DTensorOf<[AnySignlessInteger]>:$values,
                       1DTensorOf<[I64]>:$lengths,
                       2DTensorOf<[F32]>:$pooled_grad,
                       Braid_PoolingMode:$mode,
                       DictionaryAttr:$optimizer);
  let assemblyFormat = [{
    $table `(` $values `,` $lengths `,` $pooled_grad `)` $mode
    `optimizer` `=` $optimizer attr-dict `:` type($values) `,`
    type($lengths) `,` type($pooled_grad)
  }];
  let hasVerifier = 1;
}

def Braid_CombineShardsGradOp : Braid_Op<"combine_shards_grad",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the gradient of braid.combine_shards's received parts";
  let description = [{
    The reverse of `braid.combine_shards`: from the gradient of the
    assembled rows (one per local bag) it builds the gradient of the
    received parts, in the layout they arrived in (`bags_per_rank` rows per
    part, the widest shard's columns). `mean` divides by the bag's size;
    empty bags of `mean` and `max`, the tail slots and the columns past a
    shard's width get zeros.

    ```mlir
    %dr = braid.combine_shards_grad @t(%de, %off) mean bags_per_rank = 4
        : (tensor<?x16xf32>, tensor<?xi64>) -> tensor<4x16xf32>
    ```

    Constraints:
    - `table` names a `braid.table` with a placement other than
      data-parallel;
    - `bags_per_rank` is positive;
    - `result_grad` has the table's dim and the result the widest shard's
      columns, both f32.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       2DTensorOf<[F32]>:$result_grad,
                       1DTensorOf<[AnySignlessInteger]>:$offsets,
                       Braid_PoolingMode:$mode,
                       I64Attr:$bags_per_rank);
  let results = (outs 2DTensorOf<[F32]>:$received_grad);
  let assemblyFormat = [{
    $table `(` $result_grad `,` $offsets `)` $mode `bags_per_rank` `=`
    $bags_per_rank attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_EmbeddingBagGradOp : Braid_Op<"embedding_bag_grad",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the whole-table gradient of a replicated table's lookup";
  let description = [{
    The gradient of every row of `table` from this rank's bags (zero for
    rows not read), with the rules of `braid.embedding_bag_update`. Only
    data-parallel tables on more than one rank use it: their replicas'
    gradients are summed by an `all_reduce` before `braid.table_update`,
    as DDP does for a replicated table. Sharded tables never materialize
    it.

    ```mlir
    %g = braid.embedding_bag_grad @t(%idx, %off, %dp) sum
        : (tensor<?xi64>, tensor<?xi64>, tensor<?x16xf32>) -> tensor<100x16xf32>
    ```

    Constraints:
    - `table` names a `braid.table` with a data-parallel placement;
    - `pooled_grad` is [bags, dim] f32 where static; the result is
      [rows, dim] f32.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       1DTensorOf<[AnySignlessInteger]>:$indices,
                       1DTensorOf<[AnySignlessInteger]>:$offsets,
                       2DTensorOf<[F32]>:$pooled_grad,
                       Braid_PoolingMode:$mode);
  let results = (outs 2DTensorOf<[F32]>:$table_grad);
  let assemblyFormat = [{
    $table `(` $indices `,` $offsets `,` $pooled_grad `)` $mode attr-dict
    `:` functional-type(operands, results)
  }];
}

def Braid_TableUpdateOp : Braid_Op<"table_update",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "applies the embedding optimizer to a replicated table";
  let description = [{
    Updates, with the embedding optimizer, every row of `table` whose
    gradient has a non-zero element; the other rows and their state are
    untouched (a row whose gradient is zero would not change under sgd,
    adagrad or rowwise_adagrad either). Every replica applies the same
    summed gradient, so the replicas stay equal.

    ```mlir
    braid.table_update @t(%g) optimizer = {lr = 1.0e-01 : f64, type = "sgd"}
        : tensor<100x16xf32>
    ```

    Constraints:
    - `table` names a `braid.table` with a data-parallel placement;
    - `table_grad` is [rows, dim] f32;
    - `optimizer` is a valid `embedding` part of `braid.optimizer`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table,
                       2DTensorOf<[F32]>:$table_grad,
                       DictionaryAttr:$optimizer);
  let assemblyFormat = [{
    $table `(` $table_grad `)` `optimizer` `=` $optimizer attr-dict `:`
    type($table_grad)
  }];
  let hasVerifier = 1;
}

def Braid_DenseUpdateOp : Braid_Op<"dense_update", [Pure]> {
  let summary = "one dense optimizer step of a parameter";
  let description = [{
    Returns the parameter and its optimizer state after one step of the
    dense optimizer with gradient `grad`, at step `step` (1 for the first;
    Adam's bias correction reads it): `sgd` has no state, `adagrad` one
    tensor (the sum of squared gradients), `adam` two (`exp_avg`,
    `exp_avg_sq`), each with the parameter's shape, in f32. The formulas
    are `torch.optim`'s.

    ```mlir
    %w2, %s2 = braid.dense_update %w, %g step %t state(%s)
        optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"}
        : (tensor<32x13xf32>, tensor<32x13xf32>, tensor<i64>, tensor<32x13xf32>)
          -> (tensor<32x13xf32>, tensor<32x13xf32>)
    ```

    Constraints:
    - `grad` and the state are f32 with the parameter's shape, and the
      results have the types of the parameter and the state;
    - the number of state tensors is the optimizer's;
    - `optimizer` is a valid `dense` part of `braid.optimizer`.
  }];
  let arguments = (ins AnyRankedTensor:$param, RankedTensorOf<[F32]>:$grad,
                       0DTensorOf<[I64]>:$step,
                       Variadic<RankedTensorOf<[F32]>>:$state,
                       DictionaryAttr:$optimizer);
  let results = (outs AnyRankedTensor:$new_param,
                      Variadic<RankedTensorOf<[F32]>>:$new_state);
  let assemblyFormat = [{
    $param `,` $grad `step` $step (`state` `(` $state^ `)`)?
    `optimizer` `=` $optimizer attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Braid_FusedDenseUpdateOp : Braid_Op<"fused_dense_update",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "one dense optimizer step of several parameters whose "
                "gradients lie in one buffer";
  let description = [{
    The dense optimizer step of every parameter in `params`, as one kernel:
    parameter `i`'s gradient is the `numel(params[i])` elements of the 1-D
    `grads` from `offsets[i]` on, in the parameter's row-major order (a
    gradient bucket's reduced buffer, which `braid-fuse-collective-compute`
    reads in place). Member `i` is exactly
    `braid.dense_update params[i], reshape(grads[offsets[i] ..]) step %t
    state(state[i*k] .. state[i*k + k - 1])`, `k` the optimizer's state
    count (`sgd` 0, `adagrad` 1, `adam` 2). The results are the new
    parameters, in order, then the new state (`getNewParams()`,
    `getNewState()`): member `i`'s state is `new_state[i*k ..]`.

    ```mlir
    %p:2, %s:2 = braid.fused_dense_update(%w, %b) grads %bucket
        offsets = [0, 64] step %t state(%sw, %sb)
        optimizer = {eps = 1.0e-10 : f64, lr = 5.0e-02 : f64, type = "adagrad"}
        : (tensor<8x8xf32>, tensor<8xf32>, tensor<73xf32>, tensor<i64>,
           tensor<8x8xf32>, tensor<8xf32>)
          -> (tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>)
    ```

    Constraints:
    - at least one parameter, each static and f32, one offset each;
    - each member's elements lie inside `grads`, and no two members'
      elements overlap;
    - `k` state tensors per member with its parameter's type, and the
      results have the types of the parameters and the state;
    - `optimizer` is a valid `dense` part of `braid.optimizer`.
  }];
  let arguments = (ins Variadic<RankedTensorOf<[F32]>>:$params,
                       1DTensorOf<[F32]>:$grads,
                       0DTensorOf<[I64]>:$step,
                       Variadic<RankedTensorOf<[F32]>>:$state,
                       DenseI64ArrayAttr:$offsets,
                       DictionaryAttr:$optimizer);
  let results = (outs Variadic<RankedTensorOf<[F32]>>:$updated);
  let extraClassDeclaration = [{
    /// The new parameters, one per parameter.
    ::mlir::ResultRange getNewParams() {
      return getUpdated().take_front(getParams().size());
    }
    /// The new state, the optimizer's count per parameter.
    ::mlir::ResultRange getNewState() {
      return getUpdated().drop_front(getParams().size());
    }
  }];
  let assemblyFormat = [{
    `(` $params `)` `grads` $grads `offsets` `=` $offsets `step` $step
    (`state` `(` $state^ `)`)? `optimizer` `=` $optimizer attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // BRAID_DIALECT_BRAID_IR_BRAIDTRAINOPS_TD
