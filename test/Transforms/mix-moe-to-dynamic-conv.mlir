// RUN: mix-opt %s -split-input-file -mix-moe-to-dynamic-conv -verify-diagnostics | FileCheck %s
// RUN: mix-opt %s -split-input-file -mix-prove-dynamic-conv -mix-moe-to-dynamic-conv 2>/dev/null | FileCheck %s --check-prefix=PIPE

// The rewrite trusts only the recorded verdict: proved mixtures are
// rewritten, refused and unanalysed ones are left alone.

// CHECK-LABEL: func @proved_stacked
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[G:.*]]: tensor<2x8x4xf32>, %[[K:.*]]: tensor<4x32x16xf32>, %[[B:.*]]: tensor<4x32xf32>)
// CHECK: %[[U:.*]] = mix.dynamic_conv %[[X]], %[[G]] kernels %[[K]] bias %[[B]] :
// CHECK-NOT: mix.mixture
// CHECK: return %[[U]]
func.func @proved_stacked(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x32xf32>) -> tensor<2x8x32xf32> {
  %u = mix.mixture %x, %g kernels %k bias %b {mix.proof = {status = "proved"}} : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// CHECK-LABEL: func @unproved_stacked
// CHECK: mix.mixture
// CHECK-NOT: mix.dynamic_conv
func.func @unproved_stacked(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  %u = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// CHECK-LABEL: func @refused_stacked
// CHECK: mix.mixture
// CHECK-NOT: mix.dynamic_conv
func.func @refused_stacked(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %c: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %u = mix.mixture %x, %g kernels %k shared_bias %c {mix.proof = {status = "refused", reason = "sigmoid"}} : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// A region of one linear layer becomes stacked kernels and bias.

// CHECK-LABEL: func @proved_region
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[G:.*]]: tensor<4x2xf32>, %[[K:.*]]: tensor<2x8x16xf32>, %[[B:.*]]: tensor<2x8xf32>)
// CHECK: mix.dynamic_conv %[[X]], %[[G]] kernels %[[K]] bias %[[B]] :
func.func @proved_region(%x: tensor<4x16xf32>, %g: tensor<4x2xf32>, %k: tensor<2x8x16xf32>, %b: tensor<2x8xf32>) -> tensor<4x8xf32> {
  %u = mix.mixture %x, %g experts(%k, %b) {mix.proof = {status = "proved"}} : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>, tensor<2x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %kk: tensor<8x16xf32>, %bk: tensor<8xf32>):
    %y = mix.linear %xi, %kk, %bk : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    mix.yield %y : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}

// -----

// A bias captured from above becomes the shared bias.

// CHECK-LABEL: func @proved_region_shared_bias
// CHECK-SAME: %[[C:[^:]*]]: tensor<8xf32>)
// CHECK: %[[G:.*]] = mix.gate
// CHECK: mix.dynamic_conv %{{.*}}, %[[G]] kernels %{{.*}} shared_bias %[[C]] :
func.func @proved_region_shared_bias(%x: tensor<4x16xf32>, %w: tensor<2x16xf32>, %wb: tensor<2xf32>, %k: tensor<2x8x16xf32>, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<4x16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %u = mix.mixture %x, %g experts(%k) {mix.proof = {status = "proved"}} : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %kk: tensor<8x16xf32>):
    %y = mix.linear %xi, %kk, %c : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    mix.yield %y : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}

// -----

// The kernels of a two-layer linear expert are computed from its weights:
// K_k = B_k A_k, one product per expert, stacked.

// CHECK-LABEL: func @proved_region_two_linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[G:.*]]: tensor<4x2xf32>, %[[K1:.*]]: tensor<2x8x16xf32>, %[[K2:.*]]: tensor<2x6x8xf32>)
// CHECK-DAG: %[[A0:.*]] = mix.slice %[[K1]] dim 0 offset 0
// CHECK-DAG: %[[B0:.*]] = mix.slice %[[K2]] dim 0 offset 0
// CHECK: mix.matmul %{{.*}}, %{{.*}} : (tensor<6x8xf32>, tensor<8x16xf32>) -> tensor<6x16xf32>
// CHECK: mix.matmul %{{.*}}, %{{.*}} : (tensor<6x8xf32>, tensor<8x16xf32>) -> tensor<6x16xf32>
// CHECK: %[[KS:.*]] = mix.concat %{{.*}}, %{{.*}} dim 0 : (tensor<1x6x16xf32>, tensor<1x6x16xf32>) -> tensor<2x6x16xf32>
// CHECK: mix.dynamic_conv %[[X]], %[[G]] kernels %[[KS]] :
// CHECK-NOT: mix.mixture
func.func @proved_region_two_linear(%x: tensor<4x16xf32>, %g: tensor<4x2xf32>, %k1: tensor<2x8x16xf32>, %k2: tensor<2x6x8xf32>) -> tensor<4x6xf32> {
  %u = mix.mixture %x, %g experts(%k1, %k2) {mix.proof = {status = "proved"}} : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>, tensor<2x6x8xf32>) -> tensor<4x6xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %a: tensor<8x16xf32>, %b: tensor<6x8xf32>):
    %h = mix.linear %xi, %a : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    %y = mix.linear %h, %b : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
    mix.yield %y : tensor<4x6xf32>
  }
  return %u : tensor<4x6xf32>
}

// -----

// A shared bias behind a sigmoid gate leaves the mixture as (sum_k g_k) c:
// the convolution's per-expert bias, c for every expert (Z3 confirms it).

// CHECK-LABEL: func @shared_bias_sigmoid
// CHECK-SAME: %[[C:[^:]*]]: tensor<2xf32>)
// CHECK: %[[C1:.*]] = mix.reshape %[[C]] : tensor<2xf32> -> tensor<1x2xf32>
// CHECK: %[[CN:.*]] = mix.broadcast %[[C1]] : tensor<1x2xf32> -> tensor<2x2xf32>
// CHECK: mix.dynamic_conv %{{.*}}, %{{.*}} kernels %{{.*}} bias %[[CN]] :
// CHECK-NOT: shared_bias
func.func @shared_bias_sigmoid(%x: tensor<1x2xf32>, %w: tensor<2x2xf32>, %wb: tensor<2xf32>, %k: tensor<2x2x2xf32>, %c: tensor<2xf32>) -> tensor<1x2xf32> {
  %g = mix.gate simple sigmoid %x, %w, %wb : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %u = mix.mixture %x, %g kernels %k shared_bias %c {mix.proof = {status = "proved"}} : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %u : tensor<1x2xf32>
}

// -----

// The whole pipeline: prove, then rewrite exactly what was proved.

// PIPE-LABEL: func @pipeline
// PIPE: mix.dynamic_conv
// PIPE: mix.mixture {{.*}}status = "refused"
// PIPE: mix.relu
func.func @pipeline(%x: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %wb: tensor<4xf32>, %k: tensor<4x32x16xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  %u = mix.mixture %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32>
  %r = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %kk: tensor<32x16xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
    %z = mix.relu %y : tensor<2x8x32xf32>
    mix.yield %z : tensor<2x8x32xf32>
  }
  return %u, %r : tensor<2x8x32xf32>, tensor<2x8x32xf32>
}
