// RUN: mix-opt %s --split-input-file --mix-append-adamw=fused=1 | FileCheck %s

// mix-append-adamw{fused=1}: the same @adamw as mix-append-adamw.mlir
// checks, its norm one mix.multi_tensor_sum_squares of every gradient and
// its update one mix.multi_tensor_adamw of every parameter, for a target
// with multi-tensor kernels. The clip coefficient is the primitive ops'
// min(1, 1 / (norm + 1e-6)) as before.

// Parameters w (3, 2), decayed, and b (3), not; tok is not a parameter.
// CHECK-LABEL: func.func @adamw
// CHECK-SAME:    (%[[W:[a-z0-9_]+]]: tensor<3x2xf32>, %[[B:[a-z0-9_]+]]: tensor<3xf32>, %[[DW:[a-z0-9_]+]]: tensor<3x2xf32>, %[[DB:[a-z0-9_]+]]: tensor<3xf32>, %[[MW:[a-z0-9_]+]]: tensor<3x2xf32>, %[[MB:[a-z0-9_]+]]: tensor<3xf32>, %[[VW:[a-z0-9_]+]]: tensor<3x2xf32>, %[[VB:[a-z0-9_]+]]: tensor<3xf32>, %[[H:[a-z0-9_]+]]: tensor<3xf32>)
// CHECK-SAME:    -> (tensor<3x2xf32> {mix.updates = 0 : i64}, tensor<3xf32> {mix.updates = 1 : i64}, tensor<3x2xf32> {mix.updates = 4 : i64}, tensor<3xf32> {mix.updates = 5 : i64}, tensor<3x2xf32> {mix.updates = 6 : i64}, tensor<3xf32> {mix.updates = 7 : i64}, tensor<f32>)
// CHECK-NOT:     mix.reduce_sum
// CHECK:         %[[SS:.*]] = mix.multi_tensor_sum_squares %[[DW]], %[[DB]] : (tensor<3x2xf32>, tensor<3xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[NORM:.*]] = mix.sqrt %[[SS]] : tensor<f32>
// CHECK:         mix.max
// CHECK-NEXT:    %[[CLIP:.*]] = mix.neg %{{.*}} : tensor<f32>
// CHECK-NEXT:    %[[U:.*]]:6 = mix.multi_tensor_adamw params(%[[W]], %[[B]]) grads(%[[DW]], %[[DB]]) m(%[[MW]], %[[MB]]) v(%[[VW]], %[[VB]]) hyper %[[H]] clip %[[CLIP]] {beta1 = 9.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, decay = array<i1: true, false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64}
// CHECK-NEXT:    return %[[U]]#0, %[[U]]#1, %[[U]]#2, %[[U]]#3, %[[U]]#4, %[[U]]#5, %[[NORM]]
func.func @forward(%w: tensor<3x2xf32>, %tok: tensor<4xi32>, %b: tensor<3xf32>) -> tensor<f32> {
  %s = mix.reduce_sum %b dims [0] : tensor<3xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A parameter sharded over the stream ranks: its squares are summed on
// their own and over the ranks (all_reduce) before they join the
// replicated parameters'.
// CHECK-LABEL: func.func @adamw
// CHECK-SAME:    (%[[K:[a-z0-9_]+]]: tensor<2x4xf32>, %[[B:[a-z0-9_]+]]: tensor<4xf32>, %[[DK:[a-z0-9_]+]]: tensor<2x4xf32>, %[[DB:[a-z0-9_]+]]: tensor<4xf32>,
// CHECK:         %[[REP:.*]] = mix.multi_tensor_sum_squares %[[DB]] : (tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[SH:.*]] = mix.multi_tensor_sum_squares %[[DK]] : (tensor<2x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[ALL:.*]] = mix.all_reduce %[[SH]]
// CHECK-NEXT:    %[[SS:.*]] = mix.add %[[REP]], %[[ALL]]
// CHECK-NEXT:    mix.sqrt %[[SS]]
// CHECK:         mix.multi_tensor_adamw params(%[[K]], %[[B]])
// CHECK-SAME:    decay = array<i1: true, false>
func.func @forward(%k: tensor<2x4xf32> {mix.stream_shards = 2 : i64}, %b: tensor<4xf32>) -> tensor<f32> {
  %s = mix.reduce_sum %b dims [0] : tensor<4xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
