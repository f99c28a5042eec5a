// RUN: mix-opt %s --split-input-file --mix-autodiff | FileCheck %s

// The vector-Jacobian products of the elementwise ops. Every case is
// @forward(...) -> sum(y), so the adjoint of y is the loss's seed broadcast
// to y's shape (DY below) and the rule under test is what comes after it.
// @grad returns the loss, then d loss / d arg in argument order, which is
// how each adjoint is tied to its operand.

// c = a + b: both adjoints are g itself, no op of their own.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DY]], %[[DY]] : tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.add %a, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// c = a + b with b broadcast along dimension 0 (and a along 1): the
// adjoint of a broadcast operand is g summed over the dimensions it was
// broadcast along, and only those.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x1xf32>, %[[B:.*]]: tensor<1x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DA:.*]] = mix.reduce_sum %[[DY]] dims [1] : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[DB:.*]] = mix.reduce_sum %[[DY]] dims [0] : tensor<2x3xf32> -> tensor<1x3xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DA]], %[[DB]] : tensor<f32>, tensor<2x1xf32>, tensor<1x3xf32>
func.func @forward(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<f32> {
  %y = mix.add %a, %b : tensor<2x1xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// c = a - b: da = g, db = -g (summed over b's broadcast dimension).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x1xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[N:.*]] = mix.neg %[[DY]] : tensor<2x3xf32>
// CHECK-NEXT:    %[[DB:.*]] = mix.reduce_sum %[[N]] dims [1] : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DY]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<f32> {
  %y = mix.sub %a, %b : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// c = a * b: da = g * b, db = g * a (each operand's adjoint is scaled by
// the *other* operand).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-DAG:     %[[DA:.*]] = mix.mul %[[DY]], %[[B]]
// CHECK-DAG:     %[[DB:.*]] = mix.mul %[[DY]], %[[A]]
// CHECK:         return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.mul %a, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// c = a * b with b a (1, 3) row broadcast over the rows: db = sum_0(g * a).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<1x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-DAG:     %[[DA:.*]] = mix.mul %[[DY]], %[[B]] : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
// CHECK-DAG:     %[[GA:.*]] = mix.mul %[[DY]], %[[A]] : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK:         %[[DB:.*]] = mix.reduce_sum %[[GA]] dims [0] : tensor<2x3xf32> -> tensor<1x3xf32>
// CHECK:         return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<f32> {
  %y = mix.mul %a, %b : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = a / b: da = g / b and db = -g a / b^2, written -(g / b) * y with the
// forward quotient y (so no second division by b^2).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK:         %[[Y:.*]] = mix.div %[[A]], %[[B]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[Q:.*]] = mix.div %[[DY]], %[[B]]
// CHECK-NEXT:    %[[QY:.*]] = mix.mul %[[Q]], %[[Y]]
// CHECK-NEXT:    %[[DB:.*]] = mix.neg %[[QY]]
// CHECK-NEXT:    return %{{.*}}, %[[Q]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.div %a, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = max(a, b): g goes to a where a > b (step(a - b)), and the rest,
// ties included, to b: db = g - g * step(a - b).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[D:.*]] = mix.sub %[[A]], %[[B]]
// CHECK-NEXT:    %[[L:.*]] = mix.step %[[D]]
// CHECK-NEXT:    %[[DA:.*]] = mix.mul %[[DY]], %[[L]]
// CHECK-NEXT:    %[[GL:.*]] = mix.mul %[[DY]], %[[L]]
// CHECK-NEXT:    %[[DB:.*]] = mix.sub %[[DY]], %[[GL]]
// CHECK-NEXT:    return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.max %a, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = exp(x): dx = g * y, reusing the forward result (not exp'ing x again,
// and not g * x).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[Y:.*]] = mix.exp %[[X]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.mul %[[DY]], %[[Y]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.exp %x : tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = log(x): dx = g / x.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.div %[[DY]], %[[X]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.log %x : tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = -x: dx = -g.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.neg %[[DY]] : tensor<2x3xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.neg %x : tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = x^(-1/2): dx = -1/2 x^(-3/2) g = (g * -0.5) * (y * y * y).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[Y:.*]] = mix.rsqrt %[[X]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-DAG:     %[[C:.*]] = arith.constant dense<-5.000000e-01> : tensor<1x1xf32>
// CHECK-DAG:     %[[S:.*]] = mix.mul %[[DY]], %[[C]]
// CHECK-DAG:     %[[Y2:.*]] = mix.mul %[[Y]], %[[Y]]
// CHECK-DAG:     %[[Y3:.*]] = mix.mul %[[Y2]], %[[Y]]
// CHECK:         %[[DX:.*]] = mix.mul %[[S]], %[[Y3]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.rsqrt %x : tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = sqrt(x): dx = g / (2 sqrt(x)) = (g * 0.5) / y.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[Y:.*]] = mix.sqrt %[[X]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<5.000000e-01> : tensor<1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = mix.mul %[[DY]], %[[C]]
// CHECK-NEXT:    %[[DX:.*]] = mix.div %[[S]], %[[Y]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.sqrt %x : tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = tanh(x): dx = g * (1 - y^2), from the forward result.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[Y:.*]] = mix.tanh %[[X]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %[[YY:.*]] = mix.mul %[[Y]], %[[Y]]
// CHECK-NEXT:    %[[D:.*]] = mix.sub %[[ONE]], %[[YY]] : tensor<1x1xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.mul %[[DY]], %[[D]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = mix.tanh %x : tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// step has a zero derivative (almost everywhere), so relu written as
// x * step(x) has the adjoint g * step(x) and nothing flows through step:
// there is no second term to add.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[S:.*]] = mix.step %[[X]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.mul %[[DY]], %[[S]]
// CHECK-NEXT:    %{{.*}} = mix.mul %[[DY]], %[[X]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %st = mix.step %x : tensor<2x3xf32>
  %y = mix.mul %x, %st : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// stop_gradient is a constant to autodiff: x * stop_gradient(x) has the
// adjoint g * stop_gradient(x) only (the softmax's max shift relies on it).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[SG:.*]] = mix.stop_gradient %[[X]]
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.mul %[[DY]], %[[SG]]
// CHECK-NEXT:    %{{.*}} = mix.mul %[[DY]], %[[X]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %sg = mix.stop_gradient %x : tensor<2x3xf32>
  %y = mix.mul %x, %sg : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A constant operand takes an adjoint (g * x here) but is not an error and
// produces no gradient output: only x's gradient g * c is returned.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
// CHECK:         %[[C:.*]] = arith.constant dense<3.000000e+00> : tensor<2x3xf32>
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.mul %[[DY]], %[[C]]
// CHECK-NEXT:    %{{.*}} = mix.mul %[[DY]], %[[X]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]] : tensor<f32>, tensor<2x3xf32>
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %c = arith.constant dense<3.0> : tensor<2x3xf32>
  %y = mix.mul %x, %c : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %s = mix.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
