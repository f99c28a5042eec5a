// RUN: mix-opt %s -split-input-file -mix-select-mixing-order='order=stack_then_mix' -verify-diagnostics | FileCheck %s
// RUN: mix-opt %s -split-input-file -mix-select-mixing-order='order=mix_then_apply' 2>&1 | FileCheck %s --check-prefix=MIXFIRST
// RUN: not mix-opt %s -split-input-file -mix-select-mixing-order='order=sideways' 2>&1 | FileCheck %s --check-prefix=BAD

// The order option overrides the cost model (which picks apply_then_mix for
// this convolution: mix-select-mixing-order.mlir, @per_token) and says so.

// CHECK-LABEL: func @per_token
// CHECK: mix.dynamic_conv {{.*}} order stack_then_mix
func.func @per_token(%x: tensor<2x128x64xf32>, %g: tensor<2x128x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order stack_then_mix (as asked), forward and backward: apply-then-mix 1.01e+08 FLOP, 6.17e+06 B}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x128x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}

// -----

// mix_then_apply is lowered only for one gate head shared by each
// sequence: a per-token gate asked for it applies then mixes, and the
// remark says why.
// MIXFIRST-DAG: :12:8: remark: mixing order apply_then_mix (mix_then_apply was asked: it needs one gate head shared by each sequence)
// MIXFIRST-DAG: :29:8: remark: mixing order mix_then_apply (as asked)
// MIXFIRST-DAG: order apply_then_mix : (tensor<2x128x64xf32>, tensor<2x128x4xf32>
// MIXFIRST-DAG: order mix_then_apply : (tensor<2x128x64xf32>, tensor<2x1x4xf32>
// CHECK-LABEL: func @per_sequence
// CHECK: mix.dynamic_conv {{.*}} order stack_then_mix
func.func @per_sequence(%x: tensor<2x128x64xf32>, %g: tensor<2x1x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order stack_then_mix (as asked)}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x1x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}

// BAD: error: unknown mixing order 'sideways' (expected auto, apply_then_mix, stack_then_mix or mix_then_apply)
