// RUN: mix-opt %s | mix-opt | FileCheck %s
// RUN: mix-opt %s --mlir-print-op-generic | mix-opt | FileCheck %s

// Round trip of every op of the mix dialect, through the custom and the
// generic form: each op must print back in its custom form unchanged.

//===----------------------------------------------------------------------===//
// Elementwise arithmetic and activations
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<2x8x16xf32>, %[[B:.*]]: tensor<2x8x1xf32>, %[[C:.*]]: tensor<1x8x16xf32>)
// CHECK: %[[ADD:.*]] = mix.add %[[A]], %[[B]] : tensor<2x8x16xf32>, tensor<2x8x1xf32> -> tensor<2x8x16xf32>
// CHECK: %[[SUB:.*]] = mix.sub %[[ADD]], %[[C]] : tensor<2x8x16xf32>, tensor<1x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: %[[MUL:.*]] = mix.mul %[[B]], %[[C]] : tensor<2x8x1xf32>, tensor<1x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: %[[ADD2:.*]] = mix.add %[[SUB]], %[[MUL]] : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: return %[[ADD2]]
func.func @binary(%a: tensor<2x8x16xf32>, %b: tensor<2x8x1xf32>, %c: tensor<1x8x16xf32>) -> tensor<2x8x16xf32> {
  %0 = mix.add %a, %b : tensor<2x8x16xf32>, tensor<2x8x1xf32> -> tensor<2x8x16xf32>
  %1 = mix.sub %0, %c : tensor<2x8x16xf32>, tensor<1x8x16xf32> -> tensor<2x8x16xf32>
  %2 = mix.mul %b, %c : tensor<2x8x1xf32>, tensor<1x8x16xf32> -> tensor<2x8x16xf32>
  %3 = mix.add %1, %2 : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %3 : tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>)
