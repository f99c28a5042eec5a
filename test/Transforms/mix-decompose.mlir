// RUN: mix-opt %s --split-input-file --mix-decompose | FileCheck %s

// mix-decompose on the GPT-2 backbone's model-level ops (MixDecomposeNN.cpp):
// each becomes the primitive ops of its definition (docs/dialect.md, the
// op's description in MixOps.td), wired as the formula says. The gated
// mixing ops are in mix-decompose-mixing.mlir, the stream ops in
// mix-decompose-streams.mlir.

// linear: x W^T + b over the flattened tokens: (6, 4) x (5, 4)^T, the
// bias as a (1, 5) row, and the tokens' shape restored.
// CHECK-LABEL: func.func @linear
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>, %[[W:.*]]: tensor<5x4xf32>, %[[B:.*]]: tensor<5xf32>)
// CHECK-NEXT:    %[[X2:.*]] = mix.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = mix.matmul %[[X2]], %[[W]] transpose_rhs : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK-NEXT:    %[[B2:.*]] = mix.reshape %[[B]] : tensor<5xf32> -> tensor<1x5xf32>
// CHECK-NEXT:    %[[YB:.*]] = mix.add %[[Y]], %[[B2]] : tensor<6x5xf32>, tensor<1x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[YB]] : tensor<6x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    return %[[R]]
func.func @linear(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %b: tensor<5xf32>) -> tensor<2x3x5xf32> {
  %y = mix.linear %x, %w, %b : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// linear without a bias: no add; a 2-d input needs no reshape.
// CHECK-LABEL: func.func @linear_no_bias
// CHECK-SAME:    (%[[X:.*]]: tensor<6x4xf32>, %[[W:.*]]: tensor<5x4xf32>)
// CHECK-NEXT:    %[[Y:.*]] = mix.matmul %[[X]], %[[W]] transpose_rhs : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK-NEXT:    return %[[Y]]
func.func @linear_no_bias(%x: tensor<6x4xf32>, %w: tensor<5x4xf32>) -> tensor<6x5xf32> {
  %y = mix.linear %x, %w : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
  return %y : tensor<6x5xf32>
}

// -----

// layer_norm over the last dimension (d = 4): mean = sum / 4, centred
// xc = x - mean, the biased variance sum(xc^2) / 4, (xc * rsqrt(var +
// eps)) * w + b with w and b as (1, 4) rows.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK:         %[[S:.*]] = mix.reduce_sum %[[X]] dims [1] : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[Q:.*]] = arith.constant dense<2.500000e-01> : tensor<1x1xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = mix.mul %[[S]], %[[Q]]
// CHECK-NEXT:    %[[XC:.*]] = mix.sub %[[X]], %[[MEAN]] : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[SQ:.*]] = mix.mul %[[XC]], %[[XC]]
// CHECK-NEXT:    %[[SS:.*]] = mix.reduce_sum %[[SQ]] dims [1] : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[Q2:.*]] = arith.constant dense<2.500000e-01> : tensor<1x1xf32>
// CHECK-NEXT:    %[[VAR:.*]] = mix.mul %[[SS]], %[[Q2]]
// CHECK-NEXT:    %[[EPS:.*]] = arith.constant dense<9.99999974E-6> : tensor<1x1xf32>
// CHECK-NEXT:    %[[VE:.*]] = mix.add %[[VAR]], %[[EPS]]
// CHECK-NEXT:    %[[INV:.*]] = mix.rsqrt %[[VE]] : tensor<2x1xf32>
// CHECK-NEXT:    %[[N:.*]] = mix.mul %[[XC]], %[[INV]] : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[W2:.*]] = mix.reshape %[[W]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[NW:.*]] = mix.mul %[[N]], %[[W2]]
// CHECK-NEXT:    %[[B2:.*]] = mix.reshape %[[B]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = mix.add %[[NW]], %[[B2]]
// CHECK-NEXT:    return %[[Y]]
func.func @layer_norm(%x: tensor<2x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// gelu, GPT-2's tanh form: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))).
// CHECK-LABEL: func.func @gelu
// CHECK-SAME:    (%[[U:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[U2:.*]] = mix.mul %[[U]], %[[U]]
// CHECK-NEXT:    %[[U3:.*]] = mix.mul %[[U2]], %[[U]]
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<4.471500e-02> : tensor<1x1xf32>
// CHECK-NEXT:    %[[CU3:.*]] = mix.mul %[[U3]], %[[C]]
// CHECK-NEXT:    %[[S:.*]] = mix.add %[[U]], %[[CU3]]
// CHECK-NEXT:    %[[K:.*]] = arith.constant dense<0.797884583> : tensor<1x1xf32>
// CHECK-NEXT:    %[[IN:.*]] = mix.mul %[[S]], %[[K]]
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %[[T:.*]] = mix.tanh %[[IN]]
// CHECK-NEXT:    %[[T1:.*]] = mix.add %[[ONE]], %[[T]]
// CHECK-NEXT:    %[[H:.*]] = arith.constant dense<5.000000e-01> : tensor<1x1xf32>
// CHECK-NEXT:    %[[HU:.*]] = mix.mul %[[U]], %[[H]]
// CHECK-NEXT:    %[[Y:.*]] = mix.mul %[[HU]], %[[T1]]
// CHECK-NEXT:    return %[[Y]]
func.func @gelu(%u: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = mix.gelu %u : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// relu = max(x, 0), with x on the left so that ties (x = 0) take the
// zero's (right-hand) side of max's adjoint.
// CHECK-LABEL: func.func @relu
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = mix.max %[[X]], %[[Z]] : tensor<2x3xf32>, tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    return %[[Y]]
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = mix.relu %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// sigmoid = 1 / (1 + exp(-x)).
// CHECK-LABEL: func.func @sigmoid
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %[[N:.*]] = mix.neg %[[X]]
// CHECK-NEXT:    %[[E:.*]] = mix.exp %[[N]]
// CHECK-NEXT:    %[[D:.*]] = mix.add %[[ONE]], %[[E]]
// CHECK-NEXT:    %[[Y:.*]] = mix.div %[[ONE]], %[[D]] : tensor<1x1xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    return %[[Y]]
func.func @sigmoid(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = mix.sigmoid %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// silu = x * sigmoid(x).
// CHECK-LABEL: func.func @silu
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[N:.*]] = mix.neg %[[X]]
// CHECK-NEXT:    %[[E:.*]] = mix.exp %[[N]]
// CHECK-NEXT:    %[[D:.*]] = mix.add %{{.*}}, %[[E]]
// CHECK-NEXT:    %[[S:.*]] = mix.div %{{.*}}, %[[D]]
// CHECK-NEXT:    %[[Y:.*]] = mix.mul %[[X]], %[[S]]
// CHECK-NEXT:    return %[[Y]]
func.func @silu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = mix.silu %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Causal attention, d = 4 in 2 heads of dh = 2: q, k, v are the column
// ranges [0, 4), [4, 8), [8, 12) of qkv, each split into heads (B, h, S,
// dh); scores q k^T / sqrt(2) plus the (S, S) causal mask; a max-shifted
// softmax over the keys with the max under stop_gradient; P v; heads
// merged back to (B, S, d).
// CHECK-LABEL: func.func @attention
// CHECK-SAME:    (%[[QKV:.*]]: tensor<1x3x12xf32>)
// CHECK-NEXT:    %[[Q0:.*]] = mix.slice %[[QKV]] dim 2 offset 0 : tensor<1x3x12xf32> -> tensor<1x3x4xf32>
// CHECK-NEXT:    %[[Q1:.*]] = mix.reshape %[[Q0]] : tensor<1x3x4xf32> -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    %[[Q:.*]] = mix.transpose %[[Q1]] [0, 2, 1, 3] : tensor<1x3x2x2xf32> -> tensor<1x2x3x2xf32>
// CHECK-NEXT:    %[[K0:.*]] = mix.slice %[[QKV]] dim 2 offset 4 : tensor<1x3x12xf32> -> tensor<1x3x4xf32>
// CHECK-NEXT:    %[[K1:.*]] = mix.reshape %[[K0]]
// CHECK-NEXT:    %[[K:.*]] = mix.transpose %[[K1]] [0, 2, 1, 3]
// CHECK-NEXT:    %[[V0:.*]] = mix.slice %[[QKV]] dim 2 offset 8 : tensor<1x3x12xf32> -> tensor<1x3x4xf32>
// CHECK-NEXT:    %[[V1:.*]] = mix.reshape %[[V0]]
// CHECK-NEXT:    %[[V:.*]] = mix.transpose %[[V1]] [0, 2, 1, 3]
// CHECK-NEXT:    %[[QK:.*]] = mix.matmul %[[Q]], %[[K]] transpose_rhs : (tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[SC:.*]] = arith.constant dense<0.707106769> : tensor<1x1x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = mix.mul %[[QK]], %[[SC]]
// CHECK-NEXT:    %[[M:.*]] = mix.causal_mask prefix 0 : tensor<3x3xf32>
// CHECK-NEXT:    %[[M4:.*]] = mix.reshape %[[M]] : tensor<3x3xf32> -> tensor<1x1x3x3xf32>
// CHECK-NEXT:    %[[SM:.*]] = mix.add %[[S]], %[[M4]]
// CHECK-NEXT:    %[[MX:.*]] = mix.reduce_max %[[SM]] dims [3] : tensor<1x2x3x3xf32> -> tensor<1x2x3x1xf32>
// CHECK-NEXT:    %[[MXS:.*]] = mix.stop_gradient %[[MX]]
// CHECK-NEXT:    %[[SH:.*]] = mix.sub %[[SM]], %[[MXS]]
// CHECK-NEXT:    %[[E:.*]] = mix.exp %[[SH]]
// CHECK-NEXT:    %[[Z:.*]] = mix.reduce_sum %[[E]] dims [3] : tensor<1x2x3x3xf32> -> tensor<1x2x3x1xf32>
// CHECK-NEXT:    %[[P:.*]] = mix.div %[[E]], %[[Z]]
// CHECK-NEXT:    %[[O:.*]] = mix.matmul %[[P]], %[[V]] : (tensor<1x2x3x3xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
// CHECK-NEXT:    %[[OT:.*]] = mix.transpose %[[O]] [0, 2, 1, 3] : tensor<1x2x3x2xf32> -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[OT]] : tensor<1x3x2x2xf32> -> tensor<1x3x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @attention(%qkv: tensor<1x3x12xf32>) -> tensor<1x3x4xf32> {
  %o = mix.attention %qkv heads 2 : (tensor<1x3x12xf32>) -> tensor<1x3x4xf32>
  return %o : tensor<1x3x4xf32>
}

// -----

// A decode step's attention, d = 4 in 2 heads, a cache of K = 6
// positions: the new k and v (heads of one position, (B, h, 1, dh)) are
// written into the caches at the position, the query attends to every
// cached position with those after it masked (the mask's row at the
// position, (1, K)), and the updated caches are the op's other results.
// CHECK-LABEL: func.func @cached_attention
// CHECK-SAME:    (%[[QKV:.*]]: tensor<1x1x12xf32>, %[[KC:.*]]: tensor<1x2x6x2xf32>, %[[VC:.*]]: tensor<1x2x6x2xf32>, %[[POS:.*]]: tensor<i32>)
// CHECK-NEXT:    mix.slice %[[QKV]] dim 2 offset 0
// CHECK-NEXT:    mix.reshape
// CHECK-NEXT:    %[[Q:.*]] = mix.transpose
// CHECK-NEXT:    mix.slice %[[QKV]] dim 2 offset 4
// CHECK-NEXT:    mix.reshape
// CHECK-NEXT:    %[[K:.*]] = mix.transpose {{.*}} -> tensor<1x2x1x2xf32>
// CHECK-NEXT:    %[[KC2:.*]] = mix.dynamic_update_slice %[[KC]], %[[K]][%[[POS]]] dim 2 : (tensor<1x2x6x2xf32>, tensor<1x2x1x2xf32>, tensor<i32>) -> tensor<1x2x6x2xf32>
// CHECK-NEXT:    mix.slice %[[QKV]] dim 2 offset 8
// CHECK-NEXT:    mix.reshape
// CHECK-NEXT:    %[[V:.*]] = mix.transpose
// CHECK-NEXT:    %[[VC2:.*]] = mix.dynamic_update_slice %[[VC]], %[[V]][%[[POS]]] dim 2
// CHECK-NEXT:    %[[QK:.*]] = mix.matmul %[[Q]], %[[KC2]] transpose_rhs : (tensor<1x2x1x2xf32>, tensor<1x2x6x2xf32>) -> tensor<1x2x1x6xf32>
// CHECK-NEXT:    arith.constant dense<0.707106769>
// CHECK-NEXT:    %[[S:.*]] = mix.mul %[[QK]]
// CHECK-NEXT:    %[[M:.*]] = mix.causal_mask prefix 0 at %[[POS]] : tensor<1x6xf32>
// CHECK-NEXT:    %[[M4:.*]] = mix.reshape %[[M]] : tensor<1x6xf32> -> tensor<1x1x1x6xf32>
// CHECK-NEXT:    mix.add %[[S]], %[[M4]]
// CHECK:         %[[P:.*]] = mix.div
// CHECK-NEXT:    %[[O:.*]] = mix.matmul %[[P]], %[[VC2]] : (tensor<1x2x1x6xf32>, tensor<1x2x6x2xf32>) -> tensor<1x2x1x2xf32>
// CHECK-NEXT:    mix.transpose %[[O]] [0, 2, 1, 3]
// CHECK-NEXT:    %[[R:.*]] = mix.reshape {{.*}} -> tensor<1x1x4xf32>
// CHECK-NEXT:    return %[[R]], %[[KC2]], %[[VC2]]
func.func @cached_attention(%qkv: tensor<1x1x12xf32>, %k: tensor<1x2x6x2xf32>, %v: tensor<1x2x6x2xf32>, %pos: tensor<i32>) -> (tensor<1x1x4xf32>, tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>) {
  %o:3 = mix.cached_attention %qkv, %k, %v at %pos heads 2 : (tensor<1x1x12xf32>, tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>, tensor<i32>) -> (tensor<1x1x4xf32>, tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>)
  return %o#0, %o#1, %o#2 : tensor<1x1x4xf32>, tensor<1x2x6x2xf32>, tensor<1x2x6x2xf32>
}

// -----

// With ParaScale prefixes, the cached keys and values go after each row's
// stream prefix, and the mask's row leaves the prefix's columns visible.
// CHECK-LABEL: func.func @cached_attention_prefix
// CHECK:         %[[KC2:.*]] = mix.dynamic_update_slice
// CHECK:         %[[VC2:.*]] = mix.dynamic_update_slice
// CHECK:         mix.concat %{{.*}}, %[[KC2]] dim 2 : (tensor<2x2x3x2xf32>, tensor<2x2x6x2xf32>) -> tensor<2x2x9x2xf32>
// CHECK:         mix.concat %{{.*}}, %[[VC2]] dim 2
// CHECK:         mix.causal_mask prefix 3 at %{{.*}} : tensor<1x9xf32>
// CHECK:         return %{{.*}}, %[[KC2]], %[[VC2]]
func.func @cached_attention_prefix(%qkv: tensor<2x1x12xf32>, %k: tensor<2x2x6x2xf32>, %v: tensor<2x2x6x2xf32>, %pos: tensor<i32>, %pk: tensor<2x2x3x2xf32>, %pv: tensor<2x2x3x2xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x6x2xf32>, tensor<2x2x6x2xf32>) {
  %o:3 = mix.cached_attention %qkv, %k, %v at %pos prefix(%pk, %pv) heads 2 : (tensor<2x1x12xf32>, tensor<2x2x6x2xf32>, tensor<2x2x6x2xf32>, tensor<i32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) -> (tensor<2x1x4xf32>, tensor<2x2x6x2xf32>, tensor<2x2x6x2xf32>)
  return %o#0, %o#1, %o#2 : tensor<2x1x4xf32>, tensor<2x2x6x2xf32>, tensor<2x2x6x2xf32>
}

// -----

// Attention with ParaScale prefixes: P = 2 streams of B0 = 1 row, 2
// prefix positions. Row p of the batch reads stream p's prefix keys and
// values (reshaped to (P, 1, h, Tp, dh) and broadcast over B0), which go in
// front of the real keys and values along the key axis; the mask has the
// prefix as its offset diagonal, (S, Tp + S).
// CHECK-LABEL: func.func @attention_prefix
// CHECK-SAME:    (%[[QKV:.*]]: tensor<2x3x12xf32>, %[[PK:.*]]: tensor<2x2x2x2xf32>, %[[PV:.*]]: tensor<2x2x2x2xf32>)
// CHECK-NEXT:    mix.slice %[[QKV]] dim 2 offset 0
// CHECK-NEXT:    mix.reshape
// CHECK-NEXT:    %[[Q:.*]] = mix.transpose
// CHECK-NEXT:    mix.slice %[[QKV]] dim 2 offset 4
// CHECK-NEXT:    mix.reshape
// CHECK-NEXT:    %[[K:.*]] = mix.transpose %{{.*}} [0, 2, 1, 3] : tensor<2x3x2x2xf32> -> tensor<2x2x3x2xf32>
// CHECK-NEXT:    mix.slice %[[QKV]] dim 2 offset 8
// CHECK-NEXT:    mix.reshape
// CHECK-NEXT:    %[[V:.*]] = mix.transpose %{{.*}} [0, 2, 1, 3] : tensor<2x3x2x2xf32> -> tensor<2x2x3x2xf32>
// CHECK-NEXT:    %[[PK1:.*]] = mix.reshape %[[PK]] : tensor<2x2x2x2xf32> -> tensor<2x1x2x2x2xf32>
// CHECK-NEXT:    %[[PK2:.*]] = mix.reshape %[[PK1]] : tensor<2x1x2x2x2xf32> -> tensor<2x2x2x2xf32>
// CHECK-NEXT:    %[[KC:.*]] = mix.concat %[[PK2]], %[[K]] dim 2 : (tensor<2x2x2x2xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x5x2xf32>
// CHECK-NEXT:    %[[PV1:.*]] = mix.reshape %[[PV]]
// CHECK-NEXT:    %[[PV2:.*]] = mix.reshape %[[PV1]]
// CHECK-NEXT:    %[[VC:.*]] = mix.concat %[[PV2]], %[[V]] dim 2 : (tensor<2x2x2x2xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x5x2xf32>
// CHECK-NEXT:    %[[QK:.*]] = mix.matmul %[[Q]], %[[KC]] transpose_rhs : (tensor<2x2x3x2xf32>, tensor<2x2x5x2xf32>) -> tensor<2x2x3x5xf32>
// CHECK:         mix.causal_mask prefix 2 : tensor<3x5xf32>
// CHECK:         %[[P:.*]] = mix.div
// CHECK-NEXT:    mix.matmul %[[P]], %[[VC]] : (tensor<2x2x3x5xf32>, tensor<2x2x5x2xf32>) -> tensor<2x2x3x2xf32>
func.func @attention_prefix(%qkv: tensor<2x3x12xf32>, %pk: tensor<2x2x2x2xf32>, %pv: tensor<2x2x2x2xf32>) -> tensor<2x3x4xf32> {
  %o = mix.attention %qkv prefix(%pk, %pv) heads 2 : (tensor<2x3x12xf32>, tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>) -> tensor<2x3x4xf32>
  return %o : tensor<2x3x4xf32>
}

// -----

// The prefixes broadcast over B0 = 2 rows a stream: (P, 1, ...) to
// (P, B0, ...), then flattened to the P * B0 stream-major rows.
// CHECK-LABEL: func.func @attention_prefix_rows
// CHECK-SAME:    (%[[QKV:.*]]: tensor<4x3x12xf32>, %[[PK:.*]]: tensor<2x2x2x2xf32>, %[[PV:.*]]: tensor<2x2x2x2xf32>)
// CHECK:         %[[PK1:.*]] = mix.reshape %[[PK]] : tensor<2x2x2x2xf32> -> tensor<2x1x2x2x2xf32>
// CHECK-NEXT:    %[[PKB:.*]] = mix.broadcast %[[PK1]] : tensor<2x1x2x2x2xf32> -> tensor<2x2x2x2x2xf32>
// CHECK-NEXT:    %[[PK2:.*]] = mix.reshape %[[PKB]] : tensor<2x2x2x2x2xf32> -> tensor<4x2x2x2xf32>
// CHECK-NEXT:    mix.concat %[[PK2]], %{{.*}} dim 2 : (tensor<4x2x2x2xf32>, tensor<4x2x3x2xf32>) -> tensor<4x2x5x2xf32>
func.func @attention_prefix_rows(%qkv: tensor<4x3x12xf32>, %pk: tensor<2x2x2x2xf32>, %pv: tensor<2x2x2x2xf32>) -> tensor<4x3x4xf32> {
  %o = mix.attention %qkv prefix(%pk, %pv) heads 2 : (tensor<4x3x12xf32>, tensor<2x2x2x2xf32>, tensor<2x2x2x2xf32>) -> tensor<4x3x4xf32>
  return %o : tensor<4x3x4xf32>
}

// -----

// cross_entropy: mean over the (2, 3) tokens of logsumexp - the target's
// logit; logsumexp max-shifted, the max under stop_gradient and added
// back; the mean a sum over everything times 1/6.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME:    (%[[L:.*]]: tensor<2x3x5xf32>, %[[T:.*]]: tensor<2x3xi32>)
// CHECK-NEXT:    %[[MX:.*]] = mix.reduce_max %[[L]] dims [2] : tensor<2x3x5xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[M:.*]] = mix.stop_gradient %[[MX]]
// CHECK-NEXT:    %[[SH:.*]] = mix.sub %[[L]], %[[M]]
// CHECK-NEXT:    %[[E:.*]] = mix.exp %[[SH]]
// CHECK-NEXT:    %[[S:.*]] = mix.reduce_sum %[[E]] dims [2] : tensor<2x3x5xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[LG:.*]] = mix.log %[[S]]
// CHECK-NEXT:    %[[LSE:.*]] = mix.add %[[LG]], %[[M]]
// CHECK-NEXT:    %[[PK:.*]] = mix.take_along %[[L]], %[[T]] : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[D:.*]] = mix.sub %[[LSE]], %[[PK]]
// CHECK-NEXT:    %[[SUM:.*]] = mix.reduce_sum %[[D]] dims [0, 1, 2] : tensor<2x3x1xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %[[SC:.*]] = mix.reshape %[[SUM]] : tensor<1x1x1xf32> -> tensor<f32>
// CHECK-NEXT:    %[[N:.*]] = arith.constant dense<0.166666672> : tensor<f32>
// CHECK-NEXT:    %[[CE:.*]] = mix.mul %[[SC]], %[[N]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    return %[[CE]]
func.func @cross_entropy(%logits: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  %ce = mix.cross_entropy %logits, %t : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %ce : tensor<f32>
}

// -----

// prefix_mean: the running sum along the sequence divided by the number of
// positions so far, 1, 2, 3 (the reciprocals as a (1, S, 1) constant).
// CHECK-LABEL: func.func @prefix_mean
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[N:.*]] = arith.constant dense<{{\[\[}}[1.000000e+00], [5.000000e-01], [0.333333343]]]> : tensor<1x3x1xf32>
// CHECK-NEXT:    %[[C:.*]] = mix.cumsum %[[X]] dim 1 : tensor<2x3x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = mix.mul %[[C]], %[[N]] : tensor<2x3x4xf32>, tensor<1x3x1xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    return %[[Y]]
func.func @prefix_mean(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %y = mix.prefix_mean %x : tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// embedding: wte's rows by token, plus the first S = 3 rows of wpe as a
// (1, S, d) term shared by the batch.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME:    (%[[T:.*]]: tensor<2x3xi32>, %[[WTE:.*]]: tensor<10x4xf32>, %[[WPE:.*]]: tensor<8x4xf32>)
// CHECK-NEXT:    %[[X:.*]] = mix.gather %[[WTE]], %[[T]] : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[P:.*]] = mix.slice %[[WPE]] dim 0 offset 0 : tensor<8x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %[[P3:.*]] = mix.reshape %[[P]] : tensor<3x4xf32> -> tensor<1x3x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = mix.add %[[X]], %[[P3]] : tensor<2x3x4xf32>, tensor<1x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    return %[[Y]]
func.func @embedding(%t: tensor<2x3xi32>, %wte: tensor<10x4xf32>, %wpe: tensor<8x4xf32>) -> tensor<2x3x4xf32> {
  %x = mix.embedding %t, %wte, %wpe : (tensor<2x3xi32>, tensor<10x4xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
  return %x : tensor<2x3x4xf32>
}

// -----

// The tensor plumbing the frontend emits: an extract_slice of one
// dimension becomes mix.slice, a whole-tensor one goes away, and
// expand/collapse_shape become mix.reshape.
// CHECK-LABEL: func.func @plumbing
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = mix.slice %[[X]] dim 1 offset 2 : tensor<2x8xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[C:.*]] = mix.reshape %[[S]] : tensor<2x4xf32> -> tensor<8xf32>
// CHECK-NEXT:    %[[E:.*]] = mix.reshape %[[C]] : tensor<8xf32> -> tensor<4x2xf32>
// CHECK-NEXT:    return %[[E]], %[[X]]
// CHECK-NOT:     tensor.
func.func @plumbing(%x: tensor<2x8xf32>) -> (tensor<4x2xf32>, tensor<2x8xf32>) {
  %s = tensor.extract_slice %x[0, 2] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
  %c = tensor.collapse_shape %s [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %e = tensor.expand_shape %c [[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
  %w = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : tensor<2x8xf32> to tensor<2x8xf32>
  return %e, %w : tensor<4x2xf32>, tensor<2x8xf32>
}

// -----

// Must not fire: primitive ops and constants are already the target form,
// and an extract_slice that no one-dimension mix.slice expresses (two
// dimensions cut, or a stride) is left as it is.
// CHECK-LABEL: func.func @not_model_level
// CHECK-NEXT:    %[[C:.*]] = arith.constant
// CHECK-NEXT:    %[[E:.*]] = mix.exp %arg0 : tensor<4x8xf32>
// CHECK-NEXT:    %[[M:.*]] = mix.matmul %[[E]], %arg0 transpose_rhs
// CHECK-NEXT:    %[[A:.*]] = mix.add %[[M]], %[[C]]
// CHECK-NEXT:    %[[T:.*]] = tensor.extract_slice %arg0[1, 2] [2, 4] [1, 1]
// CHECK-NEXT:    %[[U:.*]] = tensor.extract_slice %arg0[0, 0] [4, 4] [1, 2]
// CHECK-NEXT:    return %[[A]], %[[T]], %[[U]]
func.func @not_model_level(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>) {
  %c = arith.constant dense<1.0> : tensor<4x4xf32>
  %e = mix.exp %x : tensor<4x8xf32>
  %m = mix.matmul %e, %x transpose_rhs : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %a = mix.add %m, %c : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %t = tensor.extract_slice %x[1, 2] [2, 4] [1, 1] : tensor<4x8xf32> to tensor<2x4xf32>
  %u = tensor.extract_slice %x[0, 0] [4, 4] [1, 2] : tensor<4x8xf32> to tensor<4x4xf32>
  return %a, %t, %u : tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>
}
