// RUN: mix-opt %s --split-input-file --mix-autodiff | FileCheck %s

// The vector-Jacobian products of the index-driven and sequential ops:
// gather <-> scatter_add and take_along <-> put_along are each other's
// adjoints with the same ids, cumsum's adjoint is the cumsum the other way,
// and the causal mask is a constant. Every @forward returns sum(y), so y's
// adjoint is the seed broadcast to y's shape (DY). Integer arguments (the
// ids) get no gradient: @grad returns the loss and the f32 gradients only.

// y = table[ids]: dtable = scatter_add(g, ids), rows summed per id.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[T:.*]]: tensor<10x4xf32>, %[[IDS:.*]]: tensor<2x3xi32>) -> (tensor<f32>, tensor<10x4xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1x1xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[DT:.*]] = mix.scatter_add %[[DY]], %[[IDS]] : (tensor<2x3x4xf32>, tensor<2x3xi32>) -> tensor<10x4xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DT]] : tensor<f32>, tensor<10x4xf32>
func.func @forward(%table: tensor<10x4xf32>, %ids: tensor<2x3xi32>) -> tensor<f32> {
  %y = mix.gather %table, %ids : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %s = mix.reduce_sum %y dims [0, 1, 2] : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = scatter_add(u, ids): du = gather(g, ids), each update reads its row.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[U:.*]]: tensor<2x3x4xf32>, %[[IDS:.*]]: tensor<2x3xi64>) -> (tensor<f32>, tensor<2x3x4xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<10x4xf32>
// CHECK-NEXT:    %[[DU:.*]] = mix.gather %[[DY]], %[[IDS]] : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DU]]
func.func @forward(%u: tensor<2x3x4xf32>, %ids: tensor<2x3xi64>) -> tensor<f32> {
  %y = mix.scatter_add %u, %ids : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<10x4xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<10x4xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = take_along(x, ids) (the logit of each target): dx = put_along(g, ids),
// g in the picked column of each row and zeros elsewhere.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x5xf32>, %[[IDS:.*]]: tensor<2x3xi32>) -> (tensor<f32>, tensor<2x3x5xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1x1xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.put_along %[[DY]], %[[IDS]] : (tensor<2x3x1xf32>, tensor<2x3xi32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3x5xf32>, %ids: tensor<2x3xi32>) -> tensor<f32> {
  %y = mix.take_along %x, %ids : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<2x3x1xf32>
  %s = mix.reduce_sum %y dims [0, 1, 2] : tensor<2x3x1xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = put_along(x, ids): dx = take_along(g, ids).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x1xf32>, %[[IDS:.*]]: tensor<2x3xi32>) -> (tensor<f32>, tensor<2x3x1xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1x1xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.take_along %[[DY]], %[[IDS]] : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<2x3x1xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3x1xf32>, %ids: tensor<2x3xi32>) -> tensor<f32> {
  %y = mix.put_along %x, %ids : (tensor<2x3x1xf32>, tensor<2x3xi32>) -> tensor<2x3x5xf32>
  %s = mix.reduce_sum %y dims [0, 1, 2] : tensor<2x3x5xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = prefix sums of x along dim 1: x[t] feeds every y[s] with s >= t, so
// dx is the suffix sum of g along the same dimension (cumsum reverse).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.cumsum %[[DY]] dim 1 reverse : tensor<2x3xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.cumsum %x dim 1 : tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// And the suffix sum along dim 0 has the prefix sum as adjoint (no
// `reverse` before the colon).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.cumsum %[[DY]] dim 0 : tensor<2x3xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.cumsum %x dim 0 reverse : tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The causal mask has no operand and is a constant: scores + mask passes g
// to the scores unchanged, and the mask's own adjoint goes nowhere.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<3x5xf32>)
// CHECK:         mix.causal_mask prefix 2 : tensor<3x5xf32>
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<3x5xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DY]]
func.func @forward(%x: tensor<3x5xf32>) -> tensor<f32> {
  %m = mix.causal_mask prefix 2 : tensor<3x5xf32>
  %y = mix.add %x, %m : tensor<3x5xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<3x5xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
