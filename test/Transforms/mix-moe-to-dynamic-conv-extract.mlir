// RUN: mix-opt %s -split-input-file -mix-prove-dynamic-conv -mix-moe-to-dynamic-conv 2>/dev/null | FileCheck %s
// RUN: mix-opt %s -split-input-file -mix-prove-dynamic-conv -mix-moe-to-dynamic-conv 2>&1 >/dev/null | FileCheck %s --check-prefix=DIAG

// Every region the prover accepts is rewritten: its kernels (and biases)
// are computed from the expert's weights by IR emitted before the
// convolution, and Z3 confirms each rewrite. None of these is left as a
// mixture, and none makes the pass fail. (The values of both forms are
// compared on data by MixUnitTests' RewriteNumerics.)
// DIAG: remark: proved
// DIAG-NOT: error
// DIAG-NOT: not rewritten

// 2 (x W_k^T): the scale goes into the kernels.
// CHECK-LABEL: func @scaled
// CHECK: %[[K:.*]] = mix.concat {{.*}} -> tensor<2x5x4xf32>
// CHECK: mix.dynamic_conv %{{.*}}, %{{.*}} kernels %[[K]] :
// CHECK-NOT: mix.mixture
func.func @scaled(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    %two = arith.constant dense<2.0> : tensor<1x1x1xf32>
    %z = mix.mul %two, %y : tensor<1x1x1xf32>, tensor<2x3x5xf32> -> tensor<2x3x5xf32>
    mix.yield %z : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// x W_k^T + x V_k^T: K_k = W_k + V_k.
// CHECK-LABEL: func @sum_of_two
// CHECK: mix.add %{{.*}}, %{{.*}} : tensor<5x4xf32>, tensor<5x4xf32> -> tensor<5x4xf32>
// CHECK: mix.dynamic_conv
// CHECK-NOT: mix.mixture
func.func @sum_of_two(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>, %j: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %u = mix.mixture %x, %g experts(%k, %j) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>, %jj: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    %y2 = mix.linear %xi, %jj : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    %z = mix.sub %y, %y2 : tensor<2x3x5xf32>, tensor<2x3x5xf32> -> tensor<2x3x5xf32>
    mix.yield %z : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// x A_k^T B_k^T + b_k, then scaled per feature and shifted by a shared c:
// a composition, a bias added after a scale.
// CHECK-LABEL: func @composed_scaled_bias
// CHECK: mix.dynamic_conv %{{.*}}, %{{.*}} kernels %{{.*}} bias %{{.*}} :
// CHECK-NOT: mix.mixture
func.func @composed_scaled_bias(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %a: tensor<2x6x4xf32>, %b: tensor<2x5x6xf32>, %bb: tensor<2x5xf32>, %s: tensor<1x1x5xf32>, %c: tensor<5xf32>) -> tensor<2x3x5xf32> {
  %u = mix.mixture %x, %g experts(%a, %b, %bb) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x6x4xf32>, tensor<2x5x6xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %ak: tensor<6x4xf32>, %bk: tensor<5x6xf32>, %bbk: tensor<5xf32>):
    %h = mix.linear %xi, %ak : (tensor<2x3x4xf32>, tensor<6x4xf32>) -> tensor<2x3x6xf32>
    %y = mix.linear %h, %bk, %bbk : (tensor<2x3x6xf32>, tensor<5x6xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
    %z = mix.mul %y, %s : tensor<2x3x5xf32>, tensor<1x1x5xf32> -> tensor<2x3x5xf32>
    %c3 = mix.reshape %c : tensor<5xf32> -> tensor<1x1x5xf32>
    %w = mix.add %z, %c3 : tensor<2x3x5xf32>, tensor<1x1x5xf32> -> tensor<2x3x5xf32>
    mix.yield %w : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// The captured mixture input instead of the block argument.
// CHECK-LABEL: func @captured_input
// CHECK: mix.dynamic_conv
// CHECK-NOT: mix.mixture
func.func @captured_input(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %x, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    mix.yield %y : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// A shared bias added after the map, behind a sigmoid gate: gate-summed.
// CHECK-LABEL: func @shared_bias_sigmoid
// CHECK: %[[CN:.*]] = mix.broadcast %{{.*}} : tensor<1x5xf32> -> tensor<2x5xf32>
// CHECK: mix.dynamic_conv %{{.*}}, %{{.*}} kernels %{{.*}} bias %[[CN]] :
// CHECK-NOT: mix.mixture
func.func @shared_bias_sigmoid(%x: tensor<2x3x4xf32>, %w: tensor<2x4xf32>, %wb: tensor<2xf32>, %k: tensor<2x5x4xf32>, %c: tensor<1x1x5xf32>) -> tensor<2x3x5xf32> {
  %g = mix.gate simple sigmoid %x, %w, %wb : (tensor<2x3x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    %z = mix.add %y, %c : tensor<2x3x5xf32>, tensor<1x1x5xf32> -> tensor<2x3x5xf32>
    mix.yield %z : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// A constant gate whose rows sum to one: the shared bias passes through,
// and Z3, which keeps the constant's values, confirms it.
// CHECK-LABEL: func @constant_gate
// CHECK: mix.dynamic_conv %{{.*}}, %{{.*}} kernels %{{.*}} shared_bias %{{.*}} :
// CHECK-NOT: mix.mixture
func.func @constant_gate(%x: tensor<2x4xf32>, %k: tensor<2x3x4xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
  %g = arith.constant dense<[[0.25, 0.75], [0.5, 0.5]]> : tensor<2x2xf32>
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %u : tensor<2x3xf32>
}

// -----

// Six experts (more than the sizes Z3 shrinks to): the expert dimension is
// kept, so each expert's slice is checked.
// CHECK-LABEL: func @six_experts
// CHECK: mix.dynamic_conv
// CHECK-NOT: mix.mixture
func.func @six_experts(%x: tensor<2x3x4xf32>, %g: tensor<2x3x6xf32>, %k: tensor<6x5x4xf32>) -> tensor<2x3x5xf32> {
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x6xf32>, tensor<6x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    %z = mix.neg %y : tensor<2x3x5xf32>
    mix.yield %z : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// The tokens flattened and multiplied by a weight matrix with mix.matmul:
// the same map as mix.linear, K_k = W_k^T.
// CHECK-LABEL: func @matmul
// CHECK: mix.transpose %{{.*}} [1, 0] : tensor<4x5xf32> -> tensor<5x4xf32>
// CHECK: mix.dynamic_conv
// CHECK-NOT: mix.mixture
func.func @matmul(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<4x5xf32>):
    %f = tensor.collapse_shape %xi [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
    %y = mix.matmul %f, %kk : (tensor<6x4xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
    %e = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
    mix.yield %e : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}
