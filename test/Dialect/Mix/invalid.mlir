// RUN: mix-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// One case per distinct error message of the mix verifiers (MixOps.cpp), in
// the order they appear there, followed by a few ODS-generated constraints.
// -allow-unregistered-dialect is only needed by the "must end in mix.yield"
// case: every registered terminator of mix-opt other than mix.yield
// (func.return, tensor.yield) has a parent constraint that fires first.

//===----------------------------------------------------------------------===//
// Elementwise broadcasting (add, sub, mul)
//===----------------------------------------------------------------------===//

func.func @add_operand_rank(%a: tensor<2x8x16xf32>, %b: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.add' op operand #1 has rank 2, but the result has rank 3}}
  %0 = mix.add %a, %b : tensor<2x8x16xf32>, tensor<8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @sub_operand_dim(%a: tensor<2x8x16xf32>, %b: tensor<2x4x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.sub' op operand #1 dimension 1 is 4, expected 8 (the result's) or 1}}
  %0 = mix.sub %a, %b : tensor<2x8x16xf32>, tensor<2x4x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @mul_lhs_dim(%a: tensor<2x8x8xf32>, %b: tensor<2x8x1xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.mul' op operand #0 dimension 2 is 8, expected 16 (the result's) or 1}}
  %0 = mix.mul %a, %b : tensor<2x8x8xf32>, tensor<2x8x1xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @mul_no_operand_reaches(%a: tensor<2x1x16xf32>, %b: tensor<2x1x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.mul' op result dimension 1 is 8, but no operand has that size}}
  %0 = mix.mul %a, %b : tensor<2x1x16xf32>, tensor<2x1x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<4x1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'mix.linear' op input must have rank >= 1}}
  %0 = mix.linear %x, %w : (tensor<f32>, tensor<4x1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x16xf32>, %w: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'mix.linear' op weight must have shape (out, in), got (64)}}
  %0 = mix.linear %x, %w : (tensor<2x16xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

func.func @linear_in_features(%x: tensor<2x8x16xf32>, %w: tensor<64x8xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.linear' op weight (64,8) expects 8 input features, but the input has 16}}
  %0 = mix.linear %x, %w : (tensor<2x8x16xf32>, tensor<64x8xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @linear_bias(%x: tensor<2x8x16xf32>, %w: tensor<64x16xf32>, %b: tensor<32xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.linear' op bias must have shape (64), got (32)}}
  %0 = mix.linear %x, %w, %b : (tensor<2x8x16xf32>, tensor<64x16xf32>, tensor<32xf32>) -> tensor<2x8x64xf32>
  return %0 : tensor<2x8x64xf32>
}

// -----

func.func @linear_result(%x: tensor<2x8x16xf32>, %w: tensor<64x16xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'mix.linear' op result must have shape (2,8,64), got (2,64)}}
  %0 = mix.linear %x, %w : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

// -----

func.func @embedding_tokens_rank(%t: tensor<16xi32>, %wte: tensor<256x16xf32>, %wpe: tensor<64x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'mix.embedding' op tokens must have shape (B,S), got (16)}}
  %0 = mix.embedding %t, %wte, %wpe : (tensor<16xi32>, tensor<256x16xf32>, tensor<64x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

func.func @embedding_tables_rank(%t: tensor<2x8xi32>, %wte: tensor<256xf32>, %wpe: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.embedding' op wte and wpe must be matrices (V,d) and (n_positions,d)}}
  %0 = mix.embedding %t, %wte, %wpe : (tensor<2x8xi32>, tensor<256xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @embedding_features(%t: tensor<2x8xi32>, %wte: tensor<256x16xf32>, %wpe: tensor<64x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.embedding' op wte has 16 features but wpe has 8}}
  %0 = mix.embedding %t, %wte, %wpe : (tensor<2x8xi32>, tensor<256x16xf32>, tensor<64x8xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @embedding_positions(%t: tensor<2x8xi64>, %wte: tensor<256x16xf32>, %wpe: tensor<4x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.embedding' op sequence length 8 exceeds the 4 positions of wpe}}
  %0 = mix.embedding %t, %wte, %wpe : (tensor<2x8xi64>, tensor<256x16xf32>, tensor<4x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @embedding_result(%t: tensor<2x8xi32>, %wte: tensor<256x16xf32>, %wpe: tensor<64x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.embedding' op result must have shape (2,8,16), got (2,8,32)}}
  %0 = mix.embedding %t, %wte, %wpe : (tensor<2x8xi32>, tensor<256x16xf32>, tensor<64x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

// -----

func.func @layer_norm_scalar_input(%x: tensor<f32>, %w: tensor<1xf32>, %b: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'mix.layer_norm' op input must have rank >= 1}}
  %0 = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<f32>, tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @layer_norm_zero_eps(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.layer_norm' op eps must be positive, got 0.000000e+00}}
  %0 = mix.layer_norm %x, %w, %b eps 0.0 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @layer_norm_negative_eps(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.layer_norm' op eps must be positive, got -1.000000e-05}}
  %0 = mix.layer_norm %x, %w, %b eps -1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @layer_norm_weight(%x: tensor<2x8x16xf32>, %w: tensor<8xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.layer_norm' op weight must have shape (16), got (8)}}
  %0 = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<8xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %b: tensor<1x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.layer_norm' op bias must have shape (16), got (1,16)}}
  %0 = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<1x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'mix.layer_norm' op result must have shape (2,8,16), got (2,16)}}
  %0 = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

// -----

func.func @cached_attention_cache(%qkv: tensor<2x1x48xf32>, %k: tensor<2x4x32x8xf32>, %pos: tensor<i32>) -> tensor<2x1x16xf32> {
  // expected-error @+1 {{'mix.cached_attention' op k_cache must be (B, heads, K, dh) = (2, 4, K >= 1, 4), got (2,4,32,8)}}
  %o:3 = mix.cached_attention %qkv, %k, %k at %pos heads 4 : (tensor<2x1x48xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>, tensor<i32>) -> (tensor<2x1x16xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>)
  return %o#0 : tensor<2x1x16xf32>
}

// -----

func.func @cached_attention_v_cache(%qkv: tensor<2x1x48xf32>, %k: tensor<2x4x32x4xf32>, %v: tensor<2x4x16x4xf32>, %pos: tensor<i32>) -> tensor<2x1x16xf32> {
  // expected-error @+1 {{'mix.cached_attention' op v_cache}}
  %o:3 = mix.cached_attention %qkv, %k, %v at %pos heads 4 : (tensor<2x1x48xf32>, tensor<2x4x32x4xf32>, tensor<2x4x16x4xf32>, tensor<i32>) -> (tensor<2x1x16xf32>, tensor<2x4x32x4xf32>, tensor<2x4x16x4xf32>)
  return %o#0 : tensor<2x1x16xf32>
}

// -----

func.func @attention_qkv_rank(%qkv: tensor<8x48xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'mix.attention' op qkv must have shape (B,S,3d), got (8,48)}}
  %0 = mix.attention %qkv heads 4 : (tensor<8x48xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @attention_qkv_not_triple(%qkv: tensor<2x8x47xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.attention' op qkv feature size 47 is not a multiple of 3 (q, k and v)}}
  %0 = mix.attention %qkv heads 4 : (tensor<2x8x47xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @attention_heads_divide(%qkv: tensor<2x8x48xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.attention' op model width 16 is not divisible by 3 heads}}
  %0 = mix.attention %qkv heads 3 : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @attention_prefix_k(%qkv: tensor<4x8x48xf32>, %pk: tensor<2x4x3x8xf32>, %pv: tensor<2x4x3x8xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{'mix.attention' op prefix_k must have shape (P,4,T_p,4), got (2,4,3,8)}}
  %0 = mix.attention %qkv prefix(%pk, %pv) heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

func.func @attention_prefix_v(%qkv: tensor<4x8x48xf32>, %pk: tensor<2x4x3x4xf32>, %pv: tensor<2x4x5x4xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{'mix.attention' op prefix_v must have shape (2,4,3,4), got (2,4,5,4)}}
  %0 = mix.attention %qkv prefix(%pk, %pv) heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x5x4xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

func.func @attention_prefix_batch(%qkv: tensor<3x8x48xf32>, %pk: tensor<2x4x3x4xf32>, %pv: tensor<2x4x3x4xf32>) -> tensor<3x8x16xf32> {
  // expected-error @+1 {{'mix.attention' op batch 3 is not a multiple of the 2 prefix streams}}
  %0 = mix.attention %qkv prefix(%pk, %pv) heads 4 : (tensor<3x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) -> tensor<3x8x16xf32>
  return %0 : tensor<3x8x16xf32>
}

// -----

func.func @attention_result(%qkv: tensor<2x8x48xf32>) -> tensor<2x8x48xf32> {
  // expected-error @+1 {{'mix.attention' op result must have shape (2,8,16), got (2,8,48)}}
  %0 = mix.attention %qkv heads 4 : (tensor<2x8x48xf32>) -> tensor<2x8x48xf32>
  return %0 : tensor<2x8x48xf32>
}

//===----------------------------------------------------------------------===//
// prefix_mean, cross_entropy
//===----------------------------------------------------------------------===//

// -----

func.func @prefix_mean_rank(%m: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'mix.prefix_mean' op input must have shape (B,S,d), got (8,16)}}
  %0 = mix.prefix_mean %m : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @cross_entropy_logits(%l: tensor<16x256xf32>, %t: tensor<16xi32>) -> tensor<f32> {
  // expected-error @+1 {{'mix.cross_entropy' op logits must have shape (B,S,V), got (16,256)}}
  %0 = mix.cross_entropy %l, %t : (tensor<16x256xf32>, tensor<16xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_targets(%l: tensor<2x8x256xf32>, %t: tensor<2x4xi32>) -> tensor<f32> {
  // expected-error @+1 {{'mix.cross_entropy' op targets must have shape (2,8), got (2,4)}}
  %0 = mix.cross_entropy %l, %t : (tensor<2x8x256xf32>, tensor<2x4xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// gate: operands per kind
//===----------------------------------------------------------------------===//

// -----

func.func @gate_scalar_input(%m: tensor<f32>, %w: tensor<4x1xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'mix.gate' op input must have rank >= 1}}
  %0 = mix.gate simple softmax %m, %w, %b : (tensor<f32>, tensor<4x1xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gate_modulation_on_simple(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %mod: tensor<2x8x16xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op a modulation is only valid for context_aware gates, not simple}}
  %0 = mix.gate simple softmax %m, %w, %b modulation %mod : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_context_aware_without_modulation(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %lw: tensor<16xf32>, %lb: tensor<16xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op context_aware gates require a modulation}}
  %0 = mix.gate context_aware softmax %m, %w, %b norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_norm_on_adaptive(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %lw: tensor<16xf32>, %lb: tensor<16xf32>, %s: tensor<2x8x1xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op a norm(weight, bias) is only valid for context_aware gates, not adaptive}}
  %0 = mix.gate adaptive sigmoid %m, %w, %b norm(%lw, %lb) scale %s : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x8x1xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_context_aware_without_norm(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %mod: tensor<2x8x16xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op context_aware gates require a norm(weight, bias)}}
  %0 = mix.gate context_aware softmax %m, %w, %b modulation %mod {eps = 1.0e-05 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_scale_on_multi_head(%m: tensor<2x8x16xf32>, %w: tensor<2x4x8xf32>, %b: tensor<2x4xf32>, %s: tensor<2x8x1xf32>) -> tensor<2x8x2x4xf32> {
  // expected-error @+1 {{'mix.gate' op a scale is only valid for adaptive gates, not multi_head}}
  %0 = mix.gate multi_head softmax %m, %w, %b scale %s : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<2x8x1xf32>) -> tensor<2x8x2x4xf32>
  return %0 : tensor<2x8x2x4xf32>
}

// -----

func.func @gate_adaptive_without_scale(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op adaptive gates require a scale}}
  %0 = mix.gate adaptive softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

//===----------------------------------------------------------------------===//
// gate: multi_head shapes
//===----------------------------------------------------------------------===//

// -----

func.func @gate_multi_head_weight_rank(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<2x4xf32>) -> tensor<2x8x2x4xf32> {
  // expected-error @+1 {{'mix.gate' op multi_head weight must have shape (H,N,d/H), got (4,16)}}
  %0 = mix.gate multi_head softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<2x4xf32>) -> tensor<2x8x2x4xf32>
  return %0 : tensor<2x8x2x4xf32>
}

// -----

func.func @gate_multi_head_heads_divide(%m: tensor<2x8x16xf32>, %w: tensor<3x4x5xf32>, %b: tensor<3x4xf32>) -> tensor<2x8x3x4xf32> {
  // expected-error @+1 {{'mix.gate' op input feature size 16 is not divisible by 3 gate heads}}
  %0 = mix.gate multi_head softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<3x4x5xf32>, tensor<3x4xf32>) -> tensor<2x8x3x4xf32>
  return %0 : tensor<2x8x3x4xf32>
}

// -----

func.func @gate_multi_head_weight(%m: tensor<2x8x16xf32>, %w: tensor<2x4x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x8x2x4xf32> {
  // expected-error @+1 {{'mix.gate' op weight must have shape (2,4,8), got (2,4,4)}}
  %0 = mix.gate multi_head softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>) -> tensor<2x8x2x4xf32>
  return %0 : tensor<2x8x2x4xf32>
}

// -----

func.func @gate_multi_head_bias(%m: tensor<2x8x16xf32>, %w: tensor<2x4x8xf32>, %b: tensor<4xf32>) -> tensor<2x8x2x4xf32> {
  // expected-error @+1 {{'mix.gate' op bias must have shape (2,4), got (4)}}
  %0 = mix.gate multi_head sigmoid %m, %w, %b : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<4xf32>) -> tensor<2x8x2x4xf32>
  return %0 : tensor<2x8x2x4xf32>
}

// -----

func.func @gate_multi_head_result(%m: tensor<2x8x16xf32>, %w: tensor<2x4x8xf32>, %b: tensor<2x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op result must have shape (2,8,2,4), got (2,8,4)}}
  %0 = mix.gate multi_head softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

//===----------------------------------------------------------------------===//
// gate: simple, context_aware and adaptive shapes
//===----------------------------------------------------------------------===//

// -----

func.func @gate_simple_weight_rank(%m: tensor<2x8x16xf32>, %w: tensor<2x4x8xf32>, %b: tensor<4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op simple weight must have shape (N,d), got (2,4,8)}}
  %0 = mix.gate simple softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_simple_weight(%m: tensor<2x8x16xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op weight must have shape (4,16), got (4,8)}}
  %0 = mix.gate simple softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_simple_bias(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<5xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op bias must have shape (4), got (5)}}
  %0 = mix.gate simple sigmoid %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<5xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_context_aware_modulation(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %mod: tensor<2x8x8xf32>, %lw: tensor<16xf32>, %lb: tensor<16xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op modulation must have shape (2,8,16), got (2,8,8)}}
  %0 = mix.gate context_aware softmax %m, %w, %b modulation %mod norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x8xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_context_aware_norm_weight(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %mod: tensor<2x8x16xf32>, %lw: tensor<8xf32>, %lb: tensor<16xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op norm weight must have shape (16), got (8)}}
  %0 = mix.gate context_aware softmax %m, %w, %b modulation %mod norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<8xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_context_aware_norm_bias(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %mod: tensor<2x8x16xf32>, %lw: tensor<16xf32>, %lb: tensor<8xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op norm bias must have shape (16), got (8)}}
  %0 = mix.gate context_aware sigmoid %m, %w, %b modulation %mod norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_context_aware_missing_eps(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %mod: tensor<2x8x16xf32>, %lw: tensor<16xf32>, %lb: tensor<16xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op context_aware gates require a positive eps}}
  %0 = mix.gate context_aware softmax %m, %w, %b modulation %mod norm(%lw, %lb) : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_context_aware_zero_eps(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %mod: tensor<2x8x16xf32>, %lw: tensor<16xf32>, %lb: tensor<16xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op context_aware gates require a positive eps}}
  %0 = mix.gate context_aware softmax %m, %w, %b modulation %mod norm(%lw, %lb) {eps = 0.0 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_adaptive_scale(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %s: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op scale must have shape (2,8,1), got (2,8,4)}}
  %0 = mix.gate adaptive softmax %m, %w, %b scale %s : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_simple_result(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<2x8x5xf32> {
  // expected-error @+1 {{'mix.gate' op result must have shape (2,8,4), got (2,8,5)}}
  %0 = mix.gate simple softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x5xf32>
  return %0 : tensor<2x8x5xf32>
}

//===----------------------------------------------------------------------===//
// mixture: stacked form (gate shape and stacked kernels)
//===----------------------------------------------------------------------===//

// -----

func.func @mixture_no_experts(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op needs experts: stacked kernels or an expert region}}
  %0 = mix.mixture %x, %g : (tensor<2x8x16xf32>, tensor<2x8x4xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_experts_without_region(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op experts(...) weights need an expert region}}
  %0 = mix.mixture %x, %g kernels %k experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_scalar_input(%x: tensor<f32>, %g: tensor<4xf32>, %k: tensor<4x8x1xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'mix.mixture' op input must have rank >= 1}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<f32>, tensor<4xf32>, tensor<4x8x1xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @mixture_gate_rank(%x: tensor<2x8x16xf32>, %g: tensor<4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op gate must have shape (..., N) or (..., H, N) over the input's leading dimensions (2,8), got (4)}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_gate_dim(%x: tensor<2x8x16xf32>, %g: tensor<3x8x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op gate dimension 0 is 3, expected 2 (the input's) or 1 (shared)}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<3x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_gate_no_streams(%x: tensor<2x8x16xf32>, %g: tensor<2x8x0xf32>, %k: tensor<0x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op operand #1 must be statically shaped, non-empty ranked tensor of 32-bit float values, but got 'tensor<2x8x0xf32>'}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x0xf32>, tensor<0x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_kernels_rank(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op kernels must have shape (N,f,d), got (4,32)}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_kernels_streams(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<3x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op kernels stack 3 experts, but the gate routes over 4}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<3x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_kernels_in_features(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x8xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op kernels (4,32,8) expect 8 input features, but the input has 16}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x8xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_head_gate_divide(%x: tensor<2x8x16xf32>, %g: tensor<2x8x3x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op kernels' output size 32 is not divisible by 3 gate heads}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x3x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_both_biases(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x32xf32>, %sb: tensor<32xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op cannot have both a per-expert bias and a shared_bias}}
  %0 = mix.mixture %x, %g kernels %k bias %b shared_bias %sb : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_bias(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op bias must have shape (4,32), got (4,16)}}
  %0 = mix.mixture %x, %g kernels %k bias %b : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_shared_bias(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %sb: tensor<4x32xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.mixture' op shared_bias must have shape (32), got (4,32)}}
  %0 = mix.mixture %x, %g kernels %k shared_bias %sb : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @mixture_result(%x: tensor<2x8x16xf32>, %g: tensor<2x1x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x1x32xf32> {
  // expected-error @+1 {{'mix.mixture' op result must have shape (2,8,32), got (2,1,32)}}
  %0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x1x4xf32>, tensor<4x32x16xf32>) -> tensor<2x1x32xf32>
  return %0 : tensor<2x1x32xf32>
}

//===----------------------------------------------------------------------===//
// mixture: region form (operands)
//===----------------------------------------------------------------------===//

// -----

func.func @mixture_region_and_kernels(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op cannot have both stacked kernels or biases and an expert region; put the bias in the region}}
  %r = mix.mixture %x, %g kernels %k experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %xi, %ki : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_and_shared_bias(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>, %sb: tensor<64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op cannot have both stacked kernels or biases and an expert region}}
  %r = mix.mixture %x, %g shared_bias %sb experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<64xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %xi, %ki, %sb : (tensor<2x8x16xf32>, tensor<64x16xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_gate_dim(%x: tensor<2x8x16xf32>, %g: tensor<2x4x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op gate dimension 1 is 4, expected 8 (the input's) or 1 (shared)}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x4x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %xi, %ki : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_head_gate(%x: tensor<2x8x16xf32>, %g: tensor<2x8x2x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op per-head gates need stacked kernels, not an expert region}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x2x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %xi, %ki : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_without_weights(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.mixture' op an expert region needs at least one stacked weight in experts(...)}}
  %r = mix.mixture %x, %g : (tensor<2x8x16xf32>, tensor<2x8x4xf32>) -> tensor<2x8x16xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>):
    %y = mix.relu %xi : tensor<2x8x16xf32>
    mix.yield %y : tensor<2x8x16xf32>
  }
  return %r : tensor<2x8x16xf32>
}

