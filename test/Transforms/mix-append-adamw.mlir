// RUN: mix-opt %s --split-input-file --mix-append-adamw | FileCheck %s
// RUN: mix-opt %s --split-input-file --mix-append-adamw='beta1=0.75 beta2=0.875 epsilon=0.0625 weight-decay=0.375 max-grad-norm=4.0' | FileCheck %s --check-prefix=OPTS

// mix-append-adamw appends @adamw(params..., grads..., m..., v..., hyper)
// -> (params'..., m'..., v'..., grad_norm) for @forward's f32 arguments,
// hyper = [lr, 1 - beta1^t, 1 - beta2^t]. The update is PyTorch's
// clip_grad_norm_ then AdamW (docs/models.md §7), with the defaults beta1 =
// 0.9, beta2 = 0.95, eps = 1e-8, weight decay 0.1, max norm 1:
//   c = min(1, 1 / (|g| + 1e-6)), g' = c g
//   p1 = p - lr 0.1 p                    (rank >= 2 only)
//   m' = 0.9 m + 0.1 g',  v' = 0.95 v + 0.05 g'^2
//   p' = p1 - lr (m' / bc1) / (sqrt(v' / bc2) + 1e-8)
// The errors are in mix-append-adamw-invalid.mlir.

// Parameters w (3, 2) and b (3); the i32 tokens are not a parameter. So
// n = 2 and the arguments are w, b, dw, db, mw, mb, vw, vb, hyper; each new
// tensor says which argument it replaces (mix.updates): p' -> 0, 1;
// m' -> 4, 5; v' -> 6, 7. The norm, last, is the one *before* clipping.
// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @adamw
// CHECK-SAME:    (%[[W:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<3xf32>, %[[DW:.*]]: tensor<3x2xf32>, %[[DB:.*]]: tensor<3xf32>, %[[MW:.*]]: tensor<3x2xf32>, %[[MB:.*]]: tensor<3xf32>, %[[VW:.*]]: tensor<3x2xf32>, %[[VB:.*]]: tensor<3xf32>, %[[H:.*]]: tensor<3xf32>)
// CHECK-SAME:    -> (tensor<3x2xf32> {mix.updates = 0 : i64}, tensor<3xf32> {mix.updates = 1 : i64}, tensor<3x2xf32> {mix.updates = 4 : i64}, tensor<3xf32> {mix.updates = 5 : i64}, tensor<3x2xf32> {mix.updates = 6 : i64}, tensor<3xf32> {mix.updates = 7 : i64}, tensor<f32>)
// CHECK-NEXT:    %[[LR:.*]] = mix.slice %[[H]] dim 0 offset 0 : tensor<3xf32> -> tensor<1xf32>
// CHECK-NEXT:    %[[BC1:.*]] = mix.slice %[[H]] dim 0 offset 1 : tensor<3xf32> -> tensor<1xf32>
// CHECK-NEXT:    %[[BC2:.*]] = mix.slice %[[H]] dim 0 offset 2 : tensor<3xf32> -> tensor<1xf32>
// The global norm: the squares of *every* gradient summed (dw and db).
// CHECK-NEXT:    %[[DW2:.*]] = mix.mul %[[DW]], %[[DW]]
// CHECK-NEXT:    %[[SW:.*]] = mix.reduce_sum %[[DW2]] dims [0, 1]
// CHECK-NEXT:    %[[SW0:.*]] = mix.reshape %[[SW]] : tensor<1x1xf32> -> tensor<f32>
// CHECK-NEXT:    %[[DB2:.*]] = mix.mul %[[DB]], %[[DB]]
// CHECK-NEXT:    %[[SB:.*]] = mix.reduce_sum %[[DB2]] dims [0]
// CHECK-NEXT:    %[[SB0:.*]] = mix.reshape %[[SB]] : tensor<1xf32> -> tensor<f32>
// CHECK-NEXT:    %[[SS:.*]] = mix.add %[[SW0]], %[[SB0]]
// CHECK-NEXT:    %[[NORM:.*]] = mix.sqrt %[[SS]] : tensor<f32>
// The clip coefficient min(1, max / (norm + 1e-6)) = -max(-1, -ratio).
// CHECK-NEXT:    %[[MAX:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[E6:.*]] = arith.constant dense<9.99999997E-7> : tensor<f32>
// CHECK-NEXT:    %[[NE:.*]] = mix.add %[[NORM]], %[[E6]]
// CHECK-NEXT:    %[[RATIO:.*]] = mix.div %[[MAX]], %[[NE]]
// CHECK-NEXT:    %[[M1:.*]] = arith.constant dense<-1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[NR:.*]] = mix.neg %[[RATIO]]
// CHECK-NEXT:    %[[MX:.*]] = mix.max %[[M1]], %[[NR]]
// CHECK-NEXT:    %[[CLIP:.*]] = mix.neg %[[MX]]
// w (rank 2): clipped gradient, decoupled weight decay p - p (lr 0.1).
// CHECK-NEXT:    %[[CW:.*]] = mix.reshape %[[CLIP]] : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[GW:.*]] = mix.mul %[[DW]], %[[CW]]
// CHECK-NEXT:    %[[LRW:.*]] = mix.reshape %[[LR]] : tensor<1xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[WD:.*]] = arith.constant dense<1.000000e-01> : tensor<1x1xf32>
// CHECK-NEXT:    %[[LWD:.*]] = mix.mul %[[LRW]], %[[WD]]
// CHECK-NEXT:    %[[PD:.*]] = mix.mul %[[W]], %[[LWD]]
// CHECK-NEXT:    %[[W1:.*]] = mix.sub %[[W]], %[[PD]]
// The moments, from the clipped gradient.
// CHECK-NEXT:    %[[B1:.*]] = arith.constant dense<0.899999976> : tensor<1x1xf32>
// CHECK-NEXT:    %[[MWB:.*]] = mix.mul %[[MW]], %[[B1]]
// CHECK-NEXT:    %[[OB1:.*]] = arith.constant dense<1.000000e-01> : tensor<1x1xf32>
// CHECK-NEXT:    %[[GWB:.*]] = mix.mul %[[GW]], %[[OB1]]
// CHECK-NEXT:    %[[MW2:.*]] = mix.add %[[MWB]], %[[GWB]]
// CHECK-NEXT:    %[[B2:.*]] = arith.constant dense<0.949999988> : tensor<1x1xf32>
// CHECK-NEXT:    %[[VWB:.*]] = mix.mul %[[VW]], %[[B2]]
// CHECK-NEXT:    %[[GG:.*]] = mix.mul %[[GW]], %[[GW]]
// CHECK-NEXT:    %[[OB2:.*]] = arith.constant dense<5.000000e-02> : tensor<1x1xf32>
// CHECK-NEXT:    %[[GGB:.*]] = mix.mul %[[GG]], %[[OB2]]
// CHECK-NEXT:    %[[VW2:.*]] = mix.add %[[VWB]], %[[GGB]]
// Bias correction: m' / (1 - beta1^t), v' / (1 - beta2^t), from hyper.
// CHECK-NEXT:    %[[BC1W:.*]] = mix.reshape %[[BC1]] : tensor<1xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[MHAT:.*]] = mix.div %[[MW2]], %[[BC1W]]
// CHECK-NEXT:    %[[BC2W:.*]] = mix.reshape %[[BC2]] : tensor<1xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[VHAT:.*]] = mix.div %[[VW2]], %[[BC2W]]
// CHECK-NEXT:    %[[SQ:.*]] = mix.sqrt %[[VHAT]]
// CHECK-NEXT:    %[[EPS:.*]] = arith.constant dense<9.99999993E-9> : tensor<1x1xf32>
// CHECK-NEXT:    %[[DEN:.*]] = mix.add %[[SQ]], %[[EPS]]
// CHECK-NEXT:    %[[STEP:.*]] = mix.div %[[MHAT]], %[[DEN]]
// CHECK-NEXT:    %[[LSTEP:.*]] = mix.mul %[[LRW]], %[[STEP]]
// CHECK-NEXT:    %[[NEWW:.*]] = mix.sub %[[W1]], %[[LSTEP]]
// b (rank 1): the same, without weight decay: the step is taken from b
// itself and lr is not scaled by 0.1 anywhere.
// CHECK-NEXT:    %[[CB:.*]] = mix.reshape %[[CLIP]] : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT:    %[[GB:.*]] = mix.mul %[[DB]], %[[CB]]
// CHECK-NEXT:    arith.constant dense<0.899999976> : tensor<1xf32>
// CHECK-NEXT:    mix.mul %[[MB]]
// CHECK:         %[[MB2:.*]] = mix.add
// CHECK:         mix.mul %[[VB]]
// CHECK:         %[[VB2:.*]] = mix.add
// CHECK-NEXT:    %[[MHB:.*]] = mix.div %[[MB2]], %[[BC1]]
// CHECK-NEXT:    %[[VHB:.*]] = mix.div %[[VB2]], %[[BC2]]
// CHECK:         %[[STB:.*]] = mix.div %[[MHB]], %{{.*}}
// CHECK-NEXT:    %[[LSTB:.*]] = mix.mul %[[LR]], %[[STB]]
// CHECK-NEXT:    %[[NEWB:.*]] = mix.sub %[[B]], %[[LSTB]]
// CHECK-NEXT:    return %[[NEWW]], %[[NEWB]], %[[MW2]], %[[MB2]], %[[VW2]], %[[VB2]], %[[NORM]]