// CHECK: %[[GELU:.*]] = mix.gelu %[[X]] : tensor<2x8x64xf32>
// CHECK: %[[RELU:.*]] = mix.relu %[[GELU]] : tensor<2x8x64xf32>
// CHECK: %[[SIG:.*]] = mix.sigmoid %[[RELU]] : tensor<2x8x64xf32>
// CHECK: %[[TANH:.*]] = mix.tanh %[[SIG]] : tensor<2x8x64xf32>
// CHECK: %[[SILU:.*]] = mix.silu %[[TANH]] : tensor<2x8x64xf32>
// CHECK: return %[[SILU]]
func.func @unary(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  %0 = mix.gelu %x : tensor<2x8x64xf32>
  %1 = mix.relu %0 : tensor<2x8x64xf32>
  %2 = mix.sigmoid %1 : tensor<2x8x64xf32>
  %3 = mix.tanh %2 : tensor<2x8x64xf32>
  %4 = mix.silu %3 : tensor<2x8x64xf32>
  return %4 : tensor<2x8x64xf32>
}

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[W:.*]]: tensor<64x16xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK: %[[Y:.*]] = mix.linear %[[X]], %[[W]], %[[B]] : (tensor<2x8x16xf32>, tensor<64x16xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
// CHECK: %[[Z:.*]] = mix.linear %[[X]], %[[W]] : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
// CHECK: return %[[Y]], %[[Z]]
func.func @linear(%x: tensor<2x8x16xf32>, %w: tensor<64x16xf32>, %b: tensor<64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  %y = mix.linear %x, %w, %b : (tensor<2x8x16xf32>, tensor<64x16xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %z = mix.linear %x, %w : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
  return %y, %z : tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// A rank-1 input: the leading dimensions are empty.
// CHECK-LABEL: func.func @linear_vector
// CHECK-SAME: (%[[X:.*]]: tensor<16xf32>, %[[W:.*]]: tensor<8x16xf32>)
// CHECK: %[[Y:.*]] = mix.linear %[[X]], %[[W]] : (tensor<16xf32>, tensor<8x16xf32>) -> tensor<8xf32>
// CHECK: return %[[Y]]
func.func @linear_vector(%x: tensor<16xf32>, %w: tensor<8x16xf32>) -> tensor<8xf32> {
  %y = mix.linear %x, %w : (tensor<16xf32>, tensor<8x16xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[T32:.*]]: tensor<2x8xi32>, %[[T64:.*]]: tensor<2x8xi64>, %[[WTE:.*]]: tensor<256x16xf32>, %[[WPE:.*]]: tensor<64x16xf32>)
// CHECK: %[[E:.*]] = mix.embedding %[[T32]], %[[WTE]], %[[WPE]] : (tensor<2x8xi32>, tensor<256x16xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
// CHECK: %[[F:.*]] = mix.embedding %[[T64]], %[[WTE]], %[[WPE]] : (tensor<2x8xi64>, tensor<256x16xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
// CHECK: return %[[E]], %[[F]]
func.func @embedding(%t32: tensor<2x8xi32>, %t64: tensor<2x8xi64>, %wte: tensor<256x16xf32>, %wpe: tensor<64x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %e = mix.embedding %t32, %wte, %wpe : (tensor<2x8xi32>, tensor<256x16xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  %f = mix.embedding %t64, %wte, %wpe : (tensor<2x8xi64>, tensor<256x16xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  return %e, %f : tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[W:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK: %[[Y:.*]] = mix.layer_norm %[[X]], %[[W]], %[[B]] eps 1.000000e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %y = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[QKV:.*]]: tensor<2x8x48xf32>)
// CHECK: %[[O:.*]] = mix.attention %[[QKV]] heads 4 : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
// CHECK: return %[[O]]
func.func @attention(%qkv: tensor<2x8x48xf32>) -> tensor<2x8x16xf32> {
  %o = mix.attention %qkv heads 4 : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @attention_prefix
// CHECK-SAME: (%[[QKV:.*]]: tensor<4x8x48xf32>, %[[PK:.*]]: tensor<2x4x3x4xf32>, %[[PV:.*]]: tensor<2x4x3x4xf32>)
// CHECK: %[[O:.*]] = mix.attention %[[QKV]] prefix(%[[PK]], %[[PV]]) heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) -> tensor<4x8x16xf32>
// CHECK: return %[[O]]
func.func @attention_prefix(%qkv: tensor<4x8x48xf32>, %pk: tensor<2x4x3x4xf32>, %pv: tensor<2x4x3x4xf32>) -> tensor<4x8x16xf32> {
  %o = mix.attention %qkv prefix(%pk, %pv) heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}

// CHECK-LABEL: func.func @cached_attention
// CHECK-SAME: (%[[QKV:.*]]: tensor<2x1x48xf32>, %[[K:.*]]: tensor<2x4x32x4xf32>, %[[V:.*]]: tensor<2x4x32x4xf32>, %[[POS:.*]]: tensor<i32>)
// CHECK: %[[O:.*]], %[[K2:.*]], %[[V2:.*]] = mix.cached_attention %[[QKV]], %[[K]], %[[V]] at %[[POS]] heads 4 : (tensor<2x1x48xf32>, tensor<2x4x32x4xf32>, tensor<2x4x32x4xf32>, tensor<i32>) -> (tensor<2x1x16xf32>, tensor<2x4x32x4xf32>, tensor<2x4x32x4xf32>)
// CHECK: return %[[O]], %[[K2]], %[[V2]]
func.func @cached_attention(%qkv: tensor<2x1x48xf32>, %k: tensor<2x4x32x4xf32>, %v: tensor<2x4x32x4xf32>, %pos: tensor<i32>) -> (tensor<2x1x16xf32>, tensor<2x4x32x4xf32>, tensor<2x4x32x4xf32>) {
  %o:3 = mix.cached_attention %qkv, %k, %v at %pos heads 4 : (tensor<2x1x48xf32>, tensor<2x4x32x4xf32>, tensor<2x4x32x4xf32>, tensor<i32>) -> (tensor<2x1x16xf32>, tensor<2x4x32x4xf32>, tensor<2x4x32x4xf32>)
  return %o#0, %o#1, %o#2 : tensor<2x1x16xf32>, tensor<2x4x32x4xf32>, tensor<2x4x32x4xf32>
}

// CHECK-LABEL: func.func @cached_attention_prefix
// CHECK: mix.cached_attention %{{.*}}, %{{.*}}, %{{.*}} at %{{.*}} prefix(%{{.*}}, %{{.*}}) heads 4 : (tensor<4x1x48xf32>, tensor<4x4x32x4xf32>, tensor<4x4x32x4xf32>, tensor<i32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) -> (tensor<4x1x16xf32>, tensor<4x4x32x4xf32>, tensor<4x4x32x4xf32>)
func.func @cached_attention_prefix(%qkv: tensor<4x1x48xf32>, %k: tensor<4x4x32x4xf32>, %v: tensor<4x4x32x4xf32>, %pos: tensor<i32>, %pk: tensor<2x4x3x4xf32>, %pv: tensor<2x4x3x4xf32>) -> tensor<4x1x16xf32> {
  %o:3 = mix.cached_attention %qkv, %k, %v at %pos prefix(%pk, %pv) heads 4 : (tensor<4x1x48xf32>, tensor<4x4x32x4xf32>, tensor<4x4x32x4xf32>, tensor<i32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) -> (tensor<4x1x16xf32>, tensor<4x4x32x4xf32>, tensor<4x4x32x4xf32>)
  return %o#0 : tensor<4x1x16xf32>
}

// CHECK-LABEL: func.func @prefix_mean
// CHECK-SAME: (%[[M:.*]]: tensor<2x8x16xf32>)
// CHECK: %[[C:.*]] = mix.prefix_mean %[[M]] : tensor<2x8x16xf32>
// CHECK: return %[[C]]
func.func @prefix_mean(%m: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %c = mix.prefix_mean %m : tensor<2x8x16xf32>
  return %c : tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[L:.*]]: tensor<2x8x256xf32>, %[[T:.*]]: tensor<2x8xi32>, %[[T64:.*]]: tensor<2x8xi64>)
// CHECK: %[[CE:.*]] = mix.cross_entropy %[[L]], %[[T]] : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<f32>
// CHECK: %[[CE64:.*]] = mix.cross_entropy %[[L]], %[[T64]] : (tensor<2x8x256xf32>, tensor<2x8xi64>) -> tensor<f32>
// CHECK: return %[[CE]], %[[CE64]]
func.func @cross_entropy(%logits: tensor<2x8x256xf32>, %targets: tensor<2x8xi32>, %targets64: tensor<2x8xi64>) -> (tensor<f32>, tensor<f32>) {
  %ce = mix.cross_entropy %logits, %targets : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<f32>
  %ce64 = mix.cross_entropy %logits, %targets64 : (tensor<2x8x256xf32>, tensor<2x8xi64>) -> tensor<f32>
  return %ce, %ce64 : tensor<f32>, tensor<f32>
}

//===----------------------------------------------------------------------===//
// Gates
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @gate_simple
// CHECK-SAME: (%[[M:.*]]: tensor<2x8x16xf32>, %[[W:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[G:.*]] = mix.gate simple softmax %[[M]], %[[W]], %[[B]] : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
// CHECK: %[[H:.*]] = mix.gate simple sigmoid %[[M]], %[[W]], %[[B]] : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
// CHECK: return %[[G]], %[[H]]
func.func @gate_simple(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %g = mix.gate simple softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  %h = mix.gate simple sigmoid %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  return %g, %h : tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

// CHECK-LABEL: func.func @gate_multi_head
// CHECK-SAME: (%[[M:.*]]: tensor<2x8x16xf32>, %[[W:.*]]: tensor<2x4x8xf32>, %[[B:.*]]: tensor<2x4xf32>)
// CHECK: %[[G:.*]] = mix.gate multi_head softmax %[[M]], %[[W]], %[[B]] : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x8x2x4xf32>
// CHECK: %[[H:.*]] = mix.gate multi_head sigmoid %[[M]], %[[W]], %[[B]] : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x8x2x4xf32>
// CHECK: return %[[G]], %[[H]]
func.func @gate_multi_head(%m: tensor<2x8x16xf32>, %w: tensor<2x4x8xf32>, %b: tensor<2x4xf32>) -> (tensor<2x8x2x4xf32>, tensor<2x8x2x4xf32>) {
  %g = mix.gate multi_head softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x8x2x4xf32>
  %h = mix.gate multi_head sigmoid %m, %w, %b : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x8x2x4xf32>
  return %g, %h : tensor<2x8x2x4xf32>, tensor<2x8x2x4xf32>
}

// CHECK-LABEL: func.func @gate_context_aware
// CHECK-SAME: (%[[M:.*]]: tensor<2x8x16xf32>, %[[W:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<4xf32>, %[[MOD:.*]]: tensor<2x8x16xf32>, %[[LW:.*]]: tensor<16xf32>, %[[LB:.*]]: tensor<16xf32>)
// CHECK: %[[G:.*]] = mix.gate context_aware softmax %[[M]], %[[W]], %[[B]] modulation %[[MOD]] norm(%[[LW]], %[[LB]]) {eps = 1.000000e-05 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
// CHECK: %[[H:.*]] = mix.gate context_aware sigmoid %[[M]], %[[W]], %[[B]] modulation %[[MOD]] norm(%[[LW]], %[[LB]]) {eps = 1.000000e-03 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
// CHECK: return %[[G]], %[[H]]
func.func @gate_context_aware(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %mod: tensor<2x8x16xf32>, %lw: tensor<16xf32>, %lb: tensor<16xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %g = mix.gate context_aware softmax %m, %w, %b modulation %mod norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
  %h = mix.gate context_aware sigmoid %m, %w, %b modulation %mod norm(%lw, %lb) {eps = 1.0e-03 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
  return %g, %h : tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

// CHECK-LABEL: func.func @gate_adaptive
// CHECK-SAME: (%[[M:.*]]: tensor<2x8x16xf32>, %[[W:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<2x8x1xf32>)
// CHECK: %[[G:.*]] = mix.gate adaptive softmax %[[M]], %[[W]], %[[B]] scale %[[S]] : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x1xf32>) -> tensor<2x8x4xf32>
// CHECK: %[[H:.*]] = mix.gate adaptive sigmoid %[[M]], %[[W]], %[[B]] scale %[[S]] : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x1xf32>) -> tensor<2x8x4xf32>
// CHECK: return %[[G]], %[[H]]
func.func @gate_adaptive(%m: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %s: tensor<2x8x1xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %g = mix.gate adaptive softmax %m, %w, %b scale %s : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x1xf32>) -> tensor<2x8x4xf32>
  %h = mix.gate adaptive sigmoid %m, %w, %b scale %s : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x1xf32>) -> tensor<2x8x4xf32>
  return %g, %h : tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

//===----------------------------------------------------------------------===//
// Mixture, stacked form
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @mixture_stacked
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[G:.*]]: tensor<2x8x4xf32>, %[[K:.*]]: tensor<4x32x16xf32>, %[[B:.*]]: tensor<4x32xf32>, %[[SB:.*]]: tensor<32xf32>)
// CHECK: %[[U0:.*]] = mix.mixture %[[X]], %[[G]] kernels %[[K]] : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
// CHECK-NOT: {
// CHECK: %[[U1:.*]] = mix.mixture %[[X]], %[[G]] kernels %[[K]] bias %[[B]] : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
// CHECK: %[[U2:.*]] = mix.mixture %[[X]], %[[G]] kernels %[[K]] shared_bias %[[SB]] : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
// CHECK: return %[[U0]], %[[U1]], %[[U2]]
func.func @mixture_stacked(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x32xf32>, %sb: tensor<32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %u0 = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  %u1 = mix.mixture %x, %g kernels %k bias %b : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
  %u2 = mix.mixture %x, %g kernels %k shared_bias %sb : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %u0, %u1, %u2 : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// A gate shared by every position of a sequence: (B,1,N).
// CHECK-LABEL: func.func @mixture_sequence_gate
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[G:.*]]: tensor<2x1x4xf32>, %[[K:.*]]: tensor<4x32x16xf32>, %[[B:.*]]: tensor<4x32xf32>)
// CHECK: %[[U:.*]] = mix.mixture %[[X]], %[[G]] kernels %[[K]] bias %[[B]] : (tensor<2x8x16xf32>, tensor<2x1x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
// CHECK: return %[[U]]
func.func @mixture_sequence_gate(%x: tensor<2x8x16xf32>, %g: tensor<2x1x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x32xf32>) -> tensor<2x8x32xf32> {
  %u = mix.mixture %x, %g kernels %k bias %b : (tensor<2x8x16xf32>, tensor<2x1x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// Per-head gates (B,S,H,N): head j weights output channels [j f/H, (j+1) f/H).
// CHECK-LABEL: func.func @mixture_head_gate
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[G:.*]]: tensor<2x8x2x4xf32>, %[[K:.*]]: tensor<4x32x16xf32>, %[[SB:.*]]: tensor<32xf32>)
// CHECK: %[[U:.*]] = mix.mixture %[[X]], %[[G]] kernels %[[K]] shared_bias %[[SB]] : (tensor<2x8x16xf32>, tensor<2x8x2x4xf32>, tensor<4x32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
// CHECK: return %[[U]]
func.func @mixture_head_gate(%x: tensor<2x8x16xf32>, %g: tensor<2x8x2x4xf32>, %k: tensor<4x32x16xf32>, %sb: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %u = mix.mixture %x, %g kernels %k shared_bias %sb : (tensor<2x8x16xf32>, tensor<2x8x2x4xf32>, tensor<4x32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

//===----------------------------------------------------------------------===//
// Mixture, region form, and mix.yield
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @mixture_region_relu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[G:.*]]: tensor<2x8x4xf32>, %[[K:.*]]: tensor<4x64x16xf32>)
// CHECK: %[[R:.*]] = mix.mixture %[[X]], %[[G]] experts(%[[K]]) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
// CHECK-NEXT: ^bb0(%[[XI:.*]]: tensor<2x8x16xf32>, %[[KI:.*]]: tensor<64x16xf32>):
// CHECK-NEXT: %[[Y:.*]] = mix.linear %[[XI]], %[[KI]] : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: %[[Z:.*]] = mix.relu %[[Y]] : tensor<2x8x64xf32>
// CHECK-NEXT: mix.yield %[[Z]] : tensor<2x8x64xf32>
// CHECK-NEXT: }
// CHECK: return %[[R]]
func.func @mixture_region_relu(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %ki: tensor<64x16xf32>):
    %y = mix.linear %xi, %ki : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    %z = mix.relu %y : tensor<2x8x64xf32>
    mix.yield %z : tensor<2x8x64xf32>
  }
  return %r : tensor<2x8x64xf32>
}

// A two-layer expert with two stacked weights and a bias captured from above,
// gated per sequence.
// CHECK-LABEL: func.func @mixture_region_two_weights
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[G:.*]]: tensor<2x1x4xf32>, %[[W1:.*]]: tensor<4x64x16xf32>, %[[W2:.*]]: tensor<4x16x64xf32>, %[[B2:.*]]: tensor<16xf32>)
// CHECK: %[[R:.*]] = mix.mixture %[[X]], %[[G]] experts(%[[W1]], %[[W2]]) : (tensor<2x8x16xf32>, tensor<2x1x4xf32>, tensor<4x64x16xf32>, tensor<4x16x64xf32>) -> tensor<2x8x16xf32> {
// CHECK-NEXT: ^bb0(%[[XI:.*]]: tensor<2x8x16xf32>, %[[A:.*]]: tensor<64x16xf32>, %[[C:.*]]: tensor<16x64xf32>):
// CHECK-NEXT: %[[H:.*]] = mix.linear %[[XI]], %[[A]] : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
// CHECK-NEXT: %[[HG:.*]] = mix.gelu %[[H]] : tensor<2x8x64xf32>
// CHECK-NEXT: %[[O:.*]] = mix.linear %[[HG]], %[[C]], %[[B2]] : (tensor<2x8x64xf32>, tensor<16x64xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT: mix.yield %[[O]] : tensor<2x8x16xf32>
// CHECK-NEXT: }
// CHECK: return %[[R]]
func.func @mixture_region_two_weights(%x: tensor<2x8x16xf32>, %g: tensor<2x1x4xf32>, %w1: tensor<4x64x16xf32>, %w2: tensor<4x16x64xf32>, %b2: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %r = mix.mixture %x, %g experts(%w1, %w2) : (tensor<2x8x16xf32>, tensor<2x1x4xf32>, tensor<4x64x16xf32>, tensor<4x16x64xf32>) -> tensor<2x8x16xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %a: tensor<64x16xf32>, %c: tensor<16x64xf32>):
    %h = mix.linear %xi, %a : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
    %hg = mix.gelu %h : tensor<2x8x64xf32>
    %o = mix.linear %hg, %c, %b2 : (tensor<2x8x64xf32>, tensor<16x64xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
    mix.yield %o : tensor<2x8x16xf32>
  }
  return %r : tensor<2x8x16xf32>
}

