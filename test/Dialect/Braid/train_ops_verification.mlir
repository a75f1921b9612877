// RUN: braid-opt %s -split-input-file -verify-diagnostics
// The training-step ops braid-differentiate emits: one case per verifier rule.

func.func @bce_shape(%z: tensor<4x2xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{logits must be [batch, 1]}}
  %l, %g = braid.bce_with_logits %z, %y scale = 0.25 : tensor<4x2xf32>, tensor<4xf32> -> tensor<f32>, tensor<4x2xf32>
  return
}

// -----

func.func @bce_labels(%z: tensor<4x1xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{logits have 4 rows but there are 3 labels}}
  %l, %g = braid.bce_with_logits %z, %y scale = 0.25 : tensor<4x1xf32>, tensor<3xf32> -> tensor<f32>, tensor<4x1xf32>
  return
}

// -----

func.func @bce_grad_type(%z: tensor<4x1xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{logits_grad must have the logits' type}}
  %l, %g = braid.bce_with_logits %z, %y scale = 0.25 : tensor<4x1xf32>, tensor<4xf32> -> tensor<f32>, tensor<?x1xf32>
  return
}

// -----

func.func @bce_scale(%z: tensor<4x1xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{scale must be finite and positive, got 0}}
  %l, %g = braid.bce_with_logits %z, %y scale = 0.0 : tensor<4x1xf32>, tensor<4xf32> -> tensor<f32>, tensor<4x1xf32>
  return
}

// -----

func.func @linear_grad_in(%x: tensor<4x3xf32>, %w: tensor<2x5xf32>, %y: tensor<4x2xf32>) {
  // expected-error @+1 {{input has 3 columns but weight has 5}}
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %y relu : (tensor<4x3xf32>, tensor<2x5xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<2x5xf32>, tensor<2xf32>)
  return
}

// -----

func.func @linear_grad_out(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %y: tensor<4x7xf32>) {
  // expected-error @+1 {{result and result_grad must be [batch, 2]}}
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %y relu : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<4x7xf32>, tensor<4x7xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>)
  return
}

// -----

func.func @linear_grad_bias(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %y: tensor<4x2xf32>) {
  // expected-error @+1 {{bias_grad has shape of 'tensor<3xf32>', expected that of its forward value}}
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %y none : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @linear_grad_part_name(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %y: tensor<4x2xf32>) {
  // expected-error @+1 {{'braid.grad_part' must be "input" or "params" on a braid.linear_grad, got "both"}}
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %y none {braid.grad_part = "both"} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>)
  return
}

// -----

func.func @linear_grad_input_part(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %y: tensor<4x2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{computes only its input gradient (braid.grad_part = "input"), but its weight or bias gradient is used}}
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %y none {braid.grad_part = "input"} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>)
  return %dw : tensor<2x3xf32>
}

// -----

func.func @linear_grad_params_part(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %y: tensor<4x2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{computes only its weight and bias gradients (braid.grad_part = "params"), but its input gradient is used}}
  %dx, %dw, %db = braid.linear_grad %x, %w, %y, %y none {braid.grad_part = "params"} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>)
  return %dx : tensor<4x3xf32>
}

// -----

