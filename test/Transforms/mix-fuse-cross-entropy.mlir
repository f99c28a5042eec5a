// RUN: mix-opt %s --mix-fuse-cross-entropy | FileCheck %s
// RUN: mix-opt %s --mix-fuse-cross-entropy --mix-decompose | FileCheck %s --check-prefix=KEPT
// RUN: mix-opt %s --mix-fuse-cross-entropy --mix-decompose --mix-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: mix-opt %s --mix-fuse-cross-entropy --mix-decompose --mix-autodiff --canonicalize | FileCheck %s --check-prefix=FOLDED

// The cross-entropy becomes mix.fused_cross_entropy, each row's
// log-sum-exp (B,S) beside the mean; mix-decompose leaves it whole, and
// autodiff differentiates it into one mix.fused_cross_entropy_grad that
// reads the logits, the targets, the log-sum-exps and the mean's adjoint.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[L:[^:]*]]: tensor<2x8x256xf32>, %[[T:[^:]*]]: tensor<2x8xi32>
// CHECK: %[[CE:.*]], %{{.*}} = mix.fused_cross_entropy %[[L]], %[[T]] : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> (tensor<f32>, tensor<2x8xf32>)
// CHECK-NOT: mix.cross_entropy
// CHECK: return %[[CE]]

// KEPT-LABEL: func.func @forward(
// KEPT: mix.fused_cross_entropy
// KEPT-NOT: mix.reduce_max
// KEPT-NOT: mix.take_along

// GRAD-LABEL: func.func @grad(
// GRAD-SAME: %[[L:[^:]*]]: tensor<2x8x256xf32>, %[[T:[^:]*]]: tensor<2x8xi32>
// GRAD: %[[CE:.*]], %[[LSE:.*]] = mix.fused_cross_entropy %[[L]], %[[T]]
// GRAD: %[[D:.*]] = mix.fused_cross_entropy_grad %[[L]], %[[T]], %[[LSE]], %{{.*}} : (tensor<2x8x256xf32>, tensor<2x8xi32>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x8x256xf32>
// GRAD: return %{{.*}}, %[[D]] : tensor<f32>, tensor<2x8x256xf32>
// The loss's adjoint is the constant 1: it folds into the op's scale (1,
// the default), so no constant is left for a device to copy in.
// FOLDED-LABEL: func.func @grad(
// FOLDED: %[[CE:.*]], %[[LSE:.*]] = mix.fused_cross_entropy
// FOLDED: mix.fused_cross_entropy_grad %{{.*}}, %{{.*}}, %[[LSE]] : (tensor<2x8x256xf32>, tensor<2x8xi32>, tensor<2x8xf32>) -> tensor<2x8x256xf32>
func.func @forward(%logits: tensor<2x8x256xf32>, %targets: tensor<2x8xi32>) -> tensor<f32> {
  %ce = mix.cross_entropy %logits, %targets : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<f32>
  return %ce : tensor<f32>
}
