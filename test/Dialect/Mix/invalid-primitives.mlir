// RUN: mix-opt %s -split-input-file -verify-diagnostics

// One case per distinct error message of the primitive ops' verifiers
// (MixPrimitiveOps.cpp), in the order they appear there. The primitives are
// what the decompositions and autodiff build, so these guard the compiler's
// own IR as much as a user's.

func.func @reduce_dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'mix.reduce_sum' op dimension 2 is out of range for rank 2}}
  %0 = mix.reduce_sum %x dims [2] : tensor<4x8xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_dim_twice(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'mix.reduce_max' op dimension 1 is listed twice}}
  %0 = mix.reduce_max %x dims [1, 1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_result_shape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'mix.reduce_sum' op result must have shape (4,1), got (4,8)}}
  %0 = mix.reduce_sum %x dims [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @broadcast_rank(%x: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'mix.broadcast' op input and result must have the same rank}}
  %0 = mix.broadcast %x : tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @broadcast_size(%x: tensor<2x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'mix.broadcast' op cannot broadcast (2,8) to (4,8)}}
  %0 = mix.broadcast %x : tensor<2x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @matmul_rank(%a: tensor<4x8xf32>, %b: tensor<2x8x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{'mix.matmul' op operands must have the same rank, at least 2}}
  %0 = mix.matmul %a, %b : (tensor<4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error @+1 {{'mix.matmul' op batch dimensions differ}}
  %0 = mix.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<5x8xf32>) -> tensor<4x8xf32> {
  // With transpose_lhs, lhs contributes its 4 rows as the contraction.
  // expected-error @+1 {{'mix.matmul' op contraction sizes differ: 4 and 5}}
  %0 = mix.matmul %a, %b transpose_lhs : (tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<5x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'mix.matmul' op result must have shape (4,5), got (4,8)}}
  %0 = mix.matmul %a, %b transpose_rhs : (tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @transpose_short(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{'mix.transpose' op permutation must list every dimension once}}
  %0 = mix.transpose %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @transpose_repeat(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error @+1 {{'mix.transpose' op dimension 1 is listed twice}}
  %0 = mix.transpose %x [1, 1, 2] : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  return %0 : tensor<3x3x4xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{'mix.reshape' op cannot reshape (2,3) to (7)}}
  %0 = mix.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @slice_rank(%x: tensor<2x8xf32>) -> tensor<2x4x1xf32> {
  // expected-error @+1 {{'mix.slice' op operands must have the same rank, and dim must be one of its dimensions}}
  %0 = mix.slice %x dim 1 offset 0 : tensor<2x8xf32> -> tensor<2x4x1xf32>
  return %0 : tensor<2x4x1xf32>
}

// -----

func.func @slice_range(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'mix.slice' op range [6, 10) of dimension 1 does not fit (2,8)}}
  %0 = mix.slice %x dim 1 offset 6 : tensor<2x8xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @pad_range(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'mix.pad' op range [5, 9) of dimension 1 does not fit (2,8)}}
  %0 = mix.pad %x dim 1 offset 5 : tensor<2x4xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @rank_slice_rank(%x: tensor<4x8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'mix.rank_slice' op operands must have the same rank, and dim must be one of its dimensions}}
  %0 = mix.rank_slice %x dim 0 shards 2 : tensor<4x8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @rank_slice_share(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'mix.rank_slice' op (4,3) is not one of 2 equal parts of dimension 1 of (4,8)}}
  %0 = mix.rank_slice %x dim 1 shards 2 : tensor<4x8xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @rank_pad_share(%x: tensor<2x8xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{'mix.rank_pad' op (2,8) is not one of 4 equal parts of dimension 0 of (6,8)}}
  %0 = mix.rank_pad %x dim 0 shards 4 : tensor<2x8xf32> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

