// RUN: mix-opt %s -split-input-file -mix-prove-dynamic-conv -verify-diagnostics | FileCheck %s

// A dynamic convolution acts on each token alone, with the same kernel at
// every position. The prover checks, op by op, that every value computed
// from x keeps one row of features per token of x and is combined only with
// values that are the same at every position. Here: the ways an expert can
// break that, each refused with the op named and a counterexample computed
// on the expert itself, and the cases that must still be proved.

// A reshape that folds the sequence into the features before a per-expert
// linear map: the expert mixes tokens.
// CHECK-LABEL: func @fold_tokens_into_features
// CHECK: status = "refused"
func.func @fold_tokens_into_features(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x12x12xf32>) -> tensor<2x3x4xf32> {
  // expected-remark @+1 {{refused: expert is not a 1x1 convolution: `tensor.collapse_shape` moves data across token positions (its result does not keep one row of features per token of x); counterexample: with the gate and the weights held fixed, changing only token (0, 0) of x changes the output at token (0, 1)}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x12x12xf32>) -> tensor<2x3x4xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<12x12xf32>):
    // expected-note @+1 {{the failing op}}
    %c = tensor.collapse_shape %xi [[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
    %y = mix.linear %c, %kk : (tensor<2x12xf32>, tensor<12x12xf32>) -> tensor<2x12xf32>
    %e = tensor.expand_shape %y [[0], [1, 2]] output_shape [2, 3, 4] : tensor<2x12xf32> into tensor<2x3x4xf32>
    mix.yield %e : tensor<2x3x4xf32>
  }
  return %u : tensor<2x3x4xf32>
}

// -----

// The same with mix.reshape.
func.func @fold_tokens_mix_reshape(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x12x12xf32>) -> tensor<2x3x4xf32> {
  // expected-remark @+1 {{refused: expert is not a 1x1 convolution: `mix.reshape` moves data across token positions}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x12x12xf32>) -> tensor<2x3x4xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<12x12xf32>):
    // expected-note @+1 {{the failing op}}
    %c = mix.reshape %xi : tensor<2x3x4xf32> -> tensor<2x12xf32>
    %y = mix.linear %c, %kk : (tensor<2x12xf32>, tensor<12x12xf32>) -> tensor<2x12xf32>
    %e = mix.reshape %y : tensor<2x12xf32> -> tensor<2x3x4xf32>
    mix.yield %e : tensor<2x3x4xf32>
  }
  return %u : tensor<2x3x4xf32>
}

// -----

// Must not fire: flattening the token dimensions (and restoring them) keeps
// one row per token, in order.
// CHECK-LABEL: func @flatten_tokens
// CHECK: status = "proved"
func.func @flatten_tokens(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  // expected-remark @+1 {{proved}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %c = tensor.collapse_shape %xi [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
    %y = mix.linear %c, %kk : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
    %e = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
    mix.yield %e : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// A mix.linear whose weight is x itself (reshaped): linear in x, but not a
// convolution of x.
// CHECK-LABEL: func @weight_is_x
// CHECK: status = "refused"
func.func @weight_is_x(%x: tensor<1x4x4xf32>, %g: tensor<1x4x2xf32>, %k: tensor<2x4x4xf32>, %c: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %w = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
  // expected-remark @+1 {{refused: expert weights are not independent of x: the weight operand of `mix.linear` is computed from the mixture input; counterexample: with the gate and the weights held fixed, changing only token (0, 0) of x changes the output at token (0, 1)}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<1x4x4xf32>, tensor<1x4x2xf32>, tensor<2x4x4xf32>) -> tensor<1x4x4xf32> {
  ^bb0(%xi: tensor<1x4x4xf32>, %kk: tensor<4x4xf32>):
    // expected-note @+1 {{the failing op}}
    %y = mix.linear %c, %w : (tensor<1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x4x4xf32>
    mix.yield %y : tensor<1x4x4xf32>
  }
  return %u : tensor<1x4x4xf32>
}

// -----

// A weight derived from x inside the expert.
func.func @weight_from_block_argument(%x: tensor<4x4xf32>, %g: tensor<4x2xf32>, %k: tensor<2x4x4xf32>) -> tensor<4x4xf32> {
  // expected-remark @+1 {{refused: expert weights are not independent of x: the weight operand of `mix.linear` is computed from the mixture input}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x4xf32>, tensor<4x2xf32>, tensor<2x4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%xi: tensor<4x4xf32>, %kk: tensor<4x4xf32>):
    %w = mix.neg %xi : tensor<4x4xf32>
    // expected-note @+1 {{the failing op}}
    %y = mix.linear %xi, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    mix.yield %y : tensor<4x4xf32>
  }
  return %u : tensor<4x4xf32>
}

// -----