// -----

func.func @mixture_region_weight_streams(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %w1: tensor<4x64x16xf32>, %w2: tensor<3x16x64xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.mixture' op expert weight #1 (3,16,64) must stack 4 experts along its first dimension}}
  %r = mix.mixture %x, %g experts(%w1, %w2) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<3x16x64xf32>) -> tensor<2x8x16xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %a: tensor<64x16xf32>, %c: tensor<16x64xf32>):
    %h = mix.linear %xi, %a : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    %o = mix.linear %h, %c : (tensor<2x8x64xf32>, tensor<16x64xf32>) -> tensor<2x8x16xf32>
    mix.yield %o : tensor<2x8x16xf32>
  }
  return %r : tensor<2x8x16xf32>
}

// -----

func.func @mixture_region_scalar_weight(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %w: tensor<f32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.mixture' op expert weight #0 must have a leading expert dimension}}
  %r = mix.mixture %x, %g experts(%w) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<f32>) -> tensor<2x8x16xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %s: tensor<f32>):
    mix.yield %xi : tensor<2x8x16xf32>
  }
  return %r : tensor<2x8x16xf32>
}

// -----

func.func @mixture_region_result(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x4x64xf32> {
  // expected-error @+1 {{'mix.mixture' op result must have shape (..., f) over the input's leading dimensions (2,8), got (2,4,64)}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x4x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %xi, %ki : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  }
  return %r : tensor<2x4x64xf32>
}

//===----------------------------------------------------------------------===//
// mixture: region form (the region itself) and mix.yield
//===----------------------------------------------------------------------===//

// -----

func.func @mixture_region_two_blocks(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op expert region must have exactly one block}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %xi, %ki : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  ^bb1:
    mix.yield %x : tensor<2x8x16xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_arg_count(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>, %k2: tensor<64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op expert region must take 2 arguments (the input and one slice of each expert weight), got 1}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>):
    %y = mix.linear %xi, %k2 : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_input_arg(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op expert region argument #0 must have the input type 'tensor<2x8x16xf32>', got 'tensor<2x8x8xf32>'}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x8xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %x, %ki : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_weight_arg(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op expert region argument #1 must be one expert's slice 'tensor<64x16xf32>', got 'tensor<4x64x16xf32>'}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<4x64x16xf32>):
    %y = mix.mixture %xi, %g kernels %ki : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32>
    mix.yield %y : tensor<2x8x64xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_terminator(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op expert region must end in mix.yield}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %xi, %ki : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    "test.terminator"(%y) : (tensor<2x8x64xf32>) -> ()
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @mixture_region_yield_type(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{'mix.mixture' op expert region yields 'tensor<2x8x32xf32>', but the mixture produces 'tensor<2x8x64xf32>'}}
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<32x16xf32>):
    %y = mix.linear %xi, %ki : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
    mix.yield %y : tensor<2x8x32xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// -----

