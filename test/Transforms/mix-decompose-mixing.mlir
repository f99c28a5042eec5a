// RUN: mix-opt %s --split-input-file --mix-decompose | FileCheck %s

// mix-decompose on the gated-stream mixing ops (MixDecomposeMixing.cpp): the
// four gates, the dynamic convolution in each mixing order, mixtures
// (stacked and region experts) and the balance loss. Shapes: B = 2, S = 3
// (T = 6 tokens), d = 4, N = 2 streams (3 for the gates and per-head
// convolution), f = 5 (6 with heads). Distinct sizes make each reshape's
// and product's type say which operand is which.

// A simple softmax gate: logits = x W^T + b over the tokens, then the
// max-shifted softmax over the N = 3 streams (the last dimension).
// CHECK-LABEL: func.func @gate_simple
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[W:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[X2:.*]] = mix.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[XW:.*]] = mix.matmul %[[X2]], %[[W]] transpose_rhs : (tensor<6x4xf32>, tensor<3x4xf32>) -> tensor<6x3xf32>
// CHECK-NEXT:    %[[B2:.*]] = mix.reshape %[[B]] : tensor<3xf32> -> tensor<1x3xf32>
// CHECK-NEXT:    %[[XWB:.*]] = mix.add %[[XW]], %[[B2]]
// CHECK-NEXT:    %[[L:.*]] = mix.reshape %[[XWB]] : tensor<6x3xf32> -> tensor<2x3x3xf32>
// CHECK-NEXT:    %[[M:.*]] = mix.reduce_max %[[L]] dims [2] : tensor<2x3x3xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[MS:.*]] = mix.stop_gradient %[[M]]
// CHECK-NEXT:    %[[SH:.*]] = mix.sub %[[L]], %[[MS]]
// CHECK-NEXT:    %[[E:.*]] = mix.exp %[[SH]]
// CHECK-NEXT:    %[[Z:.*]] = mix.reduce_sum %[[E]] dims [2] : tensor<2x3x3xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[G:.*]] = mix.div %[[E]], %[[Z]]
// CHECK-NEXT:    return %[[G]]
func.func @gate_simple(%x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<2x3x3xf32> {
  %g = mix.gate simple softmax %x, %w, %b : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3x3xf32>
  return %g : tensor<2x3x3xf32>
}

// -----

// A sigmoid gate: the same logits, each through 1 / (1 + exp(-l)) on its
// own (no softmax, so no reduction over the streams).
// CHECK-LABEL: func.func @gate_sigmoid
// CHECK:         %[[L:.*]] = mix.reshape %{{.*}} : tensor<6x3xf32> -> tensor<2x3x3xf32>
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<1x1x1xf32>
// CHECK-NEXT:    %[[N:.*]] = mix.neg %[[L]]
// CHECK-NEXT:    %[[E:.*]] = mix.exp %[[N]]
// CHECK-NEXT:    %[[D:.*]] = mix.add %[[ONE]], %[[E]]
// CHECK-NEXT:    %[[G:.*]] = mix.div %[[ONE]], %[[D]]
// CHECK-NEXT:    return %[[G]]
func.func @gate_sigmoid(%x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<2x3x3xf32> {
  %g = mix.gate simple sigmoid %x, %w, %b : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3x3xf32>
  return %g : tensor<2x3x3xf32>
}

// -----

// A context-aware gate: the logits are those of LN(x * modulation; norm),
// so the input is modulated and layer-normed (with the norm's weight and
// bias, (1, 1, d)) before the gate's own linear map.
// CHECK-LABEL: func.func @gate_context
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[W:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3xf32>, %[[MOD:.*]]: tensor<2x3x4xf32>, %[[LW:.*]]: tensor<4xf32>, %[[LB:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[XM:.*]] = mix.mul %[[X]], %[[MOD]]
// CHECK-NEXT:    mix.reduce_sum %[[XM]] dims [2]
// CHECK:         %[[EPS:.*]] = arith.constant dense<9.99999974E-6>
// CHECK:         %[[LW3:.*]] = mix.reshape %[[LW]] : tensor<4xf32> -> tensor<1x1x4xf32>
// CHECK:         %[[LB3:.*]] = mix.reshape %[[LB]] : tensor<4xf32> -> tensor<1x1x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = mix.add %{{.*}}, %[[LB3]]
// CHECK-NEXT:    %[[Y2:.*]] = mix.reshape %[[Y]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    mix.matmul %[[Y2]], %[[W]] transpose_rhs
// CHECK:         mix.reduce_max
// CHECK:         return
func.func @gate_context(%x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>, %m: tensor<2x3x4xf32>, %lw: tensor<4xf32>, %lb: tensor<4xf32>) -> tensor<2x3x3xf32> {
  %g = mix.gate context_aware softmax %x, %w, %b modulation %m norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x3xf32>
  return %g : tensor<2x3x3xf32>
}

// -----

// An adaptive gate: the logits x W^T + b scaled per token by `scale`
// (B, S, 1) before the softmax.
// CHECK-LABEL: func.func @gate_adaptive
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[W:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3xf32>, %[[S:.*]]: tensor<2x3x1xf32>)
// CHECK:         %[[L:.*]] = mix.reshape %{{.*}} : tensor<6x3xf32> -> tensor<2x3x3xf32>
// CHECK-NEXT:    %[[SL:.*]] = mix.mul %[[S]], %[[L]] : tensor<2x3x1xf32>, tensor<2x3x3xf32> -> tensor<2x3x3xf32>
// CHECK-NEXT:    mix.reduce_max %[[SL]] dims [2]
func.func @gate_adaptive(%x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>, %s: tensor<2x3x1xf32>) -> tensor<2x3x3xf32> {
  %g = mix.gate adaptive softmax %x, %w, %b scale %s : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<2x3x1xf32>) -> tensor<2x3x3xf32>
  return %g : tensor<2x3x3xf32>
}

// -----

// A multi-head gate, H = 2 heads of c = d / H = 2 features, N = 3: head
// j's logits read feature chunk j. x (T, H, c) goes head-major (H, T, c),
// a batched product with W (H, N, c) transposed gives (H, T, N), the bias
// (H, 1, N) is added, and the result goes back to (B, S, H, N), softmaxed
// over N (dimension 3).
// CHECK-LABEL: func.func @gate_heads
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[W:.*]]: tensor<2x3x2xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[X3:.*]] = mix.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x2x2xf32>
// CHECK-NEXT:    %[[XH:.*]] = mix.transpose %[[X3]] [1, 0, 2] : tensor<6x2x2xf32> -> tensor<2x6x2xf32>
// CHECK-NEXT:    %[[L:.*]] = mix.matmul %[[XH]], %[[W]] transpose_rhs : (tensor<2x6x2xf32>, tensor<2x3x2xf32>) -> tensor<2x6x3xf32>
// CHECK-NEXT:    %[[BH:.*]] = mix.reshape %[[B]] : tensor<2x3xf32> -> tensor<2x1x3xf32>
// CHECK-NEXT:    %[[LB:.*]] = mix.add %[[L]], %[[BH]] : tensor<2x6x3xf32>, tensor<2x1x3xf32> -> tensor<2x6x3xf32>
// CHECK-NEXT:    %[[LT:.*]] = mix.transpose %[[LB]] [1, 0, 2] : tensor<2x6x3xf32> -> tensor<6x2x3xf32>
// CHECK-NEXT:    %[[L4:.*]] = mix.reshape %[[LT]] : tensor<6x2x3xf32> -> tensor<2x3x2x3xf32>
// CHECK-NEXT:    mix.reduce_max %[[L4]] dims [3] : tensor<2x3x2x3xf32> -> tensor<2x3x2x1xf32>
func.func @gate_heads(%x: tensor<2x3x4xf32>, %w: tensor<2x3x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x3x2x3xf32> {
  %g = mix.gate multi_head softmax %x, %w, %b : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x3xf32>) -> tensor<2x3x2x3xf32>
  return %g : tensor<2x3x2x3xf32>
}

// -----

// The dynamic convolution x (sum_k g_k K_k)^T + sum_k g_k b_k, apply then
// mix: S = g (T, N, 1) * x (T, 1, d) scales the input per stream, and
// U = sum_k S_k K_k^T, one (T, d) x (f, d)^T product per stream k reading
// slice k of S and of the kernels; the biases mixed as g (T, N) b (N, f).
// CHECK-LABEL: func.func @conv_apply_then_mix
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x3x2xf32>, %[[K:.*]]: tensor<2x5x4xf32>, %[[B:.*]]: tensor<2x5xf32>)
// CHECK-NEXT:    %[[GT:.*]] = mix.reshape %[[G]] : tensor<2x3x2xf32> -> tensor<6x1x2xf32>
// CHECK-NEXT:    %[[G3:.*]] = mix.reshape %[[GT]] : tensor<6x1x2xf32> -> tensor<6x2x1xf32>
// CHECK-NEXT:    %[[X3:.*]] = mix.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x1x4xf32>
// CHECK-NEXT:    %[[S:.*]] = mix.mul %[[G3]], %[[X3]] : tensor<6x2x1xf32>, tensor<6x1x4xf32> -> tensor<6x2x4xf32>
// CHECK-NEXT:    %[[S0:.*]] = mix.slice %[[S]] dim 1 offset 0 : tensor<6x2x4xf32> -> tensor<6x1x4xf32>
// CHECK-NEXT:    %[[S0R:.*]] = mix.reshape %[[S0]] : tensor<6x1x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[K0:.*]] = mix.slice %[[K]] dim 0 offset 0 : tensor<2x5x4xf32> -> tensor<1x5x4xf32>
// CHECK-NEXT:    %[[K0R:.*]] = mix.reshape %[[K0]] : tensor<1x5x4xf32> -> tensor<5x4xf32>
// CHECK-NEXT:    %[[U0:.*]] = mix.matmul %[[S0R]], %[[K0R]] transpose_rhs : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK-NEXT:    %[[S1:.*]] = mix.slice %[[S]] dim 1 offset 1 : tensor<6x2x4xf32> -> tensor<6x1x4xf32>
// CHECK-NEXT:    %[[S1R:.*]] = mix.reshape %[[S1]]
// CHECK-NEXT:    %[[K1:.*]] = mix.slice %[[K]] dim 0 offset 1 : tensor<2x5x4xf32> -> tensor<1x5x4xf32>
// CHECK-NEXT:    %[[K1R:.*]] = mix.reshape %[[K1]]
// CHECK-NEXT:    %[[U1:.*]] = mix.matmul %[[S1R]], %[[K1R]] transpose_rhs : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK-NEXT:    %[[U:.*]] = mix.add %[[U0]], %[[U1]]
// CHECK-NEXT:    %[[G2:.*]] = mix.reshape %[[GT]] : tensor<6x1x2xf32> -> tensor<6x2xf32>
// CHECK-NEXT:    %[[GB:.*]] = mix.matmul %[[G2]], %[[B]] : (tensor<6x2xf32>, tensor<2x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT:    %[[UB:.*]] = mix.add %[[U]], %[[GB]]
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[UB]] : tensor<6x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    return %[[R]]
func.func @conv_apply_then_mix(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>, %b: tensor<2x5xf32>) -> tensor<2x3x5xf32> {
  %u = mix.dynamic_conv %x, %g kernels %k bias %b order apply_then_mix : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  return %u : tensor<2x3x5xf32>
}

