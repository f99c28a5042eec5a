// RUN: mix-opt %s --split-input-file --allow-unregistered-dialect --mix-autodiff --verify-diagnostics

// Where mix-autodiff must refuse, and say why.

// No function of the name asked for (here the default, @forward).
// expected-error @below {{no function @forward to differentiate}}
module {
  func.func @loss(%x: tensor<2xf32>) -> tensor<f32> {
    %s = mix.reduce_sum %x dims [0] : tensor<2xf32> -> tensor<1xf32>
    %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A declaration has no body to differentiate.
// expected-error @below {{autodiff needs a single-block function}}
func.func private @forward(tensor<2xf32>) -> tensor<f32>

// -----

// The first result must be the scalar loss, not a tensor of rank 1...
// expected-error @below {{autodiff needs a function whose first result is the scalar loss}}
func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = mix.exp %x : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// ...and there must be one.
// expected-error @below {{autodiff needs a function whose first result is the scalar loss}}
func.func @forward(%x: tensor<2xf32>) {
  return
}

// -----

// A model-level op on the loss's path: it has no rule of its own; its
// decomposition into primitives has.
func.func @forward(%x: tensor<2xf32>) -> tensor<f32> {
  // expected-error @below {{'mix.gelu' op has no vector-Jacobian product; autodiff runs on primitive ops (run mix-decompose first)}}
  %y = mix.gelu %x : tensor<2xf32>
  %s = mix.reduce_sum %y dims [0] : tensor<2xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// reduce_max has no rule: the decompositions only ever use it under
// stop_gradient (softmax and log-sum-exp shifts), where its adjoint is not
// needed. Differentiated directly, it is refused rather than given a
// wrong gradient.
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error @below {{'mix.reduce_max' op has no vector-Jacobian product}}
  %m = mix.reduce_max %x dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %m : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Every op of the body must have a result.
func.func @forward(%x: tensor<2xf32>) -> tensor<f32> {
  %s = mix.reduce_sum %x dims [0] : tensor<2xf32> -> tensor<1xf32>
  %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
  // expected-error @below {{autodiff handles ops with results only}}
  "test.sink"(%l) : (tensor<f32>) -> ()
  return %l : tensor<f32>
}

// -----

// An op is differentiated through its first result: a loss that reads the
// attention's row statistics is rejected, not given a wrong gradient.
func.func @forward(%qkv: tensor<1x2x6xf32>) -> tensor<f32> {
  // expected-error @below {{result #1 has an adjoint; autodiff differentiates an op through its first result only}}
  %o, %lse = mix.flash_attention %qkv heads 1 : (tensor<1x2x6xf32>) -> (tensor<1x2x2xf32>, tensor<1x1x2xf32>)
  %s = mix.reduce_sum %lse dims [0, 1, 2] : tensor<1x1x2xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The gradient function's name is taken: an error naming it, not the
// symbol verifier's redefinition.
module {
  func.func @forward(%x: tensor<2xf32>) -> tensor<f32> {
    %s = mix.reduce_sum %x dims [0] : tensor<2xf32> -> tensor<1xf32>
    %l = mix.reshape %s : tensor<1xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  // expected-error @below {{a symbol @grad exists already; mix-autodiff writes the gradient function there}}
  func.func @grad(%x: tensor<2xf32>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}