func.func @yield_outside_mixture(%x: tensor<2x8x16xf32>) {
  // expected-error @+1 {{'mix.yield' op expects parent op 'mix.mixture'}}
  mix.yield %x : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// dynamic_conv (shares the gate and stacked-kernel checks with mix.mixture)
//===----------------------------------------------------------------------===//

// -----

func.func @dynamic_conv_gate_rank(%x: tensor<2x8x16xf32>, %g: tensor<2x8x2x2x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.dynamic_conv' op gate must have shape (..., N) or (..., H, N) over the input's leading dimensions (2,8), got (2,8,2,2,4)}}
  %0 = mix.dynamic_conv %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x2x2x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @dynamic_conv_kernels_streams(%x: tensor<2x8x16xf32>, %g: tensor<2x1x4xf32>, %k: tensor<2x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.dynamic_conv' op kernels stack 2 experts, but the gate routes over 4}}
  %0 = mix.dynamic_conv %x, %g kernels %k order mix_then_apply : (tensor<2x8x16xf32>, tensor<2x1x4xf32>, tensor<2x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @dynamic_conv_head_gate_divide(%x: tensor<2x8x16xf32>, %g: tensor<2x8x5x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.dynamic_conv' op kernels' output size 32 is not divisible by 5 gate heads}}
  %0 = mix.dynamic_conv %x, %g kernels %k order apply_then_mix : (tensor<2x8x16xf32>, tensor<2x8x5x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @dynamic_conv_both_biases(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x32xf32>, %sb: tensor<32xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'mix.dynamic_conv' op cannot have both a per-expert bias and a shared_bias}}
  %0 = mix.dynamic_conv %x, %g kernels %k bias %b shared_bias %sb : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @dynamic_conv_result(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.dynamic_conv' op result must have shape (2,8,32), got (2,8,16)}}
  %0 = mix.dynamic_conv %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// balance_loss
//===----------------------------------------------------------------------===//

// -----

func.func @balance_loss_rank(%g: tensor<8x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'mix.balance_loss' op gate must have shape (B,S,N) or (B,S,H,N), got (8,4)}}
  %0 = mix.balance_loss %g alpha 1.0e-02 : tensor<8x4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @balance_loss_alpha(%g: tensor<2x8x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'mix.balance_loss' op alpha must be non-negative, got -1.000000e-02}}
  %0 = mix.balance_loss %g alpha -1.0e-02 : tensor<2x8x4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// Streams: replicate_streams, select_stream, mean_streams
