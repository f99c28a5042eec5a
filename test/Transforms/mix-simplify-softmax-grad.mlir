// RUN: mix-opt %s --mix-simplify-softmax-grad | FileCheck %s
// RUN: mix-opt %s --mix-autodiff --canonicalize --cse --mix-simplify-softmax-grad --cse | FileCheck %s --check-prefix=GRAD

// The adjoint as mix-autodiff writes it, (G / S - sum(G / S * P)) * E, with
// P = E / S and S = sum(E), becomes (G - sum(G * P)) * P: E no longer
// reaches the backward pass.
// CHECK-LABEL: func.func @adjoint
// CHECK-SAME:    (%[[E:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[S:.*]] = mix.reduce_sum %[[E]] dims [2]
// CHECK:         %[[P:.*]] = mix.div %[[E]], %[[S]]
// CHECK:         %[[GP:.*]] = mix.mul %[[G]], %[[P]]
// CHECK:         %[[T:.*]] = mix.reduce_sum %[[GP]] dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// CHECK:         %[[D:.*]] = mix.sub %[[G]], %[[T]] : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
// CHECK:         %[[DX:.*]] = mix.mul %[[D]], %[[P]]
// CHECK:         return %[[P]], %[[DX]]
func.func @adjoint(%e: tensor<2x3x4xf32>, %g: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %s = mix.reduce_sum %e dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %p = mix.div %e, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %q = mix.div %g, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %qp = mix.mul %q, %p : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %n = mix.neg %qp : tensor<2x3x4xf32>
  %t = mix.reduce_sum %n dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %tb = mix.broadcast %t : tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %a = mix.add %q, %tb : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %dx = mix.mul %a, %e : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %p, %dx : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// The same with every commutative operand the other way round and the sum
// broadcast implicitly.
// CHECK-LABEL: func.func @commuted
// CHECK-SAME:    (%[[E:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[P:.*]] = mix.div %[[E]]
// CHECK:         %[[GP:.*]] = mix.mul %[[G]], %[[P]]
// CHECK:         %[[T:.*]] = mix.reduce_sum %[[GP]] dims [2]
// CHECK:         %[[D:.*]] = mix.sub %[[G]], %[[T]]
// CHECK:         %[[DX:.*]] = mix.mul %[[D]], %[[P]]
// CHECK:         return %[[DX]]
func.func @commuted(%e: tensor<2x3x4xf32>, %g: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %s = mix.reduce_sum %e dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %p = mix.div %e, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %q = mix.div %g, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %qp = mix.mul %p, %q : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %n = mix.neg %qp : tensor<2x3x4xf32>
  %t = mix.reduce_sum %n dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %a = mix.add %t, %q : tensor<2x3x1xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %dx = mix.mul %e, %a : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %dx : tensor<2x3x4xf32>
}

// Not a softmax's adjoint: the correction sums over another dimension than
// the normalization, so nothing changes.
// CHECK-LABEL: func.func @other_dims
// CHECK:         %[[A:.*]] = mix.add
// CHECK:         mix.mul %[[A]], %arg0
// CHECK-NOT:     mix.sub
func.func @other_dims(%e: tensor<2x3x4xf32>, %g: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %s = mix.reduce_sum %e dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %p = mix.div %e, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %q = mix.div %g, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %qp = mix.mul %q, %p : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %n = mix.neg %qp : tensor<2x3x4xf32>
  %t = mix.reduce_sum %n dims [1] : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %a = mix.add %q, %t : tensor<2x3x4xf32>, tensor<2x1x4xf32> -> tensor<2x3x4xf32>
  %dx = mix.mul %a, %e : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %dx : tensor<2x3x4xf32>
}

// Nor when P normalizes another tensor than the one the adjoint multiplies.
// CHECK-LABEL: func.func @other_numerator
// CHECK-NOT:     mix.sub
// CHECK:         return
func.func @other_numerator(%e: tensor<2x3x4xf32>, %f: tensor<2x3x4xf32>, %g: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %s = mix.reduce_sum %e dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %p = mix.div %f, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %q = mix.div %g, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %qp = mix.mul %q, %p : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %n = mix.neg %qp : tensor<2x3x4xf32>
  %t = mix.reduce_sum %n dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %a = mix.add %q, %t : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %dx = mix.mul %a, %e : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %dx : tensor<2x3x4xf32>
}

// What mix-autodiff makes of a max-shifted softmax is rewritten: in @grad,
// the exponentials are used only to make P, and the input's adjoint is
// (G - sum(G * P)) * P.
// GRAD-LABEL: func.func @grad
// GRAD:         %[[E:.*]] = mix.exp
// GRAD:         %[[S:.*]] = mix.reduce_sum %[[E]] dims [2]
// GRAD:         %[[P:.*]] = mix.div %[[E]], %[[S]]
// GRAD-NOT:     %[[E]]
// GRAD:         %[[T:.*]] = mix.reduce_sum %{{.*}} dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// GRAD-NEXT:    %[[D:.*]] = mix.sub %{{.*}}, %[[T]]
// GRAD-NEXT:    %[[DX:.*]] = mix.mul %[[D]], %[[P]]
// GRAD-NOT:     %[[E]]
// GRAD:         return %{{.*}}, %[[DX]], %{{.*}} :
func.func @forward(%x: tensor<2x3x4xf32>, %w: tensor<2x3x4xf32>) -> tensor<f32> {
  %m = mix.reduce_max %x dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %ms = mix.stop_gradient %m : tensor<2x3x1xf32>
  %d = mix.sub %x, %ms : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %e = mix.exp %d : tensor<2x3x4xf32>
  %s = mix.reduce_sum %e dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %p = mix.div %e, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32> -> tensor<2x3x4xf32>
  %y = mix.mul %p, %w : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %l = mix.reduce_sum %y dims [0, 1, 2] : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %r = mix.reshape %l : tensor<1x1x1xf32> -> tensor<f32>
  return %r : tensor<f32>
}
