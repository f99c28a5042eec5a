// RUN: mix-opt %s --split-input-file --mix-fuse-attention | FileCheck %s
// RUN: mix-opt %s --split-input-file --mix-fuse-attention --mix-decompose | FileCheck %s --check-prefix=KEPT
// RUN: mix-opt %s --split-input-file --mix-fuse-attention --mix-decompose --mix-autodiff | FileCheck %s --check-prefix=GRAD

// Attention becomes mix.flash_attention, its row log-sum-exps (B,heads,S)
// beside the output; mix-decompose leaves it whole, and autodiff
// differentiates it into one mix.flash_attention_grad that reads the
// forward's output and log-sum-exps.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[QKV:.*]]: tensor<2x8x48xf32>
// CHECK: %[[O:.*]], %{{.*}} = mix.flash_attention %[[QKV]] heads 4 : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x4x8xf32>)
// CHECK-NOT: mix.attention
// CHECK: mix.reduce_sum %[[O]]

// KEPT-LABEL: func.func @forward(
// KEPT: mix.flash_attention
// KEPT-NOT: mix.matmul
// KEPT-NOT: mix.causal_mask

// GRAD-LABEL: func.func @grad(
// GRAD-SAME: %[[QKV:.*]]: tensor<2x8x48xf32>
// GRAD: %[[O:.*]], %[[LSE:.*]] = mix.flash_attention %[[QKV]] heads 4
// GRAD: %[[DQKV:.*]] = mix.flash_attention_grad %[[QKV]], %[[O]], %[[LSE]], %{{.*}} heads 4 : (tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x48xf32>
// GRAD: return %{{.*}}, %[[DQKV]] : tensor<f32>, tensor<2x8x48xf32>
func.func @forward(%qkv: tensor<2x8x48xf32>) -> tensor<f32> {
  %o = mix.attention %qkv heads 4 : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
  %s = mix.reduce_sum %o dims [0, 1, 2] : tensor<2x8x16xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// ParaScale's prefixes: the gradient op returns their adjoints too.

// CHECK-LABEL: func.func @forward(
// CHECK: mix.flash_attention %{{.*}} prefix(%{{.*}}, %{{.*}}) heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) -> (tensor<4x8x16xf32>, tensor<4x4x8xf32>)

// GRAD-LABEL: func.func @grad(
// GRAD-SAME: %[[QKV:[^:]*]]: tensor<4x8x48xf32>, %[[PK:[^:]*]]: tensor<2x4x3x4xf32>, %[[PV:[^:]*]]: tensor<2x4x3x4xf32>
// GRAD: %[[O:.*]], %[[LSE:.*]] = mix.flash_attention %[[QKV]] prefix(%[[PK]], %[[PV]]) heads 4
// GRAD: %[[G:.*]], %[[GP:.*]]:2 = mix.flash_attention_grad %[[QKV]] prefix(%[[PK]], %[[PV]]), %[[O]], %[[LSE]], %{{.*}} heads 4
// GRAD-SAME: -> (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>)
// GRAD: return %{{.*}}, %[[G]], %[[GP]]#0, %[[GP]]#1
func.func @forward(%qkv: tensor<4x8x48xf32>, %pk: tensor<2x4x3x4xf32>,
                   %pv: tensor<2x4x3x4xf32>) -> tensor<f32> {
  %o = mix.attention %qkv prefix(%pk, %pv) heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) -> tensor<4x8x16xf32>
  %s = mix.reduce_sum %o dims [0, 1, 2] : tensor<4x8x16xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
