// RUN: mix-opt %s --mix-causal-products | FileCheck %s

// A causal attention with a prefix of 2 keys: scores (4 x 6), the mask
// -inf above the diagonal 2. P and the scores' adjoint dS are zero above
// it; the scores and P's adjoint dP are read only on and below it.
// CHECK-LABEL: func.func @attention
//       CHECK:   mix.matmul %arg0, %arg1 transpose_rhs {mix.triangle = array<i64: 2, 2>}
//       CHECK:   mix.matmul %[[P:.*]], %arg2 {mix.triangle = array<i64: 0, 2>}
//       CHECK:   mix.matmul %arg3, %arg2 transpose_rhs {mix.triangle = array<i64: 2, 2>}
//       CHECK:   mix.matmul %[[P]], %arg3 transpose_lhs {mix.triangle = array<i64: 1, 2>}
//       CHECK:   mix.matmul %[[DS:.*]], %arg1 {mix.triangle = array<i64: 0, 2>}
//       CHECK:   mix.matmul %[[DS]], %arg0 transpose_lhs {mix.triangle = array<i64: 1, 2>}
func.func @attention(%q: tensor<3x4x8xf32>, %k: tensor<3x6x8xf32>, %v: tensor<3x6x8xf32>,
                     %do: tensor<3x4x8xf32>)
    -> (tensor<3x4x8xf32>, tensor<3x6x8xf32>, tensor<3x4x8xf32>, tensor<3x6x8xf32>) {
  %c = arith.constant dense<0.35> : tensor<1x1x1xf32>
  %s = mix.matmul %q, %k transpose_rhs : (tensor<3x4x8xf32>, tensor<3x6x8xf32>) -> tensor<3x4x6xf32>
  %ss = mix.mul %s, %c : tensor<3x4x6xf32>, tensor<1x1x1xf32> -> tensor<3x4x6xf32>
  %mask = mix.causal_mask prefix 2 : tensor<4x6xf32>
  %mask3 = mix.reshape %mask : tensor<4x6xf32> -> tensor<1x4x6xf32>
  %x = mix.add %ss, %mask3 : tensor<3x4x6xf32>, tensor<1x4x6xf32> -> tensor<3x4x6xf32>
  %max = mix.reduce_max %x dims [2] : tensor<3x4x6xf32> -> tensor<3x4x1xf32>
  %m = mix.stop_gradient %max : tensor<3x4x1xf32>
  %xm = mix.sub %x, %m : tensor<3x4x6xf32>, tensor<3x4x1xf32> -> tensor<3x4x6xf32>
  %e = mix.exp %xm : tensor<3x4x6xf32>
  %sum = mix.reduce_sum %e dims [2] : tensor<3x4x6xf32> -> tensor<3x4x1xf32>
  %p = mix.div %e, %sum : tensor<3x4x6xf32>, tensor<3x4x1xf32> -> tensor<3x4x6xf32>
  %o = mix.matmul %p, %v : (tensor<3x4x6xf32>, tensor<3x6x8xf32>) -> tensor<3x4x8xf32>
  // The backward pass, as mix-simplify-softmax-grad leaves it.
  %dp = mix.matmul %do, %v transpose_rhs : (tensor<3x4x8xf32>, tensor<3x6x8xf32>) -> tensor<3x4x6xf32>
  %dv = mix.matmul %p, %do transpose_lhs : (tensor<3x4x6xf32>, tensor<3x4x8xf32>) -> tensor<3x6x8xf32>
  %gp = mix.mul %dp, %p : tensor<3x4x6xf32>, tensor<3x4x6xf32> -> tensor<3x4x6xf32>
  %rs = mix.reduce_sum %gp dims [2] : tensor<3x4x6xf32> -> tensor<3x4x1xf32>
  %g = mix.sub %dp, %rs : tensor<3x4x6xf32>, tensor<3x4x1xf32> -> tensor<3x4x6xf32>
  %gs = mix.mul %g, %p : tensor<3x4x6xf32>, tensor<3x4x6xf32> -> tensor<3x4x6xf32>
  %ds = mix.mul %gs, %c : tensor<3x4x6xf32>, tensor<1x1x1xf32> -> tensor<3x4x6xf32>
  %dq = mix.matmul %ds, %k : (tensor<3x4x6xf32>, tensor<3x6x8xf32>) -> tensor<3x4x8xf32>
  %dk = mix.matmul %ds, %q transpose_lhs : (tensor<3x4x6xf32>, tensor<3x4x8xf32>) -> tensor<3x6x8xf32>
  return %o, %dv, %dq, %dk : tensor<3x4x8xf32>, tensor<3x6x8xf32>, tensor<3x4x8xf32>, tensor<3x6x8xf32>
}

// Nothing is marked where a triangle matters:
//   * scores that are also returned (read whole), or reduced unmasked;
//   * a softmax without a mask, and one whose "mask" is only a tensor;
//   * a product whose right operand is the zero-above one;
//   * exp of a masked tensor's result feeding a product through a
//     reduction first.
// CHECK-LABEL: func.func @unmarked
//   CHECK-NOT:   mix.triangle
//       CHECK:   return
func.func @unmarked(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %w: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>) {
  %s = mix.matmul %q, %k transpose_rhs : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %mask = mix.causal_mask prefix 0 : tensor<4x4xf32>
  %x = mix.add %s, %mask : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %s2 = mix.matmul %q, %k transpose_rhs : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %r = mix.reduce_sum %s2 dims [1] : tensor<4x4xf32> -> tensor<4x1xf32>
  %e = mix.exp %w : tensor<4x4xf32>
  %o = mix.matmul %e, %k : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = mix.add %w, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %ey = mix.exp %y : tensor<4x4xf32>
  %o2 = mix.matmul %k, %ey transpose_lhs : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %ex = mix.exp %x : tensor<4x4xf32>
  %o3 = mix.matmul %w, %ex : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %o4 = mix.matmul %o3, %k : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s, %r, %o, %o2, %o4 : tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>
}