func.func @concat_dim(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'mix.concat' op operands must have the same rank, and dim must be one of its dimensions}}
  %0 = mix.concat %a, %b dim 2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @concat_other_dims(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'mix.concat' op operands differ outside the concatenated dimension}}
  %0 = mix.concat %a, %b dim 1 : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @gather_table(%t: tensor<8xf32>, %ids: tensor<2x3xi32>) -> tensor<2x3x1xf32> {
  // expected-error @+1 {{'mix.gather' op table must be (V, d)}}
  %0 = mix.gather %t, %ids : (tensor<8xf32>, tensor<2x3xi32>) -> tensor<2x3x1xf32>
  return %0 : tensor<2x3x1xf32>
}

// -----

func.func @scatter_result(%u: tensor<2x3x4xf32>, %ids: tensor<2x3xi32>) -> tensor<8xf32> {
  // expected-error @+1 {{'mix.scatter_add' op result must be (V, d)}}
  %0 = mix.scatter_add %u, %ids : (tensor<2x3x4xf32>, tensor<2x3xi32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @take_along_ids(%x: tensor<2x3x5xf32>, %ids: tensor<2x4xi32>) -> tensor<2x4x1xf32> {
  // expected-error @+1 {{'mix.take_along' op ids must have the input's shape without its last dimension}}
  %0 = mix.take_along %x, %ids : (tensor<2x3x5xf32>, tensor<2x4xi32>) -> tensor<2x4x1xf32>
  return %0 : tensor<2x4x1xf32>
}

// -----

func.func @put_along_ids(%x: tensor<2x3x1xf32>, %ids: tensor<2x4xi32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{'mix.put_along' op ids must have the result's shape without its last dimension}}
  %0 = mix.put_along %x, %ids : (tensor<2x3x1xf32>, tensor<2x4xi32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @cumsum_dim(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'mix.cumsum' op dim is out of range}}
  %0 = mix.cumsum %x dim 2 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @causal_mask_shape() -> tensor<4x5xf32> {
  // expected-error @+1 {{'mix.causal_mask' op result must be (S, prefix + S), got (4,5)}}
  %0 = mix.causal_mask prefix 2 : tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @causal_mask_at_shape(%pos: tensor<i32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'mix.causal_mask' op result must be (Q, prefix + K) with K >= Q, got (2,3)}}
  %0 = mix.causal_mask prefix 2 at %pos : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @dynamic_slice_rank(%x: tensor<8x4xf32>, %pos: tensor<i32>) -> tensor<1x4x1xf32> {
  // expected-error @+1 {{'mix.dynamic_slice' op operands must have the same rank, and dim must be one of its dimensions}}
  %0 = mix.dynamic_slice %x[%pos] dim 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}

// -----

func.func @dynamic_slice_larger(%x: tensor<8x4xf32>, %pos: tensor<i32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'mix.dynamic_slice' op (2,5) is not a range of dimension 0 of (8,4)}}
  %0 = mix.dynamic_slice %x[%pos] dim 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @dynamic_slice_position(%x: tensor<8x4xf32>, %pos: tensor<1xi32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'mix.dynamic_slice' op operand #1 must be 0D tensor of 32-bit signless integer values}}
  %0 = mix.dynamic_slice %x[%pos] dim 0 : (tensor<8x4xf32>, tensor<1xi32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @dynamic_update_slice_type(%x: tensor<8x4xf32>, %u: tensor<1x4xf32>, %pos: tensor<i32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{'mix.dynamic_update_slice' op result must have the input's type}}
  %0 = mix.dynamic_update_slice %x, %u[%pos] dim 0 : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<i32>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}

// -----

func.func @dynamic_update_slice_update(%x: tensor<8x4xf32>, %u: tensor<9x4xf32>, %pos: tensor<i32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'mix.dynamic_update_slice' op (9,4) is not a range of dimension 0 of (8,4)}}
  %0 = mix.dynamic_update_slice %x, %u[%pos] dim 0 : (tensor<8x4xf32>, tensor<9x4xf32>, tensor<i32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
