// RUN: mix-opt %s --mix-fuse-layer-norm | FileCheck %s
// RUN: mix-opt %s --mix-fuse-layer-norm --mix-decompose | FileCheck %s --check-prefix=KEPT
// RUN: mix-opt %s --mix-fuse-layer-norm --mix-decompose --mix-autodiff | FileCheck %s --check-prefix=GRAD

// The LayerNorm becomes mix.fused_layer_norm, each row's mean and 1/std
// (B,S) beside the result; mix-decompose leaves it whole, and autodiff
// differentiates it into one mix.fused_layer_norm_grad whose three results
// are the adjoints of the input, the weight and the bias.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x8x16xf32>, %[[W:[^:]*]]: tensor<16xf32>, %[[B:[^:]*]]: tensor<16xf32>
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = mix.fused_layer_norm %[[X]], %[[W]], %[[B]] eps 1.000000e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK-NOT: mix.layer_norm
// CHECK: mix.reduce_sum %[[Y]]

// KEPT-LABEL: func.func @forward(
// KEPT: mix.fused_layer_norm
// KEPT-NOT: mix.rsqrt
// KEPT: mix.reduce_sum
// KEPT-NOT: mix.reduce_sum

// GRAD-LABEL: func.func @grad(
// GRAD-SAME: %[[X:[^:]*]]: tensor<2x8x16xf32>, %[[W:[^:]*]]: tensor<16xf32>, %[[B:[^:]*]]: tensor<16xf32>
// GRAD: %{{.*}}, %[[MEAN:.*]], %[[RSTD:.*]] = mix.fused_layer_norm %[[X]], %[[W]], %[[B]]
// GRAD: %[[DX:.*]], %[[DW:.*]], %[[DB:.*]] = mix.fused_layer_norm_grad %[[X]], %[[W]], %[[MEAN]], %[[RSTD]], %{{.*}} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>)
// GRAD: return %{{.*}}, %[[DX]], %[[DW]], %[[DB]] :
func.func @forward(%x: tensor<2x8x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<f32> {
  %y = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %s = mix.reduce_sum %y dims [0, 1, 2] : tensor<2x8x16xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
