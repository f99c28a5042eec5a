// RUN: mix-opt %s --split-input-file --mix-autodiff | FileCheck %s

// What mix-autodiff does around the rules (each rule has its case in
// mix-autodiff-{elementwise,structured,shapes,indexing,collectives}.mlir;
// the errors are in mix-autodiff-invalid.mlir, the options in
// mix-autodiff-options.mlir).

// @forward stays as it was and @grad follows it: the same arguments; the
// results are @forward's (the loss terms, passed through undifferentiated),
// then the gradient of the *first* result for each f32 argument in order.
// The i32 argument gets none; the unused f32 argument gets zeros. x is used
// twice (x * x), so its two adjoints g * x are summed: dx = 2 g x.
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    -> (tensor<f32>, tensor<2x3xf32>)
// CHECK-NOT:     mix.broadcast
// CHECK:         return %{{.*}}, %{{.*}} : tensor<f32>, tensor<2x3xf32>
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[TOK:.*]]: tensor<2xi32>, %[[U:.*]]: tensor<4xf32>)
// CHECK-SAME:    -> (tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf32>)
// CHECK:         %[[Y:.*]] = mix.mul %[[X]], %[[X]]
// CHECK:         %[[L:.*]] = mix.reshape %{{.*}} : tensor<1x1xf32> -> tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[ONE]] : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[DY:.*]] = mix.broadcast %[[R]] : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[D1:.*]] = mix.mul %[[DY]], %[[X]]
// CHECK-NEXT:    %[[D2:.*]] = mix.mul %[[DY]], %[[X]]
// CHECK-NEXT:    %[[DX:.*]] = mix.add %[[D1]], %[[D2]]
// CHECK-NEXT:    %[[DU:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    return %[[L]], %[[Y]], %[[DX]], %[[DU]] : tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf32>
func.func @forward(%x: tensor<2x3xf32>, %tok: tensor<2xi32>, %unused: tensor<4xf32>) -> (tensor<f32>, tensor<2x3xf32>) {
  %y = mix.mul %x, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l, %y : tensor<f32>, tensor<2x3xf32>
}

// -----

// Ops that do not reach the loss are not differentiated, so having no rule
// is no error for them: here a model-level gelu returned as a second
// result, and the reduce_max of a softmax-style shift, which reaches the
// loss only through stop_gradient. x's gradient is g alone (the shift's
// path contributes nothing: no second term, no add).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[G:.*]] = mix.gelu %[[X]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[N:.*]] = mix.neg %[[DY]]
// CHECK-NEXT:    %{{.*}} = mix.reduce_sum %[[N]] dims [1]
// CHECK-NEXT:    return %{{.*}}, %[[G]], %[[DY]] : tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>
func.func @forward(%x: tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>) {
  %g = mix.gelu %x : tensor<2x3xf32>
  %m = mix.reduce_max %x dims [1] : tensor<2x3xf32> -> tensor<2x1xf32>
  %sg = mix.stop_gradient %m : tensor<2x1xf32>
  %y = mix.sub %x, %sg : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l, %g : tensor<f32>, tensor<2x3xf32>
}

// -----

// Only @forward is differentiated; other functions in the module are left
// alone and get no gradient function of their own.
// CHECK-LABEL: func.func @helper
// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @grad
// CHECK-NOT:     func.func
func.func @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = mix.exp %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func @forward(%x: tensor<2xf32>) -> tensor<f32> {
  %s = mix.reduce_sum %x dims [0] : tensor<2xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
