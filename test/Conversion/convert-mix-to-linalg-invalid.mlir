// RUN: mix-opt %s --split-input-file --convert-mix-to-linalg --verify-diagnostics

// convert-mix-to-linalg lowers primitive mix ops only, under the dialect
// conversion framework with every mix op illegal. A model-level op left in
// the input has no pattern: the framework names it, with a note saying what
// to run first, and nothing is left half-lowered.

func.func @model_level(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{failed to legalize operation 'mix.gelu' that was explicitly marked illegal}}
  // expected-note @below {{the primitive mix ops lower to linalg; a model-level op needs mix-decompose first}}
  %y = mix.gelu %x : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @model_level_linear(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %e = mix.exp %x : tensor<2x4xf32>
  // expected-error @below {{failed to legalize operation 'mix.linear' that was explicitly marked illegal}}
  // expected-note @below {{a model-level op needs mix-decompose first}}
  %y = mix.linear %e, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
