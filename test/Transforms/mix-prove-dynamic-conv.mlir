// RUN: mix-opt %s -split-input-file -mix-prove-dynamic-conv -verify-diagnostics | FileCheck %s

// Stacked linear experts with a per-expert bias: proved, whatever the gate.

// CHECK-LABEL: func @stacked_bias
// CHECK: mix.mixture {{.*}}mix.proof = {facts = ["each expert is affine in x with its own bias{{.*}}", "expert weights are independent of x"], status = "proved"}
func.func @stacked_bias(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x32xf32>) -> tensor<2x8x32xf32> {
  // expected-remark @+1 {{proved: the mixture equals a dynamic convolution (Theorem 4.1), because each expert is affine in x with its own bias}}
  %u = mix.mixture %x, %g kernels %k bias %b : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// CHECK-LABEL: func @stacked_no_bias
// CHECK: status = "proved"
func.func @stacked_no_bias(%x: tensor<3x5xf32>, %g: tensor<3x2xf32>, %k: tensor<2x7x5xf32>) -> tensor<3x7xf32> {
  // expected-remark @+1 {{because each expert is linear in x: E_k(x) = x K_k^T; expert weights are independent of x}}
  %u = mix.mixture %x, %g kernels %k : (tensor<3x5xf32>, tensor<3x2xf32>, tensor<2x7x5xf32>) -> tensor<3x7xf32>
  return %u : tensor<3x7xf32>
}

// -----

// A shared bias passes through a softmax gate's sum unchanged.

// CHECK-LABEL: func @shared_bias_softmax
// CHECK: status = "proved"
func.func @shared_bias_softmax(%x: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %wb: tensor<4xf32>, %k: tensor<4x32x16xf32>, %c: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  // expected-remark @+1 {{gate rows sum to one (a softmax mix.gate), so the shared bias passes through sum_k g_k unchanged}}
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// Behind a sigmoid gate it leaves the mixture as (sum_k g_k) c, which is
// the convolution's bias with c for every expert: proved as well.

// CHECK-LABEL: func @shared_bias_sigmoid
// CHECK: status = "proved"
func.func @shared_bias_sigmoid(%x: tensor<2x8x16xf32>, %w: tensor<4x16xf32>, %wb: tensor<4xf32>, %k: tensor<4x32x16xf32>, %c: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %g = mix.gate simple sigmoid %x, %w, %wb : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  // expected-remark @+1 {{expert weights are independent of x; the shared bias leaves the mixture as (sum_k g_k) c, the convolution's gate-summed bias (the gate rows need not sum to one)}}
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// Routing weights of unknown origin: the same gate-summed bias.

func.func @shared_bias_unknown_gate(%x: tensor<4x16xf32>, %g: tensor<4x3xf32>, %k: tensor<3x8x16xf32>, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{the shared bias leaves the mixture as (sum_k g_k) c}}
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<4x16xf32>, tensor<4x3xf32>, tensor<3x8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %u : tensor<4x8xf32>
}

// -----

// Kernels computed from x.

func.func @kernels_from_x(%x: tensor<2x16xf32>, %g: tensor<2x2xf32>, %w: tensor<64x16xf32>) -> tensor<2x4xf32> {
  %t = mix.linear %x, %w : (tensor<2x16xf32>, tensor<64x16xf32>) -> tensor<2x64xf32>
  // expected-note @+1 {{the failing op}}
  %k = tensor.expand_shape %t [[0], [1, 2]] output_shape [2, 4, 16] : tensor<2x64xf32> into tensor<2x4x16xf32>
  // expected-remark @+1 {{refused: expert weights are not independent of x: the kernels are computed from the mixture input; counterexample: with the gate and the weights held fixed, at token (0), feature 0: M(x) + M(y) = -38, but M(x + y) + M(0) = -9.5}}
  %u = mix.mixture %x, %g kernels %k : (tensor<2x16xf32>, tensor<2x2xf32>, tensor<2x4x16xf32>) -> tensor<2x4xf32>
  return %u : tensor<2x4xf32>
}

// -----

// A region expert that is one linear layer with its own bias.

// CHECK-LABEL: func @region_linear
// CHECK: status = "proved"
func.func @region_linear(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x32xf32>) -> tensor<2x8x32xf32> {
  // expected-remark @+1 {{each expert is affine in x with its own bias: E_k(x) = x K_k^T + b_k, and sum_k g_k b_k is the mixed bias; expert weights are independent of x; experts act on each token alone, with the same weights at every position}}
  %u = mix.mixture %x, %g experts(%k, %b) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %kk: tensor<32x16xf32>, %bk: tensor<32xf32>):
    %y = mix.linear %xi, %kk, %bk : (tensor<2x8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
    mix.yield %y : tensor<2x8x32xf32>
  }
  return %u : tensor<2x8x32xf32>
}

// -----

// Two linear layers with no activation between them, scaled per output
// feature (the same scale at every position): still linear.

// CHECK-LABEL: func @region_two_linear
// CHECK: status = "proved"
func.func @region_two_linear(%x: tensor<4x16xf32>, %g: tensor<4x2xf32>, %k1: tensor<2x8x16xf32>, %k2: tensor<2x6x8xf32>, %s: tensor<1x6xf32>) -> tensor<4x6xf32> {
  // expected-remark @+1 {{because each expert is linear in x: E_k(x) = x K_k^T}}
  %u = mix.mixture %x, %g experts(%k1, %k2) : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>, tensor<2x6x8xf32>) -> tensor<4x6xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %a: tensor<8x16xf32>, %b: tensor<6x8xf32>):
    %h = mix.linear %xi, %a : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    %y = mix.linear %h, %b : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
    %z = mix.mul %y, %s : tensor<4x6xf32>, tensor<1x6xf32> -> tensor<4x6xf32>
    mix.yield %z : tensor<4x6xf32>
  }
  return %u : tensor<4x6xf32>
}

