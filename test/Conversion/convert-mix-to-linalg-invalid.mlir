// RUN: mix-opt %s --split-input-file --convert-mix-to-linalg --verify-diagnostics

// convert-mix-to-linalg lowers primitive mix ops only. A model-level op
// left in the input has no pattern; the pass names it and says what to
// run first, instead of leaving mix ops behind.

func.func @model_level(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{'mix.gelu' op was not lowered to linalg (is it a model-level op? run mix-decompose first)}}
  %y = mix.gelu %x : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @model_level_linear(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %e = mix.exp %x : tensor<2x4xf32>
  // expected-error @below {{'mix.linear' op was not lowered to linalg}}
  %y = mix.linear %e, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