func.func @interaction_grad_count(%d: tensor<4x8xf32>, %e: tensor<4x8xf32>, %g: tensor<4x9xf32>) {
  // expected-error @+1 {{has 1 results for 2 features}}
  %dd = braid.interaction_grad dot %g, %d, %e : (tensor<4x9xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @interaction_grad_shape(%d: tensor<4x8xf32>, %e: tensor<4x8xf32>, %g: tensor<4x9xf32>) {
  // expected-error @+1 {{gradient 'tensor<4x7xf32>' does not have its feature's shape 'tensor<4x8xf32>'}}
  %dd, %de = braid.interaction_grad dot %g, %d, %e : (tensor<4x9xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x7xf32>)
  return
}

// -----

func.func @interaction_grad_width(%d: tensor<4x8xf32>, %e: tensor<4x8xf32>, %g: tensor<4x10xf32>) {
  // expected-error @+1 {{result_grad has 10 columns but the interaction has 9}}
  %dd, %de = braid.interaction_grad dot %g, %d, %e : (tensor<4x10xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @interaction_grad_dynamic(%d: tensor<4x?xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+1 {{features need static widths}}
  %dd = braid.interaction_grad cat %g, %d : (tensor<4x8xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
func.func @update_columns(%i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x5xf32>) {
  // expected-error @+1 {{pooled_grad has 5 columns but table 't' needs 4}}
  braid.embedding_bag_update @t(%i, %o, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<3xi64>, tensor<2x5xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0
func.func @update_optimizer(%i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{'braid.optimizer' embedding: 'type' must be one of sgd adagrad rowwise_adagrad}}
  braid.embedding_bag_update @t(%i, %o, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "adam"} : tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>
  return
}

// -----

func.func @update_no_table(%i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{'t' does not name a braid.table}}
  braid.embedding_bag_update @t(%i, %o, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 5, 10]>
func.func @shard_update_mean(%v: tensor<?xi64>, %l: tensor<?xi64>, %g: tensor<?x4xf32>) {
  // expected-error @+1 {{mode must be sum or max}}
  braid.shard_embedding_bag_update @t(%v, %l, %g) mean optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<?xi64>, tensor<?x4xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1]>
func.func @shard_update_replicated(%v: tensor<?xi64>, %l: tensor<?xi64>, %g: tensor<?x4xf32>) {
  // expected-error @+1 {{table 't' needs a placement other than data_parallel}}
  braid.shard_embedding_bag_update @t(%v, %l, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<?xi64>, tensor<?x4xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.column_wise<ranks = [0, 1], col_offsets = [0, 2, 4]>
func.func @shard_update_width(%v: tensor<?xi64>, %l: tensor<?xi64>, %g: tensor<?x4xf32>) {
  // expected-error @+1 {{pooled_grad has 4 columns but table 't' needs 2}}
  braid.shard_embedding_bag_update @t(%v, %l, %g) sum optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<?xi64>, tensor<?xi64>, tensor<?x4xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 5, 10]>
func.func @combine_grad_slots(%g: tensor<?x4xf32>, %o: tensor<?xi64>) {
  // expected-error @+1 {{bags_per_rank must be between 1 and 1073741824, got 0}}
  %r = braid.combine_shards_grad @t(%g, %o) sum bags_per_rank = 0 : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.row_wise<ranks = [0, 1], row_offsets = [0, 5, 10]>
func.func @combine_grad_dim(%g: tensor<?x3xf32>, %o: tensor<?xi64>) {
  // expected-error @+1 {{result_grad has 3 columns but table 't' needs 4}}
  %r = braid.combine_shards_grad @t(%g, %o) sum bags_per_rank = 2 : (tensor<?x3xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.table_wise<rank = 0>
func.func @bag_grad_replicated(%i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{table 't' needs a data_parallel placement}}
  %d = braid.embedding_bag_grad @t(%i, %o, %g) sum : (tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>) -> tensor<10x4xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1]>
func.func @bag_grad_shape(%i: tensor<?xi64>, %o: tensor<3xi64>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{table_grad must be [10, 4], got 'tensor<9x4xf32>'}}
  %d = braid.embedding_bag_grad @t(%i, %o, %g) sum : (tensor<?xi64>, tensor<3xi64>, tensor<2x4xf32>) -> tensor<9x4xf32>
  return
}

// -----

braid.table @t : tensor<10x4xf32> pooling_factor = 1.0 placement = #braid.data_parallel<ranks = [0, 1]>
func.func @table_update_shape(%g: tensor<10x3xf32>) {
  // expected-error @+1 {{table_grad must be [10, 4], got 'tensor<10x3xf32>'}}
  braid.table_update @t(%g) optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : tensor<10x3xf32>
  return
}

// -----

func.func @dense_update_states(%w: tensor<2x3xf32>, %g: tensor<2x3xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{adagrad keeps 1 state tensor(s), got 0 operand(s) and 0 result(s)}}
  %w2 = braid.dense_update %w, %g step %t optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dense_update_grad(%w: tensor<2x3xf32>, %g: tensor<3x2xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{grad 'tensor<3x2xf32>' does not have the parameter's shape}}
  %w2 = braid.dense_update %w, %g step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<i64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dense_update_result(%w: tensor<2x3xf32>, %g: tensor<2x3xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{new_param must have the parameter's type 'tensor<2x3xf32>'}}
  %w2 = braid.dense_update %w, %g step %t optimizer = {lr = 1.0e-01 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf16>
  return
}

// -----

func.func @dense_update_lr(%w: tensor<2x3xf32>, %g: tensor<2x3xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{'braid.optimizer' dense: 'lr' must be finite and positive, got -1}}
  %w2 = braid.dense_update %w, %g step %t optimizer = {lr = -1.0 : f64, type = "sgd"} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dense_update_state_shape(%w: tensor<2x3xf32>, %g: tensor<2x3xf32>, %t: tensor<i64>, %s: tensor<3xf32>) {
  // expected-error @+1 {{state 'tensor<3xf32>' must have the parameter's shape and its result's type}}
  %w2, %s2 = braid.dense_update %w, %g step %t state(%s) optimizer = {eps = 1.0e-10 : f64, lr = 1.0e-01 : f64, type = "adagrad"} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return
}

// -----

// Every feature of a dot interaction has the dense dim: the reference and
// the kernels index each with the first one's width.
func.func @interaction_grad_dot_widths(%d: tensor<4x4xf32>, %a: tensor<4x2xf32>, %b: tensor<4x4xf32>, %g: tensor<4x7xf32>) {
  // expected-error @+1 {{dot interaction needs every feature to have the dense dim 4, but a feature is 'tensor<4x2xf32>'}}
  %dd, %da, %db = braid.interaction_grad dot %g, %d, %a, %b : (tensor<4x7xf32>, tensor<4x4xf32>, tensor<4x2xf32>, tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x2xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @interaction_grad_zero_width(%d: tensor<4x0xf32>, %g: tensor<4x0xf32>) {
  // expected-error @+1 {{features need at least one column, got 'tensor<4x0xf32>'}}
  %dd = braid.interaction_grad cat %g, %d : (tensor<4x0xf32>, tensor<4x0xf32>) -> tensor<4x0xf32>
  return
}