// -----

// ReLU experts: the mask does not commute with the mixing of kernels.

// CHECK-LABEL: func @region_relu
// CHECK: status = "refused"
func.func @region_relu(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  // expected-remark @+1 {{refused: expert is not linear in x: `mix.relu` is a nonlinearity applied to a value that depends on x (Corollary 4.2: its data-dependent mask does not commute with the gate-weighted sum of kernels); counterexample: with the gate and the weights held fixed, at token (}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>) -> tensor<2x8x32xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %kk: tensor<32x16xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x8x16xf32>, tensor<32x16xf32>) -> tensor<2x8x32xf32>
    // expected-note @+1 {{the failing op}}
    %z = mix.relu %y : tensor<2x8x32xf32>
    mix.yield %z : tensor<2x8x32xf32>
  }
  return %u : tensor<2x8x32xf32>
}

// -----

// GELU experts.

func.func @region_gelu(%x: tensor<4x16xf32>, %g: tensor<4x3xf32>, %k: tensor<3x8x16xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{refused: expert is not linear in x: `mix.gelu` is a nonlinearity applied to a value that depends on x (Corollary 4.2: its data-dependent mask does not commute with the gate-weighted sum of kernels); counterexample: with the gate and the weights held fixed, at token (}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x16xf32>, tensor<4x3xf32>, tensor<3x8x16xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %kk: tensor<8x16xf32>):
    %y = mix.linear %xi, %kk : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    // expected-note @+1 {{the failing op}}
    %z = mix.gelu %y : tensor<4x8xf32>
    mix.yield %z : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}

// -----

// A sigmoid expert.

func.func @region_sigmoid(%x: tensor<4x16xf32>, %g: tensor<4x3xf32>, %k: tensor<3x8x16xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{refused: expert is not linear in x: `mix.sigmoid` is a nonlinearity applied to a value that depends on x (Corollary 4.2: its data-dependent mask does not commute with the gate-weighted sum of kernels); counterexample: with the gate and the weights held fixed, at token (}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x16xf32>, tensor<4x3xf32>, tensor<3x8x16xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %kk: tensor<8x16xf32>):
    %y = mix.linear %xi, %kk : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    // expected-note @+1 {{the failing op}}
    %z = mix.sigmoid %y : tensor<4x8xf32>
    mix.yield %z : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}

// -----

// A two-layer expert with ReLU between the layers.

func.func @region_two_layer_relu(%x: tensor<4x16xf32>, %g: tensor<4x2xf32>, %k1: tensor<2x8x16xf32>, %k2: tensor<2x6x8xf32>) -> tensor<4x6xf32> {
  // expected-remark @+1 {{refused: expert is not linear in x: `mix.relu` is a nonlinearity applied to a value that depends on x (Corollary 4.2: its data-dependent mask does not commute with the gate-weighted sum of kernels); counterexample: with the gate and the weights held fixed, at token (}}
  %u = mix.mixture %x, %g experts(%k1, %k2) : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>, tensor<2x6x8xf32>) -> tensor<4x6xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %a: tensor<8x16xf32>, %b: tensor<6x8xf32>):
    %h = mix.linear %xi, %a : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    // expected-note @+1 {{the failing op}}
    %r = mix.relu %h : tensor<4x8xf32>
    %y = mix.linear %r, %b : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
    mix.yield %y : tensor<4x6xf32>
  }
  return %u : tensor<4x6xf32>
}

// -----

// A quadratic expert.