//===----------------------------------------------------------------------===//
// Dynamic convolution and balance loss
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dynamic_conv
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[G:.*]]: tensor<2x8x4xf32>, %[[K:.*]]: tensor<4x64x16xf32>, %[[B:.*]]: tensor<4x64xf32>, %[[SB:.*]]: tensor<64xf32>)
// CHECK: %[[U0:.*]] = mix.dynamic_conv %[[X]], %[[G]] kernels %[[K]] : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32>
// CHECK: %[[U1:.*]] = mix.dynamic_conv %[[X]], %[[G]] kernels %[[K]] bias %[[B]] order apply_then_mix : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
// CHECK: %[[U2:.*]] = mix.dynamic_conv %[[X]], %[[G]] kernels %[[K]] shared_bias %[[SB]] order mix_then_apply : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
// CHECK: %[[U3:.*]] = mix.dynamic_conv %[[X]], %[[G]] kernels %[[K]] bias %[[B]] : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
// CHECK: return %[[U0]], %[[U1]], %[[U2]], %[[U3]]
func.func @dynamic_conv(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x64x16xf32>, %b: tensor<4x64xf32>, %sb: tensor<64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  %u0 = mix.dynamic_conv %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32>
  %u1 = mix.dynamic_conv %x, %g kernels %k bias %b order apply_then_mix : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
  %u2 = mix.dynamic_conv %x, %g kernels %k shared_bias %sb order mix_then_apply : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %u3 = mix.dynamic_conv %x, %g kernels %k bias %b : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
  return %u0, %u1, %u2, %u3 : tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// Per-sequence and per-head gates on a dynamic convolution.
// CHECK-LABEL: func.func @dynamic_conv_gates
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[GS:.*]]: tensor<2x1x4xf32>, %[[GH:.*]]: tensor<2x8x2x4xf32>, %[[K:.*]]: tensor<4x64x16xf32>, %[[B:.*]]: tensor<4x64xf32>)
// CHECK: %[[U0:.*]] = mix.dynamic_conv %[[X]], %[[GS]] kernels %[[K]] bias %[[B]] order mix_then_apply : (tensor<2x8x16xf32>, tensor<2x1x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
// CHECK: %[[U1:.*]] = mix.dynamic_conv %[[X]], %[[GH]] kernels %[[K]] bias %[[B]] order apply_then_mix : (tensor<2x8x16xf32>, tensor<2x8x2x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
// CHECK: return %[[U0]], %[[U1]]
func.func @dynamic_conv_gates(%x: tensor<2x8x16xf32>, %gs: tensor<2x1x4xf32>, %gh: tensor<2x8x2x4xf32>, %k: tensor<4x64x16xf32>, %b: tensor<4x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  %u0 = mix.dynamic_conv %x, %gs kernels %k bias %b order mix_then_apply : (tensor<2x8x16xf32>, tensor<2x1x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
  %u1 = mix.dynamic_conv %x, %gh kernels %k bias %b order apply_then_mix : (tensor<2x8x16xf32>, tensor<2x8x2x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
  return %u0, %u1 : tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// CHECK-LABEL: func.func @balance_loss
// CHECK-SAME: (%[[G:.*]]: tensor<2x8x4xf32>, %[[GH:.*]]: tensor<2x8x2x4xf32>)
// CHECK: %[[L0:.*]] = mix.balance_loss %[[G]] alpha 1.000000e-02 : tensor<2x8x4xf32> -> tensor<f32>
// CHECK: %[[L1:.*]] = mix.balance_loss %[[GH]] alpha 0.000000e+00 : tensor<2x8x2x4xf32> -> tensor<f32>
// CHECK: return %[[L0]], %[[L1]]
func.func @balance_loss(%g: tensor<2x8x4xf32>, %gh: tensor<2x8x2x4xf32>) -> (tensor<f32>, tensor<f32>) {
  %l0 = mix.balance_loss %g alpha 1.0e-02 : tensor<2x8x4xf32> -> tensor<f32>
  %l1 = mix.balance_loss %gh alpha 0.0 : tensor<2x8x2x4xf32> -> tensor<f32>
  return %l0, %l1 : tensor<f32>, tensor<f32>
}

//===----------------------------------------------------------------------===//
// Streams (ParaScale) and AltUp
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @streams
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>)
// CHECK: %[[R:.*]] = mix.replicate_streams %[[X]] streams 4 : tensor<2x8x16xf32> -> tensor<8x8x16xf32>
// CHECK: %[[S:.*]] = mix.select_stream %[[R]] stream 3 of 4 : tensor<8x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: %[[S0:.*]] = mix.select_stream %[[R]] stream 0 of 4 : tensor<8x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: %[[M:.*]] = mix.mean_streams %[[R]] streams 4 : tensor<8x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: return %[[S]], %[[S0]], %[[M]]
func.func @streams(%x: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %r = mix.replicate_streams %x streams 4 : tensor<2x8x16xf32> -> tensor<8x8x16xf32>
  %s = mix.select_stream %r stream 3 of 4 : tensor<8x8x16xf32> -> tensor<2x8x16xf32>
  %s0 = mix.select_stream %r stream 0 of 4 : tensor<8x8x16xf32> -> tensor<2x8x16xf32>
  %m = mix.mean_streams %r streams 4 : tensor<8x8x16xf32> -> tensor<2x8x16xf32>
  return %s, %s0, %m : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @aggregate_streams
// CHECK-SAME: (%[[ZS:.*]]: tensor<4x8x16xf32>, %[[W1:.*]]: tensor<16x32xf32>, %[[B1:.*]]: tensor<16xf32>, %[[W2:.*]]: tensor<2x16xf32>, %[[B2:.*]]: tensor<2xf32>)
// CHECK: %[[Z:.*]] = mix.aggregate_streams %[[ZS]], %[[W1]], %[[B1]], %[[W2]], %[[B2]] smoothing 1.000000e-02 : (tensor<4x8x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
// CHECK: return %[[Z]]
func.func @aggregate_streams(%zs: tensor<4x8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<16xf32>, %w2: tensor<2x16xf32>, %b2: tensor<2xf32>) -> tensor<2x8x16xf32> {
  %z = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.0e-02 : (tensor<4x8x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
  return %z : tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @altup
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x16xf32>, %[[P:.*]]: tensor<2x2xf32>, %[[XT:.*]]: tensor<2x8x16xf32>, %[[C:.*]]: tensor<2xf32>)
// CHECK: %[[XH:.*]] = mix.altup_predict %[[X]], %[[P]] : (tensor<4x8x16xf32>, tensor<2x2xf32>) -> tensor<4x8x16xf32>
// CHECK: %[[Y:.*]] = mix.altup_correct %[[XH]], %[[XT]], %[[C]] active 1 : (tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<2xf32>) -> tensor<4x8x16xf32>
// CHECK: return %[[Y]]
func.func @altup(%x: tensor<4x8x16xf32>, %p: tensor<2x2xf32>, %xt: tensor<2x8x16xf32>, %c: tensor<2xf32>) -> tensor<4x8x16xf32> {
  %xh = mix.altup_predict %x, %p : (tensor<4x8x16xf32>, tensor<2x2xf32>) -> tensor<4x8x16xf32>
  %y = mix.altup_correct %xh, %xt, %c active 1 : (tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<2xf32>) -> tensor<4x8x16xf32>
  return %y : tensor<4x8x16xf32>
}

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[M:.*]]: tensor<2x8x16xf32>, %[[G:.*]]: tensor<2x8x4xf32>)
// CHECK: %[[MR:.*]] = mix.grad_all_reduce %[[M]] : tensor<2x8x16xf32>
// CHECK: %[[S:.*]] = mix.rank_slice %[[G]] dim 2 shards 2 : tensor<2x8x4xf32> -> tensor<2x8x2xf32>
// CHECK: %[[P:.*]] = mix.rank_pad %[[S]] dim 2 shards 2 : tensor<2x8x2xf32> -> tensor<2x8x4xf32>
// CHECK: %[[U:.*]] = mix.all_reduce %[[MR]] : tensor<2x8x16xf32>
// CHECK: return %[[U]], %[[P]]
func.func @collectives(%m: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x4xf32>) {
  %mr = mix.grad_all_reduce %m : tensor<2x8x16xf32>
  %s = mix.rank_slice %g dim 2 shards 2 : tensor<2x8x4xf32> -> tensor<2x8x2xf32>
  %p = mix.rank_pad %s dim 2 shards 2 : tensor<2x8x2xf32> -> tensor<2x8x4xf32>
  %u = mix.all_reduce %mr : tensor<2x8x16xf32>
  return %u, %p : tensor<2x8x16xf32>, tensor<2x8x4xf32>
}
