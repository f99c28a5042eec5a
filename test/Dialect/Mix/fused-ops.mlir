// RUN: mix-opt %s | mix-opt | FileCheck %s

// The fused ops (MixFusedOps.td) print and parse back, on tensors and on
// buffers.

// CHECK-LABEL: func.func @tensors
// CHECK: %{{.*}}, %{{.*}} = mix.flash_attention %{{.*}} prefix(%{{.*}}, %{{.*}}) heads 2 : (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) -> (tensor<4x8x8xf32>, tensor<4x2x8xf32>)
// CHECK: %{{.*}}, %{{.*}}:2 = mix.flash_attention_grad %{{.*}} prefix(%{{.*}}, %{{.*}}), %{{.*}}, %{{.*}}, %{{.*}} heads 2
func.func @tensors(%qkv: tensor<4x8x24xf32>, %pk: tensor<2x2x3x4xf32>,
                   %pv: tensor<2x2x3x4xf32>, %do: tensor<4x8x8xf32>)
    -> (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) {
  %o, %lse = mix.flash_attention %qkv prefix(%pk, %pv) heads 2 : (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) -> (tensor<4x8x8xf32>, tensor<4x2x8xf32>)
  %g:3 = mix.flash_attention_grad %qkv prefix(%pk, %pv), %o, %lse, %do heads 2 : (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<4x8x8xf32>, tensor<4x2x8xf32>, tensor<4x8x8xf32>) -> (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>)
  return %g#0, %g#1, %g#2 : tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>
}

// CHECK-LABEL: func.func @buffers
// CHECK: mix.flash_attention_buffers %{{.*}} into %{{.*}}, %{{.*}} heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>
// CHECK: mix.flash_attention_grad_buffers %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>, memref<2x8x8xf32>, memref<2x8x24xf32>
func.func @buffers(%qkv: memref<2x8x24xf32>, %o: memref<2x8x8xf32>,
                   %lse: memref<2x2x8xf32>, %do: memref<2x8x8xf32>,
                   %dqkv: memref<2x8x24xf32>) {
  mix.flash_attention_buffers %qkv into %o, %lse heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>
  mix.flash_attention_grad_buffers %qkv, %o, %lse, %do into %dqkv heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>, memref<2x8x8xf32>, memref<2x8x24xf32>
  return
}

