// RUN: mix-opt %s --split-input-file --mix-decompose | FileCheck %s

// mix-decompose on ParaScale's and AltUp's stream ops
// (MixDecomposeStreams.cpp). Batches are stream-major: stream p's row b is row
// p * B + b. Here B = 2, S = 3, d = 4 (5 for the aggregation) and P = K = 3
// streams (2 for the aggregation), so that P and B differ in every type.

// replicate_streams: (B, ...) -> (1, B, ...) broadcast to (P, B, ...),
// flattened so that row p * B + b is x[b].
// CHECK-LABEL: func.func @replicate
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[X1:.*]] = mix.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[XB:.*]] = mix.broadcast %[[X1]] : tensor<1x2x3x4xf32> -> tensor<3x2x3x4xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[XB]] : tensor<3x2x3x4xf32> -> tensor<6x3x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @replicate(%x: tensor<2x3x4xf32>) -> tensor<6x3x4xf32> {
  %r = mix.replicate_streams %x streams 3 : tensor<2x3x4xf32> -> tensor<6x3x4xf32>
  return %r : tensor<6x3x4xf32>
}

// -----

// select_stream 1 of 3: rows [1 * B, 2 * B) = [2, 4).
// CHECK-LABEL: func.func @select
// CHECK-SAME:    (%[[X:.*]]: tensor<6x3x4xf32>)
// CHECK-NEXT:    %[[S:.*]] = mix.slice %[[X]] dim 0 offset 2 : tensor<6x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    return %[[S]]
func.func @select(%x: tensor<6x3x4xf32>) -> tensor<2x3x4xf32> {
  %a = mix.select_stream %x stream 1 of 3 : tensor<6x3x4xf32> -> tensor<2x3x4xf32>
  return %a : tensor<2x3x4xf32>
}

// -----

// mean_streams: viewed as (P, B, ...), summed over P (dimension 0, not
// the batch) and divided by P = 3.
// CHECK-LABEL: func.func @mean
// CHECK-SAME:    (%[[X:.*]]: tensor<6x3x4xf32>)
// CHECK-NEXT:    %[[X4:.*]] = mix.reshape %[[X]] : tensor<6x3x4xf32> -> tensor<3x2x3x4xf32>
// CHECK-NEXT:    %[[S:.*]] = mix.reduce_sum %[[X4]] dims [0] : tensor<3x2x3x4xf32> -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[S3:.*]] = mix.reshape %[[S]] : tensor<1x2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<0.333333343> : tensor<1x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = mix.mul %[[S3]], %[[C]]
// CHECK-NEXT:    return %[[M]]
func.func @mean(%x: tensor<6x3x4xf32>) -> tensor<2x3x4xf32> {
  %m = mix.mean_streams %x streams 3 : tensor<6x3x4xf32> -> tensor<2x3x4xf32>
  return %m : tensor<2x3x4xf32>
}

// -----

// aggregate_streams, P = 2, B = 2, d = 5, smoothing 0.1: the streams go
// (P, B, S, d) -> (B, S, P, d) and cat = (B, S, P d); h = silu(cat fc1^T +
// b1); w = softmax(h fc2^T + b2) over P, smoothed to 0.9 w + 0.1 / 2; the
// result sum_p w_p z^p reads the (B, S, P, d) streams, not cat.
// CHECK-LABEL: func.func @aggregate
// CHECK-SAME:    (%[[ZS:.*]]: tensor<4x3x5xf32>, %[[W1:.*]]: tensor<5x10xf32>, %[[B1:.*]]: tensor<5xf32>, %[[W2:.*]]: tensor<2x5xf32>, %[[B2:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[Z4:.*]] = mix.reshape %[[ZS]] : tensor<4x3x5xf32> -> tensor<2x2x3x5xf32>
// CHECK-NEXT:    %[[ZT:.*]] = mix.transpose %[[Z4]] [1, 2, 0, 3] : tensor<2x2x3x5xf32> -> tensor<2x3x2x5xf32>
// CHECK-NEXT:    %[[CAT:.*]] = mix.reshape %[[ZT]] : tensor<2x3x2x5xf32> -> tensor<2x3x10xf32>
// CHECK-NEXT:    %[[C2:.*]] = mix.reshape %[[CAT]] : tensor<2x3x10xf32> -> tensor<6x10xf32>
// CHECK-NEXT:    mix.matmul %[[C2]], %[[W1]] transpose_rhs : (tensor<6x10xf32>, tensor<5x10xf32>) -> tensor<6x5xf32>
// CHECK-NEXT:    mix.reshape %[[B1]]
// CHECK-NEXT:    mix.add
// CHECK-NEXT:    %[[H:.*]] = mix.reshape %{{.*}} : tensor<6x5xf32> -> tensor<2x3x5xf32>
// CHECK:         %[[SIG:.*]] = mix.div
// CHECK-NEXT:    %[[SILU:.*]] = mix.mul %[[H]], %[[SIG]]
// CHECK-NEXT:    %[[S2:.*]] = mix.reshape %[[SILU]] : tensor<2x3x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT:    mix.matmul %[[S2]], %[[W2]] transpose_rhs : (tensor<6x5xf32>, tensor<2x5xf32>) -> tensor<6x2xf32>
// CHECK:         mix.reduce_max %{{.*}} dims [2] : tensor<2x3x2xf32> -> tensor<2x3x1xf32>
// CHECK:         %[[W:.*]] = mix.div %{{.*}}, %{{.*}} : tensor<2x3x2xf32>, tensor<2x3x1xf32> -> tensor<2x3x2xf32>
// CHECK-NEXT:    %[[K:.*]] = arith.constant dense<0.899999976> : tensor<1x1x1xf32>
// CHECK-NEXT:    %[[WK:.*]] = mix.mul %[[W]], %[[K]]
// CHECK-NEXT:    %[[E:.*]] = arith.constant dense<5.000000e-02> : tensor<1x1x1xf32>
// CHECK-NEXT:    %[[WS:.*]] = mix.add %[[WK]], %[[E]]
// CHECK-NEXT:    %[[W4:.*]] = mix.reshape %[[WS]] : tensor<2x3x2xf32> -> tensor<2x3x2x1xf32>
// CHECK-NEXT:    %[[MZ:.*]] = mix.mul %[[ZT]], %[[W4]] : tensor<2x3x2x5xf32>, tensor<2x3x2x1xf32> -> tensor<2x3x2x5xf32>
// CHECK-NEXT:    %[[SUM:.*]] = mix.reduce_sum %[[MZ]] dims [2] : tensor<2x3x2x5xf32> -> tensor<2x3x1x5xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[SUM]] : tensor<2x3x1x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    return %[[R]]
func.func @aggregate(%zs: tensor<4x3x5xf32>, %w1: tensor<5x10xf32>, %b1: tensor<5xf32>, %w2: tensor<2x5xf32>, %b2: tensor<2xf32>) -> tensor<2x3x5xf32> {
  %z = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.000000e-01 : (tensor<4x3x5xf32>, tensor<5x10xf32>, tensor<5xf32>, tensor<2x5xf32>, tensor<2xf32>) -> tensor<2x3x5xf32>
  return %z : tensor<2x3x5xf32>
}