// -----

// Apply then mix with a gate shared by each sequence, (B, 1, N): the gate
// is broadcast to every token first.
// CHECK-LABEL: func.func @conv_apply_then_mix_shared_gate
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x1x2xf32>, %[[K:.*]]: tensor<2x5x4xf32>)
// CHECK-NEXT:    %[[GB:.*]] = mix.broadcast %[[G]] : tensor<2x1x2xf32> -> tensor<2x3x2xf32>
// CHECK-NEXT:    mix.reshape %[[GB]] : tensor<2x3x2xf32> -> tensor<6x1x2xf32>
// CHECK:         mix.matmul {{.*}} transpose_rhs : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK:         mix.matmul {{.*}} transpose_rhs : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK-NOT:     mix.matmul
// CHECK:         return
func.func @conv_apply_then_mix_shared_gate(%x: tensor<2x3x4xf32>, %g: tensor<2x1x2xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %u = mix.dynamic_conv %x, %g kernels %k order apply_then_mix : (tensor<2x3x4xf32>, tensor<2x1x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  return %u : tensor<2x3x5xf32>
}

// -----

// Mix then apply, for a gate shared by each sequence: the kernel
// Ktilde_b = sum_k g_bk K_k once per sequence, (B, N) x (N, f d), then
// x_b Ktilde_b^T as a product batched over the sequences; the mixed bias
// g (B, N) b (N, f) added per sequence as (B, 1, f).
// CHECK-LABEL: func.func @conv_mix_then_apply
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x1x2xf32>, %[[K:.*]]: tensor<2x5x4xf32>, %[[B:.*]]: tensor<2x5xf32>)
// CHECK-NEXT:    %[[G2:.*]] = mix.reshape %[[G]] : tensor<2x1x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %[[KF:.*]] = mix.reshape %[[K]] : tensor<2x5x4xf32> -> tensor<2x20xf32>
// CHECK-NEXT:    %[[KT:.*]] = mix.matmul %[[G2]], %[[KF]] : (tensor<2x2xf32>, tensor<2x20xf32>) -> tensor<2x20xf32>
// CHECK-NEXT:    %[[KT3:.*]] = mix.reshape %[[KT]] : tensor<2x20xf32> -> tensor<2x5x4xf32>
// CHECK-NEXT:    %[[U:.*]] = mix.matmul %[[X]], %[[KT3]] transpose_rhs : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[GB:.*]] = mix.matmul %[[G2]], %[[B]] : (tensor<2x2xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %[[GB3:.*]] = mix.reshape %[[GB]] : tensor<2x5xf32> -> tensor<2x1x5xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.add %[[U]], %[[GB3]] : tensor<2x3x5xf32>, tensor<2x1x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    return %[[R]]
func.func @conv_mix_then_apply(%x: tensor<2x3x4xf32>, %g: tensor<2x1x2xf32>, %k: tensor<2x5x4xf32>, %b: tensor<2x5xf32>) -> tensor<2x3x5xf32> {
  %u = mix.dynamic_conv %x, %g kernels %k bias %b order mix_then_apply : (tensor<2x3x4xf32>, tensor<2x1x2xf32>, tensor<2x5x4xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  return %u : tensor<2x3x5xf32>
}

// -----

// A shared bias is added once, unweighted, as (1, 1, f).
// CHECK-LABEL: func.func @conv_mix_then_apply_shared_bias
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x1x2xf32>, %[[K:.*]]: tensor<2x5x4xf32>, %[[C:.*]]: tensor<5xf32>)
// CHECK:         %[[U:.*]] = mix.matmul %[[X]], %{{.*}} transpose_rhs : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[C3:.*]] = mix.reshape %[[C]] : tensor<5xf32> -> tensor<1x1x5xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.add %[[U]], %[[C3]]
// CHECK-NEXT:    return %[[R]]
func.func @conv_mix_then_apply_shared_bias(%x: tensor<2x3x4xf32>, %g: tensor<2x1x2xf32>, %k: tensor<2x5x4xf32>, %c: tensor<5xf32>) -> tensor<2x3x5xf32> {
  %u = mix.dynamic_conv %x, %g kernels %k shared_bias %c order mix_then_apply : (tensor<2x3x4xf32>, tensor<2x1x2xf32>, tensor<2x5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  return %u : tensor<2x3x5xf32>
}

// -----

// Per-head gates, H = 2 heads, N = 3 streams, f = 6 (c = 3 channels a
// head): head-major throughout. The gate goes (H, T, N); the scaled input
// is (H, T, N, d); stream k's kernel (f, d) is viewed as (H, c, d), so head
// j's product reads rows [j c, (j + 1) c) of it; the bias (N, f) becomes
// (H, N, c) through (N, H, c); the (H, T, c) sum goes back to (T, f).
// CHECK-LABEL: func.func @conv_heads
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x3x2x3xf32>, %[[K:.*]]: tensor<3x6x4xf32>, %[[B:.*]]: tensor<3x6xf32>)
// CHECK-NEXT:    %[[GT:.*]] = mix.reshape %[[G]] : tensor<2x3x2x3xf32> -> tensor<6x2x3xf32>
// CHECK-NEXT:    %[[GH:.*]] = mix.transpose %[[GT]] [1, 0, 2] : tensor<6x2x3xf32> -> tensor<2x6x3xf32>
// CHECK-NEXT:    %[[G4:.*]] = mix.reshape %[[GH]] : tensor<2x6x3xf32> -> tensor<2x6x3x1xf32>
// CHECK-NEXT:    %[[X4:.*]] = mix.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<1x6x1x4xf32>
// CHECK-NEXT:    %[[S:.*]] = mix.mul %[[G4]], %[[X4]] : tensor<2x6x3x1xf32>, tensor<1x6x1x4xf32> -> tensor<2x6x3x4xf32>
// CHECK-NEXT:    %[[S0:.*]] = mix.slice %[[S]] dim 2 offset 0 : tensor<2x6x3x4xf32> -> tensor<2x6x1x4xf32>
// CHECK-NEXT:    %[[S0R:.*]] = mix.reshape %[[S0]] : tensor<2x6x1x4xf32> -> tensor<2x6x4xf32>
// CHECK-NEXT:    %[[K0:.*]] = mix.slice %[[K]] dim 0 offset 0 : tensor<3x6x4xf32> -> tensor<1x6x4xf32>
// CHECK-NEXT:    %[[K0R:.*]] = mix.reshape %[[K0]] : tensor<1x6x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[U0:.*]] = mix.matmul %[[S0R]], %[[K0R]] transpose_rhs : (tensor<2x6x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x3xf32>
// CHECK:         mix.slice %[[S]] dim 2 offset 2
// CHECK:         %[[U:.*]] = mix.add %{{.*}}, %{{.*}} : tensor<2x6x3xf32>, tensor<2x6x3xf32> -> tensor<2x6x3xf32>
// CHECK-NEXT:    %[[B3:.*]] = mix.reshape %[[B]] : tensor<3x6xf32> -> tensor<3x2x3xf32>
// CHECK-NEXT:    %[[BH:.*]] = mix.transpose %[[B3]] [1, 0, 2] : tensor<3x2x3xf32> -> tensor<2x3x3xf32>
// CHECK-NEXT:    %[[GBH:.*]] = mix.matmul %[[GH]], %[[BH]] : (tensor<2x6x3xf32>, tensor<2x3x3xf32>) -> tensor<2x6x3xf32>
// CHECK-NEXT:    %[[UB:.*]] = mix.add %[[U]], %[[GBH]]
// CHECK-NEXT:    %[[UT:.*]] = mix.transpose %[[UB]] [1, 0, 2] : tensor<2x6x3xf32> -> tensor<6x2x3xf32>
// CHECK-NEXT:    %[[U2:.*]] = mix.reshape %[[UT]] : tensor<6x2x3xf32> -> tensor<6x6xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[U2]] : tensor<6x6xf32> -> tensor<2x3x6xf32>
// CHECK-NEXT:    return %[[R]]
func.func @conv_heads(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2x3xf32>, %k: tensor<3x6x4xf32>, %b: tensor<3x6xf32>) -> tensor<2x3x6xf32> {
  %u = mix.dynamic_conv %x, %g kernels %k bias %b order apply_then_mix : (tensor<2x3x4xf32>, tensor<2x3x2x3xf32>, tensor<3x6x4xf32>, tensor<3x6xf32>) -> tensor<2x3x6xf32>
  return %u : tensor<2x3x6xf32>
}