//===----------------------------------------------------------------------===//

// -----

func.func @replicate_streams_no_batch(%x: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'mix.replicate_streams' op input must have a batch dimension}}
  %0 = mix.replicate_streams %x streams 4 : tensor<f32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @replicate_streams_result(%x: tensor<2x8x16xf32>) -> tensor<6x8x16xf32> {
  // expected-error @+1 {{'mix.replicate_streams' op result must have shape (8,8,16) (4 streams of input (2,8,16)), got (6,8,16)}}
  %0 = mix.replicate_streams %x streams 4 : tensor<2x8x16xf32> -> tensor<6x8x16xf32>
  return %0 : tensor<6x8x16xf32>
}

// -----

func.func @select_stream_index(%x: tensor<4x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.select_stream' op stream 2 is out of range for 2 streams}}
  %0 = mix.select_stream %x stream 2 of 2 : tensor<4x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @select_stream_input(%x: tensor<6x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.select_stream' op input must have shape (4,8,16) (2 streams of result (2,8,16)), got (6,8,16)}}
  %0 = mix.select_stream %x stream 1 of 2 : tensor<6x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @select_stream_no_batch(%x: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'mix.select_stream' op result must have a batch dimension}}
  %0 = mix.select_stream %x stream 1 of 2 : tensor<4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @mean_streams_input(%x: tensor<4x8x8xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.mean_streams' op input must have shape (4,8,16) (2 streams of result (2,8,16)), got (4,8,8)}}
  %0 = mix.mean_streams %x streams 2 : tensor<4x8x8xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// aggregate_streams
//===----------------------------------------------------------------------===//

// -----

func.func @aggregate_streams_fc2_rank(%zs: tensor<4x8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<16xf32>, %w2: tensor<2xf32>, %b2: tensor<2xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.aggregate_streams' op fc2 weight must have shape (P,d), got (2)}}
  %0 = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.0e-02 : (tensor<4x8x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @aggregate_streams_result_rank(%zs: tensor<4x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<16xf32>, %w2: tensor<2x16xf32>, %b2: tensor<2xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'mix.aggregate_streams' op result must have shape (B,S,d), got (2,16)}}
  %0 = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.0e-02 : (tensor<4x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @aggregate_streams_smoothing(%zs: tensor<4x8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<16xf32>, %w2: tensor<2x16xf32>, %b2: tensor<2xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.aggregate_streams' op smoothing must lie in [0, 1], got 1.500000e+00}}
  %0 = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.5 : (tensor<4x8x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @aggregate_streams_input(%zs: tensor<6x8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<16xf32>, %w2: tensor<2x16xf32>, %b2: tensor<2xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.aggregate_streams' op input must have shape (4,8,16) (2 streams of result (2,8,16)), got (6,8,16)}}
  %0 = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 0.0 : (tensor<6x8x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @aggregate_streams_fc1_weight(%zs: tensor<4x8x16xf32>, %w1: tensor<16x16xf32>, %b1: tensor<16xf32>, %w2: tensor<2x16xf32>, %b2: tensor<2xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.aggregate_streams' op fc1 weight must have shape (16,32), got (16,16)}}
  %0 = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.0e-02 : (tensor<4x8x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @aggregate_streams_fc1_bias(%zs: tensor<4x8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<2x16xf32>, %b2: tensor<2xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.aggregate_streams' op fc1 bias must have shape (16), got (32)}}
  %0 = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.0e-02 : (tensor<4x8x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @aggregate_streams_fc2_weight(%zs: tensor<4x8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<16xf32>, %w2: tensor<2x8xf32>, %b2: tensor<2xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.aggregate_streams' op fc2 weight must have shape (2,16), got (2,8)}}
  %0 = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.0e-02 : (tensor<4x8x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @aggregate_streams_fc2_bias(%zs: tensor<4x8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<16xf32>, %w2: tensor<2x16xf32>, %b2: tensor<3xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.aggregate_streams' op fc2 bias must have shape (2), got (3)}}
  %0 = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.0 : (tensor<4x8x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<3xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// AltUp: altup_predict, altup_correct
//===----------------------------------------------------------------------===//

// -----

func.func @altup_predict_square(%x: tensor<4x8x16xf32>, %p: tensor<2x3xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{'mix.altup_predict' op predict must be a square (K,K) matrix, got (2,3)}}
  %0 = mix.altup_predict %x, %p : (tensor<4x8x16xf32>, tensor<2x3xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

func.func @altup_predict_blocks(%x: tensor<3x8x16xf32>, %p: tensor<2x2xf32>) -> tensor<3x8x16xf32> {
  // expected-error @+1 {{'mix.altup_predict' op input (3,8,16) does not hold 2 stream-major blocks}}
  %0 = mix.altup_predict %x, %p : (tensor<3x8x16xf32>, tensor<2x2xf32>) -> tensor<3x8x16xf32>
  return %0 : tensor<3x8x16xf32>
}

// -----

func.func @altup_predict_scalar_input(%x: tensor<f32>, %p: tensor<2x2xf32>) -> tensor<f32> {
  // expected-error @+1 {{'mix.altup_predict' op input must have a batch dimension}}
  %0 = mix.altup_predict %x, %p : (tensor<f32>, tensor<2x2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @altup_predict_result(%x: tensor<4x8x16xf32>, %p: tensor<2x2xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.altup_predict' op result must have shape (4,8,16), got (2,8,16)}}
  %0 = mix.altup_predict %x, %p : (tensor<4x8x16xf32>, tensor<2x2xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @altup_correct_rank(%xh: tensor<4x8x16xf32>, %xt: tensor<2x8x16xf32>, %c: tensor<2x2xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{'mix.altup_correct' op correct must have shape (K), got (2,2)}}
  %0 = mix.altup_correct %xh, %xt, %c active 1 : (tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<2x2xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

func.func @altup_correct_active(%xh: tensor<4x8x16xf32>, %xt: tensor<2x8x16xf32>, %c: tensor<2xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{'mix.altup_correct' op active block 2 is out of range for 2 blocks}}
  %0 = mix.altup_correct %xh, %xt, %c active 2 : (tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<2xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

func.func @altup_correct_predicted(%xh: tensor<6x8x16xf32>, %xt: tensor<2x8x16xf32>, %c: tensor<2xf32>) -> tensor<6x8x16xf32> {
  // expected-error @+1 {{'mix.altup_correct' op predicted must have shape (4,8,16) (2 streams of computed (2,8,16)), got (6,8,16)}}
  %0 = mix.altup_correct %xh, %xt, %c active 0 : (tensor<6x8x16xf32>, tensor<2x8x16xf32>, tensor<2xf32>) -> tensor<6x8x16xf32>
  return %0 : tensor<6x8x16xf32>
}

// -----

func.func @altup_correct_no_batch(%xh: tensor<4xf32>, %xt: tensor<f32>, %c: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'mix.altup_correct' op computed must have a batch dimension}}
  %0 = mix.altup_correct %xh, %xt, %c active 0 : (tensor<4xf32>, tensor<f32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @altup_correct_result(%xh: tensor<4x8x16xf32>, %xt: tensor<2x8x16xf32>, %c: tensor<2xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.altup_correct' op result must have shape (4,8,16), got (2,8,16)}}
  %0 = mix.altup_correct %xh, %xt, %c active 1 : (tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// ODS-generated constraints
//===----------------------------------------------------------------------===//

// -----

func.func @ods_non_f32(%a: tensor<2xf16>) -> tensor<2xf16> {
  // expected-error @+1 {{'mix.add' op operand #0 must be statically shaped, non-empty ranked tensor of 32-bit float values, but got 'tensor<2xf16>'}}
  %0 = mix.add %a, %a : tensor<2xf16>, tensor<2xf16> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

func.func @ods_unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'mix.gelu' op operand #0 must be statically shaped, non-empty ranked tensor of 32-bit float values, but got 'tensor<*xf32>'}}
  %0 = "mix.gelu"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @ods_same_type(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'mix.relu' op requires the same type for all operands and results}}
  %0 = "mix.relu"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @ods_float_tokens(%t: tensor<2x8xf32>, %wte: tensor<256x16xf32>, %wpe: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.embedding' op operand #0 must be statically shaped, non-empty ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = mix.embedding %t, %wte, %wpe : (tensor<2x8xf32>, tensor<256x16xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @ods_loss_not_scalar(%l: tensor<2x8x256xf32>, %t: tensor<2x8xi32>) -> tensor<1xf32> {
  // expected-error @+1 {{'mix.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = mix.cross_entropy %l, %t : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @ods_zero_heads(%qkv: tensor<2x8x48xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.attention' op attribute 'heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = mix.attention %qkv heads 0 : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @ods_zero_streams(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.replicate_streams' op attribute 'streams' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = mix.replicate_streams %x streams 0 : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @ods_negative_index(%x: tensor<4x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'mix.select_stream' op attribute 'index' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = mix.select_stream %x stream -1 of 2 : tensor<4x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @ods_negative_active(%xh: tensor<4x8x16xf32>, %xt: tensor<2x8x16xf32>, %c: tensor<2xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{'mix.altup_correct' op attribute 'active' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = mix.altup_correct %xh, %xt, %c active -1 : (tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<2xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

func.func @ods_gating_kind(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [simple, context_aware, multi_head, adaptive]}}
  %0 = mix.gate banana softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @ods_normalization(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{for attribute 'normalization' [softmax, sigmoid]}}
  %0 = mix.gate simple relu %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @ods_mixing_order(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{for attribute 'order' [apply_then_mix, mix_then_apply, stack_then_mix]}}
  %0 = mix.dynamic_conv %x, %g kernels %k order sideways : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// -----

func.func @ods_dynamic(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'mix.relu' op operand #0 must be statically shaped, non-empty ranked tensor of 32-bit float values, but got 'tensor<?x4xf32>'}}
  %0 = mix.relu %a : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @ods_empty(%x: tensor<2x8x16xf32>, %w: tensor<0x4x4xf32>, %b: tensor<0x4xf32>) -> tensor<2x8x0x4xf32> {
  // expected-error @+1 {{'mix.gate' op operand #1 must be statically shaped, non-empty ranked tensor of 32-bit float values, but got 'tensor<0x4x4xf32>'}}
  %g = mix.gate multi_head softmax %x, %w, %b : (tensor<2x8x16xf32>, tensor<0x4x4xf32>, tensor<0x4xf32>) -> tensor<2x8x0x4xf32>
  return %g : tensor<2x8x0x4xf32>
}

// -----

func.func @attention_prefix_k_alone(%qkv: tensor<4x8x48xf32>, %pk: tensor<2x4x3x4xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{'mix.attention' op prefix_k and prefix_v must be given together}}
  %0 = "mix.attention"(%qkv, %pk) <{heads = 4 : i64, operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

func.func @gate_norm_weight_alone(%x: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %m: tensor<2x8x16xf32>, %lw: tensor<16xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op norm weight and norm bias must be given together}}
  %0 = "mix.gate"(%x, %w, %b, %m, %lw) <{kind = 1 : i32, normalization = 0 : i32, eps = 1.0e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}> : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @gate_eps_on_simple(%x: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'mix.gate' op eps is only valid for context_aware gates, not simple}}
  %g = mix.gate simple softmax %x, %w, %b {eps = -1.0 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  return %g : tensor<2x8x4xf32>
}
