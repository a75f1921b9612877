// RUN: braid-opt %s -split-input-file -verify-diagnostics

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.data_parallel<ranks = [0, 1]>
func.func @data_parallel(%idx: tensor<?xi64>, %off: tensor<3xi64>) {
  // expected-error @+1 {{table 't' needs a placement other than data_parallel}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [0, 1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0
func.func @no_placement(%v: tensor<?xi64>, %l: tensor<?xi64>) {
  // expected-error @+1 {{table 't' needs a placement other than data_parallel}}
  %0 = braid.shard_embedding_bag @t(%v, %l) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
  return
}

// -----

func.func @no_table(%v: tensor<?xi64>, %l: tensor<?xi64>) {
  // expected-error @+1 {{'missing' does not name a braid.table}}
  %0 = braid.shard_embedding_bag @missing(%v, %l) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @order(%idx: tensor<?xi64>, %off: tensor<3xi64>) {
  // expected-error @+1 {{destinations must be non-negative and strictly increasing}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [1, 0] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<4xi64>, tensor<?xi64>, tensor<2xi64>)
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @missing_owner(%idx: tensor<?xi64>, %off: tensor<3xi64>) {
  // expected-error @+1 {{rank 1 holds a shard of table 't' but is not a destination}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [0] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<2xi64>)
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @slots(%idx: tensor<?xi64>, %off: tensor<4xi64>) {
  // expected-error @+1 {{there are 3 local bags but bags_per_rank is only 2}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<4xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<2xi64>)
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @negative_slots(%idx: tensor<?xi64>, %off: tensor<?xi64>) {
  // expected-error @+1 {{bags_per_rank must be between 0 and 1073741824, got -1}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [1] bags_per_rank = -1 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<2xi64>)
  return
}

// -----

// 2^62 slots: the lengths' size (slots times destinations) overflowed.
braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @huge_slots(%idx: tensor<?xi64>, %off: tensor<?xi64>) {
  // expected-error @+1 {{bags_per_rank must be between 0 and 1073741824, got 4611686018427387904}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [0, 1] bags_per_rank = 4611686018427387904 : (tensor<?xi64>, tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<2xi64>)
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @lengths(%idx: tensor<?xi64>, %off: tensor<3xi64>) {
  // expected-error @+1 {{lengths have 3 entries but 1 destinations of 2 bags need 2}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<3xi64>, tensor<?xi64>, tensor<2xi64>)
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @values(%idx: tensor<?xi64>, %off: tensor<3xi64>) {
  // expected-error @+1 {{values must have the indices' element type 'i64'}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<?xi32>, tensor<2xi64>)
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @dynamic_counts(%idx: tensor<?xi64>, %off: tensor<3xi64>) {
  // expected-error @+1 {{send_counts must be static (one per rank)}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<?xi64>)
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 1>
func.func @few_counts(%idx: tensor<?xi64>, %off: tensor<3xi64>) {
  // expected-error @+1 {{send_counts has 1 entries but destination 1 needs more}}
  %l, %v, %c = braid.bucketize @t(%idx, %off) to [1] bags_per_rank = 2 : (tensor<?xi64>, tensor<3xi64>) -> (tensor<2xi64>, tensor<?xi64>, tensor<1xi64>)
  return
}

// -----

func.func @a2av_scalar(%x: tensor<f32>, %c: tensor<2xi64>) {
  // expected-error @+1 {{the input needs at least one dimension}}
  %0 = braid.all_to_all_v %x, %c : (tensor<f32>, tensor<2xi64>) -> tensor<f32>
  return
}

// -----

func.func @a2av_type(%x: tensor<?x4xf32>, %c: tensor<2xi64>) {
  // expected-error @+1 {{the result must have the input's element type and rank}}
  %0 = braid.all_to_all_v %x, %c : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x4xf16>
  return
}

// -----

func.func @a2av_dim(%x: tensor<?x4xf32>, %c: tensor<2xi64>) {
  // expected-error @+1 {{the result differs from the input along dimension 1}}
  %0 = braid.all_to_all_v %x, %c : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x5xf32>
  return
}

// -----

func.func @a2av_counts(%x: tensor<?x4xf32>, %c: tensor<?xi64>) {
  // expected-error @+1 {{send_counts must be static (one per rank)}}
  %0 = braid.all_to_all_v %x, %c : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  return
}

// -----

// The start form checks the token's value type as the synchronous form
// checks its result.
func.func @a2av_start_type(%x: tensor<?x4xf32>, %c: tensor<2xi64>) {
  // expected-error @+1 {{the result must have the input's element type and rank}}
  %0 = braid.all_to_all_v_start %x, %c : (tensor<?x4xf32>, tensor<2xi64>) -> !braid.token<tensor<?xf32>>
  return
}

// -----

func.func @a2av_start_dim(%x: tensor<?x4xf32>, %c: tensor<2xi64>) {
  // expected-error @+1 {{the result differs from the input along dimension 1}}
  %0 = braid.all_to_all_v_start %x, %c : (tensor<?x4xf32>, tensor<2xi64>) -> !braid.token<tensor<?x3xf32>>
  return
}

// -----

func.func @a2av_start_counts(%x: tensor<?xi64>, %c: tensor<?xi64>) {
  // expected-error @+1 {{send_counts must be static (one per rank)}}
  %0 = braid.all_to_all_v_start %x, %c : (tensor<?xi64>, tensor<?xi64>) -> !braid.token<tensor<?xi64>>
  return
}

// -----

// A fused start: as many inputs, counts and tokens.
func.func @fused_a2av_members(%a: tensor<?xi64>, %b: tensor<?xi64>, %c: tensor<2xi64>) {
  // expected-error @+1 {{needs as many inputs, send_counts and tokens, at least one; got 2, 1 and 2}}
  %0:2 = braid.fused_all_to_all_v_start (%a, %b) counts(%c) : (tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
  return
}

// -----

func.func @fused_a2av_element(%a: tensor<?xi64>, %b: tensor<?xi32>, %c: tensor<2xi64>) {
  // expected-error @+1 {{member 1 sends 'tensor<?xi32>' but member 0 sends elements of 'i64'}}
  %0:2 = braid.fused_all_to_all_v_start (%a, %b) counts(%c, %c) : (tensor<?xi64>, tensor<?xi32>), (tensor<2xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi32>>
  return
}

// -----

func.func @fused_a2av_ranks(%a: tensor<?xi64>, %b: tensor<?xi64>, %c: tensor<2xi64>, %d: tensor<4xi64>) {
  // expected-error @+1 {{member 1 has send_counts 'tensor<4xi64>' but member 0 has 'tensor<2xi64>'}}
  %0:2 = braid.fused_all_to_all_v_start (%a, %b) counts(%c, %d) : (tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>, tensor<4xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
  return
}

// -----

// Each member is checked as an all_to_all_v_start.
func.func @fused_a2av_token(%a: tensor<?xi64>, %b: tensor<?xi64>, %c: tensor<2xi64>) {
  // expected-error @+1 {{the result must have the input's element type and rank}}
  %0:2 = braid.fused_all_to_all_v_start (%a, %b) counts(%c, %c) : (tensor<?xi64>, tensor<?xi64>), (tensor<2xi64>, tensor<2xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi32>>
  return
}

// -----

// A wire type must be a narrower signless integer than the values.
func.func @fused_a2av_wire_float(%a: tensor<?xi64>, %c: tensor<2xi64>) {
  // expected-error @+1 {{wire_type must be a signless integer type narrower than the inputs' 'i64', got 'f32'}}
  %0 = braid.fused_all_to_all_v_start (%a) counts(%c) {wire_type = f32} : (tensor<?xi64>), (tensor<2xi64>) -> !braid.token<tensor<?xi64>>
  return
}

// -----

func.func @fused_a2av_wire_width(%a: tensor<?xi32>, %c: tensor<2xi64>) {
  // expected-error @+1 {{wire_type must be a signless integer type narrower than the inputs' 'i32', got 'i32'}}
  %0 = braid.fused_all_to_all_v_start (%a) counts(%c) {wire_type = i32} : (tensor<?xi32>), (tensor<2xi64>) -> !braid.token<tensor<?xi32>>
  return
}

// -----

func.func @fused_a2av_wire_signed(%a: tensor<?xi64>, %c: tensor<2xi64>) {
  // expected-error @+1 {{wire_type must be a signless integer type narrower than the inputs' 'i64', got 'si32'}}
  %0 = braid.fused_all_to_all_v_start (%a) counts(%c) {wire_type = si32} : (tensor<?xi64>), (tensor<2xi64>) -> !braid.token<tensor<?xi64>>
  return
}

// -----

func.func @fused_a2av_wire_values(%a: tensor<?xf64>, %c: tensor<2xi64>) {
  // expected-error @+1 {{wire_type must be a signless integer type narrower than the inputs' 'f64', got 'i32'}}
  %0 = braid.fused_all_to_all_v_start (%a) counts(%c) {wire_type = i32} : (tensor<?xf64>), (tensor<2xi64>) -> !braid.token<tensor<?xf64>>
  return
}

// -----

func.func @fused_a2av_counts(%a: tensor<?xi64>, %b: tensor<?xi64>, %c: tensor<?xi64>) {
  // expected-error @+1 {{send_counts must be static (one per rank)}}
  %0:2 = braid.fused_all_to_all_v_start (%a, %b) counts(%c, %c) : (tensor<?xi64>, tensor<?xi64>), (tensor<?xi64>, tensor<?xi64>) -> !braid.token<tensor<?xi64>>, !braid.token<tensor<?xi64>>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 0>
func.func @mean_partial(%v: tensor<?xi64>, %l: tensor<?xi64>) {
  // expected-error @+1 {{mode must be sum or max; combine_shards finishes mean}}
  %0 = braid.shard_embedding_bag @t(%v, %l) mean : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf16> pooling_factor = 2.0 placement = #braid.table_wise<rank = 0>
func.func @accumulation(%v: tensor<?xi64>, %l: tensor<?xi64>) {
  // expected-error @+1 {{result element type 'f16' is not the accumulation type 'f32' of table 't'}}
  %0 = braid.shard_embedding_bag @t(%v, %l) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf16>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.column_wise<ranks = [0, 1], col_offsets = [0, 6, 16]>
func.func @width(%v: tensor<?xi64>, %l: tensor<?xi64>) {
  // expected-error @+1 {{result has 16 columns but the widest shard of table 't' has 10}}
  %0 = braid.shard_embedding_bag @t(%v, %l) sum : (tensor<?xi64>, tensor<?xi64>) -> tensor<?x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 0>
func.func @zero_slots(%r: tensor<4x16xf32>, %off: tensor<?xi64>) {
  // expected-error @+1 {{bags_per_rank must be positive, got 0}}
  %0 = braid.combine_shards @t(%r, %off) sum bags_per_rank = 0 : (tensor<4x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 0>
func.func @multiple(%r: tensor<5x16xf32>, %off: tensor<?xi64>) {
  // expected-error @+1 {{received has 5 rows, not a multiple of bags_per_rank 2}}
  %0 = braid.combine_shards @t(%r, %off) sum bags_per_rank = 2 : (tensor<5x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 0>
func.func @rows(%r: tensor<2x16xf32>, %off: tensor<3xi64>) {
  // expected-error @+1 {{the result has 3 rows but there are 2 local bags}}
  %0 = braid.combine_shards @t(%r, %off) sum bags_per_rank = 2 : (tensor<2x16xf32>, tensor<3xi64>) -> tensor<3x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.column_wise<ranks = [0, 1], col_offsets = [0, 8, 16]>
func.func @parts(%r: tensor<2x8xf32>, %off: tensor<?xi64>) {
  // expected-error @+1 {{received has 2 rows but 2 part(s) of 2 bags need 4}}
  %0 = braid.combine_shards @t(%r, %off) sum bags_per_rank = 2 : (tensor<2x8xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf16> pooling_factor = 2.0 placement = #braid.table_wise<rank = 0>
func.func @result_type(%r: tensor<2x16xf32>, %off: tensor<?xi64>) {
  // expected-error @+1 {{result element type 'f32' differs from table 't' element type 'f16'}}
  %0 = braid.combine_shards @t(%r, %off) sum bags_per_rank = 2 : (tensor<2x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  return
}

// -----

braid.table @t : tensor<100x16xf32> pooling_factor = 2.0 placement = #braid.table_wise<rank = 0>
func.func @result_dim(%r: tensor<2x16xf32>, %off: tensor<?xi64>) {
  // expected-error @+1 {{result has 8 columns but table 't' has dim 16}}
  %0 = braid.combine_shards @t(%r, %off) sum bags_per_rank = 2 : (tensor<2x16xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return
}

// -----

// expected-error @+1 {{'braid.batch_split' has 3 entries but the cluster has 2 ranks}}
module attributes {braid.cluster = #braid.cluster<hardware = "dgx-h100", nodes = 1, ranks_per_node = 2>, braid.batch_split = array<i64: 1, 1, 1>} {
}

// -----

// expected-error @+1 {{'braid.batch_split' must be a non-empty array<i64> of non-negative sample counts on a module}}
module attributes {braid.batch_split = array<i64: 1, -1>} {
}

// -----

// expected-error @+1 {{'braid.profiled_ops' must be an array of strings on a module}}
module attributes {braid.profiled_ops = ["linear", 3]} {
}
