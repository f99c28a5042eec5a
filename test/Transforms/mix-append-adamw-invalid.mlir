// RUN: mix-opt %s --split-input-file --mix-append-adamw --verify-diagnostics

// mix-append-adamw updates @forward's parameters: without a @forward it
// has nothing to update, and says so (rather than appending an empty
// @adamw).
// expected-error @below {{no @forward whose parameters AdamW would update}}
module {
  func.func @grad(%x: tensor<4xf32>) -> tensor<f32> {
    %c = arith.constant dense<1.0> : tensor<f32>
    return %c : tensor<f32>
  }
}

// -----

// A @forward without an f32 argument has no parameter to update: an error,
// not an @adamw built around a norm of nothing.
// expected-error @below {{@forward has no f32 parameter for AdamW to update}}
func.func @forward(%tok: tensor<4xi32>) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// Arguments are tensors.
// expected-error @below {{argument #1 of @forward is not a ranked tensor: 'index'}}
func.func @forward(%w: tensor<4xf32>, %i: index) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}