// A scale that varies along the sequence (a position-dependent kernel).
// CHECK-LABEL: func @position_dependent_scale
// CHECK: status = "refused"
func.func @position_dependent_scale(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %s = arith.constant dense<[[[1.0], [2.0], [3.0]]]> : tensor<1x3x1xf32>
  // expected-remark @+1 {{refused: expert is not a 1x1 convolution: `mix.mul` combines x with a constant that varies along the token positions, so the kernel would depend on the position; counterexample: every token given the same input row and the same gate row, the mixture gives}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    // expected-note @+1 {{the failing op}}
    %z = mix.mul %y, %s : tensor<2x3x5xf32>, tensor<1x3x1xf32> -> tensor<2x3x5xf32>
    mix.yield %z : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// A bias that varies along the batch.
func.func @position_dependent_bias(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>, %b: tensor<2x1x5xf32>) -> tensor<2x3x5xf32> {
  // expected-remark @+1 {{refused: expert is not a 1x1 convolution: `mix.add` combines x with a constant that varies along the token positions}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    // expected-note @+1 {{the failing op}}
    %z = mix.add %y, %b : tensor<2x3x5xf32>, tensor<2x1x5xf32> -> tensor<2x3x5xf32>
    mix.yield %z : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// Must not fire: a scale per output feature, and a splat of the tokens'
// shape, are the same at every position.
// CHECK-LABEL: func @position_invariant_scales
// CHECK: status = "proved"
func.func @position_invariant_scales(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>, %s: tensor<1x1x5xf32>) -> tensor<2x3x5xf32> {
  %two = arith.constant dense<2.0> : tensor<2x3x5xf32>
  // expected-remark @+1 {{proved}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    %z = mix.mul %y, %s : tensor<2x3x5xf32>, tensor<1x1x5xf32> -> tensor<2x3x5xf32>
    %w = mix.mul %two, %z : tensor<2x3x5xf32>, tensor<2x3x5xf32> -> tensor<2x3x5xf32>
    mix.yield %w : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// A factor that depends on the token's own x, common to all experts:
// (x . x) E_k(x). Refused against the unchanged gate, with a counterexample
// evaluated on this expert.
// CHECK-LABEL: func @token_scalar_factor
// CHECK: counterexample = "with the gate and the weights held fixed
// CHECK-SAME: status = "refused"
func.func @token_scalar_factor(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  // expected-note @+1 {{the failing op}}
  %xx = mix.mul %x, %x : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %s = mix.reduce_sum %xx dims [2] : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  // expected-remark @+1 {{refused: expert is not linear in x: `mix.mul` multiplies two values that depend on x (a factor that depends on the token is not part of a kernel; folded into the gate, g'_k = s g_k, it would be, but this rewrite does not do that); counterexample: with the gate and the weights held fixed, at token (}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %xi, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    %z = mix.mul %s, %y : tensor<2x3x1xf32>, tensor<2x3x5xf32> -> tensor<2x3x5xf32>
    mix.yield %z : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// An expert that reads the captured mixture input instead of its block
// argument reads x all the same.
// CHECK-LABEL: func @captured_input
// CHECK: status = "proved"
func.func @captured_input(%x: tensor<2x3x4xf32>, %g: tensor<2x3x2xf32>, %k: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  // expected-remark @+1 {{proved}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<2x3x4xf32>, tensor<2x3x2xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%xi: tensor<2x3x4xf32>, %kk: tensor<5x4xf32>):
    %y = mix.linear %x, %kk : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
    mix.yield %y : tensor<2x3x5xf32>
  }
  return %u : tensor<2x3x5xf32>
}

// -----

// A constant gate whose rows sum to one lets a shared bias through, and is
// named as what it is.
// CHECK-LABEL: func @constant_gate
// CHECK: status = "proved"
func.func @constant_gate(%x: tensor<2x4xf32>, %k: tensor<2x3x4xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
  %g = arith.constant dense<[[0.25, 0.75], [0.5, 0.5]]> : tensor<2x2xf32>
  // expected-remark @+1 {{gate rows sum to one (a constant gate whose rows each sum to one), so the shared bias passes through sum_k g_k unchanged}}
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<2x4xf32>, tensor<2x2xf32>, tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %u : tensor<2x3xf32>
}

// -----

// A product with x on the right: each output mixes all tokens.
// CHECK-LABEL: func @matmul_across_tokens
// CHECK: status = "refused"
func.func @matmul_across_tokens(%x: tensor<6x4xf32>, %g: tensor<6x2xf32>, %k: tensor<2x6x6xf32>) -> tensor<6x4xf32> {
  // expected-remark @+1 {{refused: expert weights are not independent of x: the right operand of `mix.matmul` is computed from the mixture input; counterexample: with the gate and the weights held fixed, changing only token (0) of x changes the output at token (1)}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<6x4xf32>, tensor<6x2xf32>, tensor<2x6x6xf32>) -> tensor<6x4xf32> {
  ^bb0(%xi: tensor<6x4xf32>, %kk: tensor<6x6xf32>):
    // expected-note @+1 {{the failing op}}
    %y = mix.matmul %kk, %xi : (tensor<6x6xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    mix.yield %y : tensor<6x4xf32>
  }
  return %u : tensor<6x4xf32>
}