// -----

// stack_then_mix, the same convolution: the kernels (3, 6, 4) as one (18, 4)
// matrix, a view, in one product with the biases (18) after it (the linear
// layer's form, whose add becomes the product's epilogue); P (6 tokens, 3
// streams, 2 heads, 3 channels) weighed by the gate (token, stream, head) and
// summed over the streams: head j's weights scale output chunk j.
// CHECK-LABEL: func.func @conv_heads_stacked
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x3x2x3xf32>, %[[K:.*]]: tensor<3x6x4xf32>, %[[B:.*]]: tensor<3x6xf32>)
// CHECK-NEXT:    %[[GT:.*]] = mix.reshape %[[G]] : tensor<2x3x2x3xf32> -> tensor<6x2x3xf32>
// CHECK-NEXT:    %[[X2:.*]] = mix.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[KF:.*]] = mix.reshape %[[K]] : tensor<3x6x4xf32> -> tensor<18x4xf32>
// CHECK-NEXT:    %[[BF:.*]] = mix.reshape %[[B]] : tensor<3x6xf32> -> tensor<18xf32>
// CHECK-NEXT:    %[[P:.*]] = mix.matmul %[[X2]], %[[KF]] transpose_rhs : (tensor<6x4xf32>, tensor<18x4xf32>) -> tensor<6x18xf32>
// CHECK-NEXT:    %[[BR:.*]] = mix.reshape %[[BF]] : tensor<18xf32> -> tensor<1x18xf32>
// CHECK-NEXT:    %[[PB:.*]] = mix.add %[[P]], %[[BR]] : tensor<6x18xf32>, tensor<1x18xf32> -> tensor<6x18xf32>
// CHECK-NEXT:    %[[GS:.*]] = mix.transpose %[[GT]] [0, 2, 1] : tensor<6x2x3xf32> -> tensor<6x3x2xf32>
// CHECK-NEXT:    %[[W:.*]] = mix.reshape %[[GS]] : tensor<6x3x2xf32> -> tensor<6x3x2x1xf32>
// CHECK-NEXT:    %[[P4:.*]] = mix.reshape %[[PB]] : tensor<6x18xf32> -> tensor<6x3x2x3xf32>
// CHECK-NEXT:    %[[WP:.*]] = mix.mul %[[W]], %[[P4]] : tensor<6x3x2x1xf32>, tensor<6x3x2x3xf32> -> tensor<6x3x2x3xf32>
// CHECK-NEXT:    %[[U:.*]] = mix.reduce_sum %[[WP]] dims [1] : tensor<6x3x2x3xf32> -> tensor<6x1x2x3xf32>
// CHECK-NEXT:    %[[U2:.*]] = mix.reshape %[[U]] : tensor<6x1x2x3xf32> -> tensor<6x6xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[U2]] : tensor<6x6xf32> -> tensor<2x3x6xf32>
// CHECK-NEXT:    return %[[R]]
func.func @conv_heads_stacked(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2x3xf32>, %k: tensor<3x6x4xf32>, %b: tensor<3x6xf32>) -> tensor<2x3x6xf32> {
  %u = mix.dynamic_conv %x, %g kernels %k bias %b order stack_then_mix : (tensor<2x3x4xf32>, tensor<2x3x2x3xf32>, tensor<3x6x4xf32>, tensor<3x6xf32>) -> tensor<2x3x6xf32>
  return %u : tensor<2x3x6xf32>
}

