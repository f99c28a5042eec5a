// RUN: mix-opt %s -split-input-file -verify-diagnostics

// One case per distinct error of the fused ops' verifiers
// (MixFusedOps.cpp) beyond those they share with mix.attention and
// mix.cross_entropy.

func.func @lse_shape(%qkv: tensor<2x8x48xf32>) {
  // expected-error @+1 {{'mix.flash_attention' op lse must have shape (2,4,8), got (2,8,4)}}
  %o, %lse = mix.flash_attention %qkv heads 4 : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x4xf32>)
  return
}

// -----

func.func @heads(%qkv: tensor<2x8x48xf32>) {
  // expected-error @+1 {{'mix.flash_attention' op model width 16 is not divisible by 3 heads}}
  %o, %lse = mix.flash_attention %qkv heads 3 : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x3x8xf32>)
  return
}

// -----

func.func @dout(%qkv: tensor<2x8x48xf32>, %o: tensor<2x8x16xf32>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x8xf32>) {
  // expected-error @+1 {{'mix.flash_attention_grad' op dout must have shape (2,8,16), got (2,8,8)}}
  %g = mix.flash_attention_grad %qkv, %o, %lse, %do heads 4 : (tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x48xf32>
  return
}

// -----

func.func @missing_prefix_adjoints(%qkv: tensor<4x8x48xf32>, %pk: tensor<2x4x3x4xf32>, %o: tensor<4x8x16xf32>, %lse: tensor<4x4x8xf32>) {
  // expected-error @+1 {{'mix.flash_attention_grad' op expected 2 prefix adjoints (one for each prefix), got 0}}
  %g = mix.flash_attention_grad %qkv prefix(%pk, %pk), %o, %lse, %o heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>, tensor<4x8x16xf32>, tensor<4x4x8xf32>, tensor<4x8x16xf32>) -> tensor<4x8x48xf32>
  return
}

// -----

func.func @prefix_adjoint_shape(%qkv: tensor<4x8x48xf32>, %pk: tensor<2x4x3x4xf32>, %o: tensor<4x8x16xf32>, %lse: tensor<4x4x8xf32>) {
  // expected-error @+1 {{'mix.flash_attention_grad' op a prefix adjoint must have shape (2,4,3,4), got (2,4,3,8)}}
  %g:3 = mix.flash_attention_grad %qkv prefix(%pk, %pk), %o, %lse, %o heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>, tensor<4x8x16xf32>, tensor<4x4x8xf32>, tensor<4x8x16xf32>) -> (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x8xf32>)
  return
}

// -----

func.func @buffer_result(%qkv: memref<2x8x48xf32>, %o: memref<2x8x48xf32>, %lse: memref<2x4x8xf32>) {
  // expected-error @+1 {{'mix.flash_attention_buffers' op result must have shape (2,8,16), got (2,8,48)}}
  mix.flash_attention_buffers %qkv into %o, %lse heads 4 : memref<2x8x48xf32>, memref<2x8x48xf32>, memref<2x4x8xf32>
  return
}

// -----

func.func @buffer_prefix_adjoints(%qkv: memref<4x8x48xf32>, %pk: memref<2x4x3x4xf32>, %o: memref<4x8x16xf32>, %lse: memref<4x4x8xf32>, %dqkv: memref<4x8x48xf32>) {
  // expected-error @+1 {{'mix.flash_attention_grad_buffers' op prefix adjoints are written exactly when the attention has prefixes}}
  mix.flash_attention_grad_buffers %qkv prefix(%pk, %pk), %o, %lse, %o into %dqkv heads 4 : memref<4x8x48xf32>, memref<2x4x3x4xf32>, memref<2x4x3x4xf32>, memref<4x8x16xf32>, memref<4x4x8xf32>, memref<4x8x16xf32>, memref<4x8x48xf32>
  return
}

// -----

func.func @ce_targets(%l: tensor<2x8x256xf32>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'mix.fused_cross_entropy' op targets must have shape (2,8), got (2,4)}}
  %ce, %lse = mix.fused_cross_entropy %l, %t : (tensor<2x8x256xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x8xf32>)
  return
}

// -----

func.func @ce_logits(%l: tensor<16x256xf32>, %t: tensor<16xi32>) {
  // expected-error @+1 {{'mix.fused_cross_entropy' op logits must have shape (B,S,V), got (16,256)}}
  %ce, %lse = mix.fused_cross_entropy %l, %t : (tensor<16x256xf32>, tensor<16xi32>) -> (tensor<f32>, tensor<16xf32>)
  return
}

// -----