// CHECK-LABEL: func.func @cross_entropy
// CHECK: %{{.*}}, %[[LSE:.*]] = mix.fused_cross_entropy %{{.*}}, %{{.*}} : (tensor<2x8x256xf32>, tensor<2x8xi64>) -> (tensor<f32>, tensor<2x8xf32>)
// CHECK: mix.fused_cross_entropy_grad %{{.*}}, %{{.*}}, %[[LSE]], %{{.*}} : (tensor<2x8x256xf32>, tensor<2x8xi64>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x8x256xf32>
// CHECK: mix.fused_cross_entropy_grad %{{.*}}, %{{.*}}, %[[LSE]] scale 5.000000e-01 : (tensor<2x8x256xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<2x8x256xf32>
// CHECK: mix.fused_cross_entropy_buffers %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} : memref<2x8x256xf32>, memref<2x8xi32>, memref<f32>, memref<2x8xf32>
// CHECK: mix.fused_cross_entropy_grad_buffers %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} : memref<2x8x256xf32>, memref<2x8xi32>, memref<2x8xf32>, memref<f32>, memref<2x8x256xf32>
func.func @cross_entropy(%l: tensor<2x8x256xf32>, %t: tensor<2x8xi64>,
                         %d: tensor<f32>, %lb: memref<2x8x256xf32>,
                         %tb: memref<2x8xi32>, %ceb: memref<f32>,
                         %lseb: memref<2x8xf32>, %db: memref<2x8x256xf32>)
    -> tensor<2x8x256xf32> {
  %ce, %lse = mix.fused_cross_entropy %l, %t : (tensor<2x8x256xf32>, tensor<2x8xi64>) -> (tensor<f32>, tensor<2x8xf32>)
  %g = mix.fused_cross_entropy_grad %l, %t, %lse, %d : (tensor<2x8x256xf32>, tensor<2x8xi64>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x8x256xf32>
  %g2 = mix.fused_cross_entropy_grad %l, %t, %lse scale 5.000000e-01 : (tensor<2x8x256xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<2x8x256xf32>
  mix.fused_cross_entropy_buffers %lb, %tb into %ceb, %lseb : memref<2x8x256xf32>, memref<2x8xi32>, memref<f32>, memref<2x8xf32>
  mix.fused_cross_entropy_grad_buffers %lb, %tb, %lseb, %ceb into %db : memref<2x8x256xf32>, memref<2x8xi32>, memref<2x8xf32>, memref<f32>, memref<2x8x256xf32>
  return %g : tensor<2x8x256xf32>
}

// The multi-tensor optimizer ops, on tensors and on buffers.
// CHECK-LABEL: func.func @multi_tensor
// CHECK: %[[S:.*]] = mix.multi_tensor_sum_squares %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<f32>
// CHECK: %{{.*}}:6 = mix.multi_tensor_adamw params(%{{.*}}, %{{.*}}) grads(%{{.*}}, %{{.*}}) m(%{{.*}}, %{{.*}}) v(%{{.*}}, %{{.*}}) hyper %{{.*}} clip %[[S]] {beta1 = 9.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, decay = array<i1: true, false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>)
// CHECK: mix.multi_tensor_sum_squares_buffers %{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8xf32> into %{{.*}} : memref<f32>
// CHECK: mix.multi_tensor_adamw_buffers params(%{{.*}} : memref<8xf32>) grads(%{{.*}} : memref<8xf32>) m(%{{.*}} : memref<8xf32>) v(%{{.*}} : memref<8xf32>) hyper %{{.*}} : memref<3xf32> clip %{{.*}} : memref<f32> {beta1 = 9.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, decay = array<i1: false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64}
func.func @multi_tensor(%w: tensor<4x8xf32>, %b: tensor<8xf32>,
                        %h: tensor<3xf32>, %wb: memref<4x8xf32>,
                        %bb: memref<8xf32>, %hb: memref<3xf32>,
                        %sb: memref<f32>) {
  %s = mix.multi_tensor_sum_squares %w, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<f32>
  %u:6 = mix.multi_tensor_adamw params(%w, %b) grads(%w, %b) m(%w, %b) v(%w, %b) hyper %h clip %s {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: true, false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>)
  mix.multi_tensor_sum_squares_buffers %wb, %bb : memref<4x8xf32>, memref<8xf32> into %sb : memref<f32>
  mix.multi_tensor_adamw_buffers params(%bb : memref<8xf32>) grads(%bb : memref<8xf32>) m(%bb : memref<8xf32>) v(%bb : memref<8xf32>) hyper %hb : memref<3xf32> clip %sb : memref<f32> {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64}
  return
}

// The LayerNorm and its gradient, on tensors and on buffers.
// CHECK-LABEL: func.func @layer_norm
// CHECK: %{{.*}}, %[[M:.*]], %[[R:.*]] = mix.fused_layer_norm %{{.*}}, %{{.*}}, %{{.*}} eps 1.000000e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK: mix.fused_layer_norm_grad %{{.*}}, %{{.*}}, %[[M]], %[[R]], %{{.*}} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>)
// CHECK: mix.fused_layer_norm_buffers %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}}, %{{.*}} eps 1.000000e-05 : memref<16x4xf32>, memref<4xf32>, memref<4xf32>, memref<16x4xf32>, memref<16xf32>, memref<16xf32>
// CHECK: mix.fused_layer_norm_grad_buffers %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}}, %{{.*}} : memref<16x4xf32>, memref<4xf32>, memref<16xf32>, memref<16xf32>, memref<16x4xf32>, memref<16x4xf32>, memref<4xf32>, memref<4xf32>
func.func @layer_norm(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>,
                      %b: tensor<16xf32>, %xb: memref<16x4xf32>,
                      %wb: memref<4xf32>, %rb: memref<16xf32>) {
  %y, %mean, %rstd = mix.fused_layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
  %dx, %dw, %db = mix.fused_layer_norm_grad %x, %w, %mean, %rstd, %y : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>)
  mix.fused_layer_norm_buffers %xb, %wb, %wb into %xb, %rb, %rb eps 1.0e-05 : memref<16x4xf32>, memref<4xf32>, memref<4xf32>, memref<16x4xf32>, memref<16xf32>, memref<16xf32>
  mix.fused_layer_norm_grad_buffers %xb, %wb, %rb, %rb, %xb into %xb, %wb, %wb : memref<16x4xf32>, memref<4xf32>, memref<16xf32>, memref<16xf32>, memref<16x4xf32>, memref<16x4xf32>, memref<4xf32>, memref<4xf32>
  return
}