// -----

// A stacked mixture with a shared bias c: sum_k g_k (x K_k^T + c) is the
// convolution plus (sum_k g_k) c, the gate's row sum times c (not c
// alone: sigmoid gates' rows do not sum to one).
// CHECK-LABEL: func.func @mixture_shared_bias
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x3x2xf32>, %[[K:.*]]: tensor<2x5x4xf32>, %[[C:.*]]: tensor<5xf32>)
// CHECK:         %[[U:.*]] = mix.reshape %{{.*}} : tensor<6x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[GS:.*]] = mix.reduce_sum %[[G]] dims [2] : tensor<2x3x2xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[C3:.*]] = mix.reshape %[[C]] : tensor<5xf32> -> tensor<1x1x5xf32>
// CHECK-NEXT:    %[[GC:.*]] = mix.mul %[[GS]], %[[C3]] : tensor<2x3x1xf32>, tensor<1x1x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.add %[[U]], %[[GC]]
// CHECK-NEXT:    return %[[R]]
func.func @mixture_shared_bias(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>, %c: tensor<5xf32>) -> tensor<2x3x5xf32> {
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  return %u : tensor<2x3x5xf32>
}

// -----

// A region mixture (ReLU experts, which no convolution expresses) is
// unrolled: per expert k the region on slice k of its weights, scaled by
// gate column k, and the terms summed. The region's model-level ops
// (linear, relu) are decomposed as well: none is left.
// CHECK-LABEL: func.func @mixture_region
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<2x3x2xf32>, %[[K:.*]]: tensor<2x5x4xf32>)
// CHECK-NEXT:    %[[K0:.*]] = mix.slice %[[K]] dim 0 offset 0 : tensor<2x5x4xf32> -> tensor<1x5x4xf32>
// CHECK-NEXT:    %[[K0R:.*]] = mix.reshape %[[K0]] : tensor<1x5x4xf32> -> tensor<5x4xf32>
// CHECK-NEXT:    %[[X0:.*]] = mix.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[Y0:.*]] = mix.matmul %[[X0]], %[[K0R]] transpose_rhs
// CHECK-NEXT:    %[[Y0R:.*]] = mix.reshape %[[Y0]]
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00>
// CHECK-NEXT:    %[[E0:.*]] = mix.max %[[Y0R]], %[[Z]]
// CHECK-NEXT:    %[[G0:.*]] = mix.slice %[[G]] dim 2 offset 0 : tensor<2x3x2xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[T0:.*]] = mix.mul %[[G0]], %[[E0]] : tensor<2x3x1xf32>, tensor<2x3x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[K1:.*]] = mix.slice %[[K]] dim 0 offset 1
// CHECK:         %[[E1:.*]] = mix.max
// CHECK-NEXT:    %[[G1:.*]] = mix.slice %[[G]] dim 2 offset 1 : tensor<2x3x2xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[T1:.*]] = mix.mul %[[G1]], %[[E1]]
// CHECK-NEXT:    %[[R:.*]] = mix.add %[[T0]], %[[T1]]
// CHECK-NEXT:    return %[[R]]
func.func @mixture_region(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    %z = mix.relu %y : tensor<2x3x5xf32>
    mix.yield %z : tensor<2x3x5xf32>
  }
  return %r : tensor<2x3x5xf32>
}

