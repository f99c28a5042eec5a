// RUN: mix-opt %s --split-input-file --mix-autodiff | FileCheck %s

// The vector-Jacobian products of the layout ops: each is linear and its
// adjoint is the transposed layout op (reshape back, slice <-> pad at the
// same offset, concat -> one slice per part, rank_pad -> rank_slice).
// Every @forward returns sum(y), so y's adjoint is the seed broadcast to
// y's shape (DY); @grad returns the loss and then each argument's gradient.

// y = reshape(x): dx = g reshaped to x's shape.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x6xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.reshape %[[DY]] : tensor<3x4xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x6xf32>) -> tensor<f32> {
  %y = mix.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<3x4xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = x[:, 3:7]: dx is g padded with zeros back to x's size, at the
// slice's offset and dimension.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.pad %[[DY]] dim 1 offset 3 : tensor<2x4xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x8xf32>) -> tensor<f32> {
  %y = mix.slice %x dim 1 offset 3 : tensor<2x8xf32> -> tensor<2x4xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = pad(x) at rows [1, 3) of 5: dx is g's slice at that offset.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<5x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.slice %[[DY]] dim 0 offset 1 : tensor<5x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.pad %x dim 0 offset 1 : tensor<2x3xf32> -> tensor<5x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<5x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = concat(a, b) along dim 1, a of width 3 and b of width 5: da is g's
// first 3 columns, db the 5 after them (offset 3, the width of a).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[DA:.*]] = mix.slice %[[DY]] dim 1 offset 0 : tensor<2x8xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DB:.*]] = mix.slice %[[DY]] dim 1 offset 3 : tensor<2x8xf32> -> tensor<2x5xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<f32> {
  %y = mix.concat %a, %b dim 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x8xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A slice read twice (x[0:2] + x[2:4], the shape of the attention's q/k/v
// split): the two pads are summed into x's one adjoint.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<4x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[P1:.*]] = mix.pad %[[DY]] dim 0 offset 2 : tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[P0:.*]] = mix.pad %[[DY]] dim 0 offset 0 : tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.add %[[P1]], %[[P0]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<4x3xf32>) -> tensor<f32> {
  %u = mix.slice %x dim 0 offset 0 : tensor<4x3xf32> -> tensor<2x3xf32>
  %v = mix.slice %x dim 0 offset 2 : tensor<4x3xf32> -> tensor<2x3xf32>
  %y = mix.add %u, %v : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// rank_pad's adjoint is this rank's share of g, rank_slice on the same
// dimension and number of shards (the collectives' other rules are in
// mix-autodiff-collectives.mlir).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x2xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.rank_slice %[[DY]] dim 1 shards 2 : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x2xf32>) -> tensor<f32> {
  %y = mix.rank_pad %x dim 1 shards 2 : tensor<2x2xf32> -> tensor<2x4xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