func.func @region_square(%x: tensor<4x8xf32>, %g: tensor<4x2xf32>, %k: tensor<2x8x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{refused: expert is not linear in x: `mix.mul` multiplies two values that depend on x (a factor that depends on the token is not part of a kernel; folded into the gate, g'_k = s g_k, it would be, but this rewrite does not do that); counterexample: with the gate and the weights held fixed, at token (}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<2x8x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x8xf32>, %kk: tensor<8x8xf32>):
    %y = mix.linear %xi, %kk : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    // expected-note @+1 {{the failing op}}
    %z = mix.mul %y, %xi : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    mix.yield %z : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}

// -----

// The expert's weight is scaled by a value computed from x.

func.func @region_weight_from_x(%x: tensor<4x8xf32>, %g: tensor<4x2xf32>, %k: tensor<2x8x8xf32>, %v: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %s = mix.linear %x, %v : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{refused: expert is not known to be linear in x: `tensor.extract_slice` is not an op the prover understands; no counterexample computed: the reference interpreter cannot evaluate this mixture}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<2x8x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x8xf32>, %kk: tensor<8x8xf32>):
    // expected-note @+1 {{the failing op}}
    %s1 = tensor.extract_slice %s[0, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
    %w = mix.mul %kk, %s1 : tensor<8x8xf32>, tensor<1x8xf32> -> tensor<8x8xf32>
    %y = mix.linear %xi, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    mix.yield %y : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}

// -----

// Stacked expert weights computed from x, used by a region.

func.func @region_stacked_weight_from_x(%x: tensor<2x8xf32>, %g: tensor<2x2xf32>, %v: tensor<32x8xf32>) -> tensor<2x4xf32> {
  %t = mix.linear %x, %v : (tensor<2x8xf32>, tensor<32x8xf32>) -> tensor<2x32xf32>
  %k = tensor.expand_shape %t [[0], [1, 2]] output_shape [2, 4, 8] : tensor<2x32xf32> into tensor<2x4x8xf32>
  // expected-remark @+1 {{refused: expert weights are not independent of x: `mix.linear` uses a weight computed from the mixture input; counterexample: with the gate and the weights held fixed, at token (}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x4x8xf32>) -> tensor<2x4xf32> {
  ^bb0(%xi: tensor<2x8xf32>, %kk: tensor<4x8xf32>):
    // expected-note @+1 {{the failing op}}
    %y = mix.linear %xi, %kk : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    mix.yield %y : tensor<2x4xf32>
  }
  return %u : tensor<2x4xf32>
}

// -----

// A shared bias captured from above passes through a normalised gate.

// CHECK-LABEL: func @region_shared_bias_softmax
// CHECK: status = "proved"
func.func @region_shared_bias_softmax(%x: tensor<4x16xf32>, %w: tensor<2x16xf32>, %wb: tensor<2xf32>, %k: tensor<2x8x16xf32>, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<4x16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  // expected-remark @+1 {{each expert is affine in x with one shared bias: E_k(x) = x K_k^T + c; expert weights are independent of x; experts act on each token alone, with the same weights at every position; gate rows sum to one (a softmax mix.gate)}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %kk: tensor<8x16xf32>):
    %y = mix.linear %xi, %kk, %c : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    mix.yield %y : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}

// -----

func.func @region_shared_bias_sigmoid(%x: tensor<4x16xf32>, %w: tensor<2x16xf32>, %wb: tensor<2xf32>, %k: tensor<2x8x16xf32>, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  %g = mix.gate simple sigmoid %x, %w, %wb : (tensor<4x16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  // expected-remark @+1 {{proved: the mixture equals a dynamic convolution (Theorem 4.1), because each expert is affine in x with one shared bias: E_k(x) = x K_k^T + c; expert weights are independent of x; experts act on each token alone, with the same weights at every position; the shared bias leaves the mixture as (sum_k g_k) c}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %kk: tensor<8x16xf32>):
    %y = mix.linear %xi, %kk, %c : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    mix.yield %y : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}

// -----

// An expert that mixes tokens is not a 1x1 convolution.

func.func @region_prefix_mean(%x: tensor<2x8x16xf32>, %g: tensor<2x8x2xf32>, %k: tensor<2x4x16xf32>) -> tensor<2x8x4xf32> {
  // expected-remark @+1 {{refused: expert is not a 1x1 convolution: `mix.prefix_mean` mixes information across tokens; counterexample: with the gate and the weights held fixed, changing only token (0, 0) of x changes the output at token (}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x8x16xf32>, tensor<2x8x2xf32>, tensor<2x4x16xf32>) -> tensor<2x8x4xf32> {
  ^bb0(%xi: tensor<2x8x16xf32>, %kk: tensor<4x16xf32>):
    // expected-note @+1 {{the failing op}}
    %c = mix.prefix_mean %xi : tensor<2x8x16xf32>
    %y = mix.linear %c, %kk : (tensor<2x8x16xf32>, tensor<4x16xf32>) -> tensor<2x8x4xf32>
    mix.yield %y : tensor<2x8x4xf32>
  }
  return %u : tensor<2x8x4xf32>
}

// -----

// An op the prover does not know is not assumed linear.

func.func @region_unknown_op(%x: tensor<4x16xf32>, %g: tensor<4x2xf32>, %k: tensor<2x8x16xf32>, %lw: tensor<8xf32>, %lb: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{refused: expert is not known to be linear in x: `mix.layer_norm` is not an op the prover understands; counterexample: with the gate and the weights held fixed, at token (}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %kk: tensor<8x16xf32>):
    %y = mix.linear %xi, %kk : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    // expected-note @+1 {{the failing op}}
    %z = mix.layer_norm %y, %lw, %lb eps 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    mix.yield %z : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}