// -----

// altup_predict: xhat_i = sum_q predict[i, q] x_q, the K = 3 blocks as the
// rows of a (K, B S d) matrix multiplied by predict from the left
// (predict itself, not its transpose).
// CHECK-LABEL: func.func @predict
// CHECK-SAME:    (%[[X:.*]]: tensor<6x3x4xf32>, %[[P:.*]]: tensor<3x3xf32>)
// CHECK-NEXT:    %[[X2:.*]] = mix.reshape %[[X]] : tensor<6x3x4xf32> -> tensor<3x24xf32>
// CHECK-NEXT:    %[[Y:.*]] = mix.matmul %[[P]], %[[X2]] : (tensor<3x3xf32>, tensor<3x24xf32>) -> tensor<3x24xf32>
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[Y]] : tensor<3x24xf32> -> tensor<6x3x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @predict(%x: tensor<6x3x4xf32>, %p: tensor<3x3xf32>) -> tensor<6x3x4xf32> {
  %xh = mix.altup_predict %x, %p : (tensor<6x3x4xf32>, tensor<3x3xf32>) -> tensor<6x3x4xf32>
  return %xh : tensor<6x3x4xf32>
}

// -----

// altup_correct with active block j = 1: y_i = xhat_i + correct_i
// (computed - xhat_1), xhat_1 being rows [B, 2 B) = [2, 4); the K
// coefficients broadcast over (K, B, S, d).
// CHECK-LABEL: func.func @correct
// CHECK-SAME:    (%[[XH:.*]]: tensor<6x3x4xf32>, %[[XT:.*]]: tensor<2x3x4xf32>, %[[C:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[XJ:.*]] = mix.slice %[[XH]] dim 0 offset 2 : tensor<6x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[D:.*]] = mix.sub %[[XT]], %[[XJ]]
// CHECK-NEXT:    %[[XH4:.*]] = mix.reshape %[[XH]] : tensor<6x3x4xf32> -> tensor<3x2x3x4xf32>
// CHECK-NEXT:    %[[C4:.*]] = mix.reshape %[[C]] : tensor<3xf32> -> tensor<3x1x1x1xf32>
// CHECK-NEXT:    %[[D4:.*]] = mix.reshape %[[D]] : tensor<2x3x4xf32> -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[CD:.*]] = mix.mul %[[C4]], %[[D4]] : tensor<3x1x1x1xf32>, tensor<1x2x3x4xf32> -> tensor<3x2x3x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = mix.add %[[XH4]], %[[CD]]
// CHECK-NEXT:    %[[R:.*]] = mix.reshape %[[Y]] : tensor<3x2x3x4xf32> -> tensor<6x3x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @correct(%xh: tensor<6x3x4xf32>, %xt: tensor<2x3x4xf32>, %c: tensor<3xf32>) -> tensor<6x3x4xf32> {
  %y = mix.altup_correct %xh, %xt, %c active 1 : (tensor<6x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<6x3x4xf32>
  return %y : tensor<6x3x4xf32>
}

// -----

// Must not fire: the collectives of stream parallelism are primitives
// (autodiff and the lowering handle them) and stay as they are.
// CHECK-LABEL: func.func @collectives
// CHECK-NEXT:    %[[G:.*]] = mix.grad_all_reduce %arg0
// CHECK-NEXT:    %[[S:.*]] = mix.rank_slice %[[G]] dim 1 shards 2
// CHECK-NEXT:    %[[A:.*]] = mix.all_reduce %[[S]]
// CHECK-NEXT:    return %[[A]]
func.func @collectives(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %g = mix.grad_all_reduce %x : tensor<2x4xf32>
  %s = mix.rank_slice %g dim 1 shards 2 : tensor<2x4xf32> -> tensor<2x2xf32>
  %a = mix.all_reduce %s : tensor<2x2xf32>
  return %a : tensor<2x2xf32>
}
