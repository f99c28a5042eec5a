// RUN: mix-opt %s --mix-autodiff='function=loss grad-function=dloss' | FileCheck %s
// RUN: mix-opt %s --mix-autodiff | FileCheck %s --check-prefix=DEFAULT

// `function` names the function to differentiate and `grad-function` the
// one to build: @loss (d/dx sum(exp x) = exp x) becomes @dloss, and
// @forward, which is there too, is left alone.
// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @loss
// CHECK-LABEL: func.func @dloss
// CHECK-SAME:    (%[[X:.*]]: tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>)
// CHECK:         %[[E:.*]] = mix.exp %[[X]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1xf32> -> tensor<2xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.mul %[[DY]], %[[E]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
// CHECK-NOT:     func.func @grad

// By default @forward becomes @grad (d/dx sum(-x) = -1), and @loss is left
// alone.
// DEFAULT-LABEL: func.func @forward
// DEFAULT-LABEL: func.func @grad
// DEFAULT:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1xf32> -> tensor<2xf32>
// DEFAULT-NEXT:    %[[DX:.*]] = mix.neg %[[DY]] : tensor<2xf32>
// DEFAULT-NEXT:    return %{{.*}}, %[[DX]]
// DEFAULT-LABEL: func.func @loss
// DEFAULT-NOT:     func.func @dloss
func.func @forward(%x: tensor<2xf32>) -> tensor<f32> {
  %y = mix.neg %x : tensor<2xf32>
  %s = mix.reduce_sum %y dims [0] : tensor<2xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

func.func @loss(%x: tensor<2xf32>) -> tensor<f32> {
  %y = mix.exp %x : tensor<2xf32>
  %s = mix.reduce_sum %y dims [0] : tensor<2xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