// -----

// The balance loss, B = 2, S = 3, N = 4, alpha = 0.01: p = per-sequence
// mean over S of g, (B, 1, N); loss = alpha N / B * sum_{b,k} p^2, so the
// constant is 0.01 * 4 / 2 = 0.02.
// CHECK-LABEL: func.func @balance_loss
// CHECK-SAME:    (%[[G:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[S:.*]] = mix.reduce_sum %[[G]] dims [1] : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT:    %[[THIRD:.*]] = arith.constant dense<0.333333343> : tensor<1x1x1xf32>
// CHECK-NEXT:    %[[P:.*]] = mix.mul %[[S]], %[[THIRD]]
// CHECK-NEXT:    %[[P2:.*]] = mix.mul %[[P]], %[[P]]
// CHECK-NEXT:    %[[SUM:.*]] = mix.reduce_sum %[[P2]] dims [0, 1, 2] : tensor<2x1x4xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %[[SC:.*]] = mix.reshape %[[SUM]] : tensor<1x1x1xf32> -> tensor<f32>
// CHECK-NEXT:    %[[A:.*]] = arith.constant dense<2.000000e-02> : tensor<f32>
// CHECK-NEXT:    %[[L:.*]] = mix.mul %[[SC]], %[[A]]
// CHECK-NEXT:    return %[[L]]
func.func @balance_loss(%g: tensor<2x3x4xf32>) -> tensor<f32> {
  %a = mix.balance_loss %g alpha 1.000000e-02 : tensor<2x3x4xf32> -> tensor<f32>
  return %a : tensor<f32>
}

// -----

// With per-head gates (B, S, H, N) the mean is over S and the H heads:
// dims [1, 2], divided by S H = 6.
// CHECK-LABEL: func.func @balance_loss_heads
// CHECK-SAME:    (%[[G:.*]]: tensor<2x3x2x4xf32>)
// CHECK-NEXT:    %[[S:.*]] = mix.reduce_sum %[[G]] dims [1, 2] : tensor<2x3x2x4xf32> -> tensor<2x1x1x4xf32>
// CHECK-NEXT:    %[[SIXTH:.*]] = arith.constant dense<0.166666672> : tensor<1x1x1x1xf32>
// CHECK-NEXT:    mix.mul %[[S]], %[[SIXTH]]
// CHECK:         arith.constant dense<2.000000e-02> : tensor<f32>
func.func @balance_loss_heads(%g: tensor<2x3x2x4xf32>) -> tensor<f32> {
  %a = mix.balance_loss %g alpha 1.000000e-02 : tensor<2x3x2x4xf32> -> tensor<f32>
  return %a : tensor<f32>
}
