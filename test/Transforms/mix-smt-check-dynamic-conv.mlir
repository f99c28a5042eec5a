// RUN: mix-opt %s -split-input-file -mix-smt-check-dynamic-conv -verify-diagnostics

// Z3 checks Theorem 4.1 on its own, without the prove pass: each mixture
// against the dynamic convolution with the same kernels.

func.func @per_expert_bias(%x: tensor<2x8x16xf32>, %g: tensor<2x8x4xf32>, %k: tensor<4x32x16xf32>, %b: tensor<4x32xf32>) -> tensor<2x8x32xf32> {
  // Tokens shrink to 2; 16 and 32 to 4 (the lcm of the small sizes 4 and 2
  // that divide them), 4 and 2 stay.
  // expected-remark @+1 {{smt: equivalent to its dynamic convolution (at shape (2,2,4) over 4 free tensors)}}
  %u = mix.mixture %x, %g kernels %k bias %b : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x32x16xf32>, tensor<4x32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

func.func @shared_bias_softmax(%x: tensor<3x5xf32>, %w: tensor<3x5xf32>, %wb: tensor<3xf32>, %k: tensor<3x7x5xf32>, %c: tensor<7xf32>) -> tensor<3x7xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  // expected-remark @+1 {{smt: equivalent to its dynamic convolution}}
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<3x5xf32>, tensor<3x3xf32>, tensor<3x7x5xf32>, tensor<7xf32>) -> tensor<3x7xf32>
  return %u : tensor<3x7xf32>
}

// -----

func.func @shared_bias_sigmoid(%x: tensor<3x5xf32>, %w: tensor<3x5xf32>, %wb: tensor<3xf32>, %k: tensor<3x7x5xf32>, %c: tensor<7xf32>) -> tensor<3x7xf32> {
  %g = mix.gate simple sigmoid %x, %w, %wb : (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  // expected-remark @+1 {{smt: counterexample at shape (3,2), element 0: mix.mixture = }}
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<3x5xf32>, tensor<3x3xf32>, tensor<3x7x5xf32>, tensor<7xf32>) -> tensor<3x7xf32>
  return %u : tensor<3x7xf32>
}

// -----

// Routing weights of unknown origin: a shared bias fails for some of them.

func.func @shared_bias_free_gate(%x: tensor<4x6xf32>, %g: tensor<4x2xf32>, %k: tensor<2x6x6xf32>, %c: tensor<6xf32>) -> tensor<4x6xf32> {
  // expected-remark @+1 {{smt: counterexample}}
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<4x6xf32>, tensor<4x2xf32>, tensor<2x6x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %u : tensor<4x6xf32>
}

// -----

// Per-head gates: head j weights output chunk j.

func.func @per_head(%x: tensor<2x4x8xf32>, %w: tensor<2x3x4xf32>, %wb: tensor<2x3xf32>, %k: tensor<3x12x8xf32>, %b: tensor<3x12xf32>) -> tensor<2x4x12xf32> {
  %g = mix.gate multi_head softmax %x, %w, %wb : (tensor<2x4x8xf32>, tensor<2x3x4xf32>, tensor<2x3xf32>) -> tensor<2x4x2x3xf32>
  // expected-remark @+1 {{smt: equivalent to its dynamic convolution}}
  %u = mix.mixture %x, %g kernels %k bias %b : (tensor<2x4x8xf32>, tensor<2x4x2x3xf32>, tensor<3x12x8xf32>, tensor<3x12xf32>) -> tensor<2x4x12xf32>
  return %u : tensor<2x4x12xf32>
}

// -----

// A gate shared across the sequence, broadcast over its tokens.

func.func @per_sequence(%x: tensor<2x16x8xf32>, %g: tensor<2x1x4xf32>, %k: tensor<4x8x8xf32>) -> tensor<2x16x8xf32> {
  // expected-remark @+1 {{smt: equivalent to its dynamic convolution}}
  %u = mix.mixture %x, %g kernels %k : (tensor<2x16x8xf32>, tensor<2x1x4xf32>, tensor<4x8x8xf32>) -> tensor<2x16x8xf32>
  return %u : tensor<2x16x8xf32>
}

// -----

func.func @region(%x: tensor<4x16xf32>, %g: tensor<4x2xf32>, %k: tensor<2x8x16xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{smt: skipped, the experts are a region}}
  %u = mix.mixture %x, %g experts(%k) : (tensor<4x16xf32>, tensor<4x2xf32>, tensor<2x8x16xf32>) -> tensor<4x8xf32> {
  ^bb0(%xi: tensor<4x16xf32>, %kk: tensor<8x16xf32>):
    %y = mix.linear %xi, %kk : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    mix.yield %y : tensor<4x8xf32>
  }
  return %u : tensor<4x8xf32>
}