func.func @ce_buffer_result(%l: memref<2x8x256xf32>, %t: memref<2x8xi32>, %ce: memref<1xf32>, %lse: memref<2x8xf32>) {
  // expected-error @+1 {{'mix.fused_cross_entropy_buffers' op result must have shape (), got (1)}}
  mix.fused_cross_entropy_buffers %l, %t into %ce, %lse : memref<2x8x256xf32>, memref<2x8xi32>, memref<1xf32>, memref<2x8xf32>
  return
}

// -----

func.func @ce_dlogits(%l: tensor<2x8x256xf32>, %t: tensor<2x8xi32>, %lse: tensor<2x8xf32>, %d: tensor<f32>) {
  // expected-error @+1 {{'mix.fused_cross_entropy_grad' op dlogits must have shape (2,8,256), got (2,8,128)}}
  %g = mix.fused_cross_entropy_grad %l, %t, %lse, %d : (tensor<2x8x256xf32>, tensor<2x8xi32>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x8x128xf32>
  return
}

// -----

func.func @sum_squares_none() {
  // expected-error @+1 {{'mix.multi_tensor_sum_squares' op needs at least one tensor}}
  %s = mix.multi_tensor_sum_squares : () -> tensor<f32>
  return
}

// -----

func.func @adamw_grads(%w: tensor<4x8xf32>, %b: tensor<8xf32>, %h: tensor<3xf32>, %c: tensor<f32>) {
  // expected-error @+1 {{'mix.multi_tensor_adamw' op expected 2 gradients (one for each parameter), got 1}}
  %u:6 = mix.multi_tensor_adamw params(%w, %b) grads(%w) m(%w, %b) v(%w, %b) hyper %h clip %c {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: true, false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_moment_type(%w: tensor<4x8xf32>, %b: tensor<8xf32>, %h: tensor<3xf32>, %c: tensor<f32>) {
  // expected-error @+1 {{'mix.multi_tensor_adamw' op second moments #1 has type 'tensor<4x8xf32>', but its parameter has type 'tensor<8xf32>'}}
  %u:6 = mix.multi_tensor_adamw params(%w, %b) grads(%w, %b) m(%w, %b) v(%w, %w) hyper %h clip %c {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: true, false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_decay(%b: tensor<8xf32>, %h: tensor<3xf32>, %c: tensor<f32>) {
  // expected-error @+1 {{'mix.multi_tensor_adamw' op expected 1 decay flags (one for each parameter), got 2}}
  %u:3 = mix.multi_tensor_adamw params(%b) grads(%b) m(%b) v(%b) hyper %h clip %c {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: true, false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_hyper(%b: tensor<8xf32>, %h: tensor<2xf32>, %c: tensor<f32>) {
  // expected-error @+1 {{'mix.multi_tensor_adamw' op hyper must have shape (3), got (2)}}
  %u:3 = mix.multi_tensor_adamw params(%b) grads(%b) m(%b) v(%b) hyper %h clip %c {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_results(%b: tensor<8xf32>, %h: tensor<3xf32>, %c: tensor<f32>) {
  // expected-error @+1 {{'mix.multi_tensor_adamw' op expected 3 results (new parameters, first and second moments), got 2}}
  %u:2 = mix.multi_tensor_adamw params(%b) grads(%b) m(%b) v(%b) hyper %h clip %c {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_buffers_clip(%b: memref<8xf32>, %h: memref<3xf32>, %c: memref<1xf32>) {
  // expected-error @+1 {{'mix.multi_tensor_adamw_buffers' op clip must have shape (), got (1)}}
  mix.multi_tensor_adamw_buffers params(%b : memref<8xf32>) grads(%b : memref<8xf32>) m(%b : memref<8xf32>) v(%b : memref<8xf32>) hyper %h : memref<3xf32> clip %c : memref<1xf32> {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64}
  return
}

// -----

func.func @layer_norm_weight(%x: tensor<2x8x16xf32>, %w: tensor<8xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'mix.fused_layer_norm' op weight must have shape (16), got (8)}}
  %y, %m, %r = mix.fused_layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<8xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
  return
}

// -----

func.func @layer_norm_stats(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'mix.fused_layer_norm' op rstd must have shape (2,8), got (16)}}
  %y, %m, %r = mix.fused_layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<16xf32>)
  return
}

// -----

func.func @layer_norm_eps(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'mix.fused_layer_norm' op eps must be positive, got 0}}
  %y, %m, %r = mix.fused_layer_norm %x, %w, %b eps 0.0 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
  return
}

// -----

func.func @layer_norm_grad_dbias(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %s: tensor<2x8xf32>) {
  // expected-error @+1 {{'mix.fused_layer_norm_grad' op dbias must have shape (16), got (2,8)}}
  %dx, %dw, %db = mix.fused_layer_norm_grad %x, %w, %s, %s, %x : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8xf32>)
  return
}