// The options reach the constants: 1 - beta1 = 0.25, 1 - beta2 = 0.125,
// max norm 4, weight decay 0.375, epsilon 0.0625.
// The hyperparameters are recorded on @adamw, for the manifest.
// OPTS-LABEL: func.func @adamw
// OPTS-SAME:    attributes {mix.adamw = {beta1 = 7.500000e-01 : f64, beta2 = 8.750000e-01 : f64, epsilon = 6.250000e-02 : f64, max_grad_norm = 4.000000e+00 : f64, weight_decay = 3.750000e-01 : f64}}
// OPTS:         arith.constant dense<4.000000e+00> : tensor<f32>
// OPTS:         arith.constant dense<3.750000e-01> : tensor<1x1xf32>
// OPTS:         arith.constant dense<7.500000e-01> : tensor<1x1xf32>
// OPTS:         arith.constant dense<2.500000e-01> : tensor<1x1xf32>
// OPTS:         arith.constant dense<8.750000e-01> : tensor<1x1xf32>
// OPTS:         arith.constant dense<1.250000e-01> : tensor<1x1xf32>
// OPTS:         arith.constant dense<6.250000e-02> : tensor<1x1xf32>
func.func @forward(%w: tensor<3x2xf32>, %tok: tensor<4xi32>, %b: tensor<3xf32>) -> tensor<f32> {
  %s = mix.reduce_sum %b dims [0] : tensor<3xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A parameter sharded over the stream ranks (mix.stream_shards) holds
// only this rank's part: the squares of its gradient are summed over the
// ranks (all_reduce) before they join the replicated parameters' squares,
// which are not (they are equal on every rank).
// CHECK-LABEL: func.func @adamw
// CHECK-SAME:    (%[[K:[a-z0-9_]+]]: tensor<2x4xf32>, %[[B:[a-z0-9_]+]]: tensor<4xf32>, %[[DK:[a-z0-9_]+]]: tensor<2x4xf32>, %[[DB:[a-z0-9_]+]]: tensor<4xf32>,
// CHECK:         mix.mul %[[DK]], %[[DK]]
// CHECK-NEXT:    mix.reduce_sum
// CHECK-NEXT:    %[[SK:.*]] = mix.reshape %{{.*}} : tensor<1x1xf32> -> tensor<f32>
// CHECK-NEXT:    mix.mul %[[DB]], %[[DB]]
// CHECK-NEXT:    mix.reduce_sum
// CHECK-NEXT:    %[[SB:.*]] = mix.reshape %{{.*}} : tensor<1xf32> -> tensor<f32>
// CHECK-NEXT:    %[[RK:.*]] = mix.all_reduce %[[SK]] : tensor<f32>
// CHECK-NEXT:    %[[SS:.*]] = mix.add %[[SB]], %[[RK]]
// CHECK-NEXT:    mix.sqrt %[[SS]]
// CHECK-NOT:     mix.all_reduce
// CHECK:         return
func.func @forward(%k: tensor<2x4xf32> {mix.stream_shards = 2 : i64}, %b: tensor<4xf32>) -> tensor<f32> {
  %s = mix.reduce_sum %b dims [0] : tensor<4xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Without sharded parameters there is no collective at all, and a rank-3
// parameter is decayed like a matrix while a scalar (rank 0) is not: one
// weight-decay constant (0.1 lr) for the one tensor of rank >= 2.
// CHECK-LABEL: func.func @adamw
// CHECK-SAME:    (%[[T:[a-z0-9_]+]]: tensor<2x2x2xf32>, %[[S:[a-z0-9_]+]]: tensor<f32>,
// CHECK-NOT:     mix.all_reduce
// CHECK:         %[[LWD:.*]] = mix.mul %{{.*}}, %{{.*}} : tensor<1x1x1xf32>, tensor<1x1x1xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %[[PD:.*]] = mix.mul %[[T]], %[[LWD]]
// CHECK-NEXT:    mix.sub %[[T]], %[[PD]]
// CHECK-NOT:     mix.mul %[[S]],
// CHECK:         mix.sub %[[S]], %{{.*}} : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    return
func.func @forward(%t: tensor<2x2x2xf32>, %s: tensor<f32>) -> tensor<f32> {
  return %s : tensor<f32>
}
