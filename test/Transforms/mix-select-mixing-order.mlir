// RUN: mix-opt %s -split-input-file -mix-select-mixing-order -verify-diagnostics | FileCheck %s

// Per-token gates: one stacked GEMM over [g_1 x | ... | g_N x].
// The figures, worked by hand (4-byte words):
//   apply-then-mix FLOPs 2*T*N*d*f + T*N*d*H = 33554432 + 65536
//                  bytes 4*(T*d + G*H*N + N*f*d + T*f) + 8*T*N*d*H
//                        = 4*148480 + 524288 = 1118208
//   mix-then-apply FLOPs 2*G*N*f*d + 2*T*d*f = 33554432 + 8388608
//                  bytes 4*(N*f*d + 2*G*f*d + T*d + T*f + G*H*N) = 34148352
// With 8 FLOPs a byte: max(4.2e6, 1.1e6) < max(5.2e6, 3.4e7).

// CHECK-LABEL: func @per_token
// CHECK: mix.dynamic_conv {{.*}} order apply_then_mix
func.func @per_token(%x: tensor<2x128x64xf32>, %g: tensor<2x128x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order apply_then_mix: apply-then-mix 3.36e+07 FLOP, 1.12e+06 B; mix-then-apply 4.19e+07 FLOP, 3.41e+07 B (T=256, gate rows=256, N=4, H=1, d=64, f=256)}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x128x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}

// -----

// A gate shared by each sequence: mix the kernels once per sequence.
// G = 2: mix-then-apply FLOPs 262144 + 8388608, bytes 4*213000 = 852000,
// time max(1.08e6, 8.5e5) against apply-then-mix's 4.2e6.

// CHECK-LABEL: func @per_sequence
// CHECK: mix.dynamic_conv {{.*}} order mix_then_apply
func.func @per_sequence(%x: tensor<2x128x64xf32>, %g: tensor<2x1x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order mix_then_apply: apply-then-mix 3.36e+07 FLOP, 1.11e+06 B; mix-then-apply 8.65e+06 FLOP, 8.52e+05 B (T=256, gate rows=2, N=4, H=1, d=64, f=256)}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x1x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}

// -----

// Short sequences: even a shared gate is cheaper as one stacked GEMM.

// CHECK-LABEL: func @per_sequence_short
// CHECK: mix.dynamic_conv {{.*}} order apply_then_mix
func.func @per_sequence_short(%x: tensor<8x1x64xf32>, %g: tensor<8x1x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<8x1x256xf32> {
  // expected-remark @+1 {{mixing order apply_then_mix}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<8x1x64xf32>, tensor<8x1x4xf32>, tensor<4x256x64xf32>) -> tensor<8x1x256xf32>
  return %u : tensor<8x1x256xf32>
}

// -----

// Per-head gates split the GEMM into H column blocks, each with its own
// scaled input: H times the scaled-input traffic, the same FLOPs.

// CHECK-LABEL: func @per_head
// CHECK: mix.dynamic_conv {{.*}} order apply_then_mix
func.func @per_head(%x: tensor<2x128x64xf32>, %g: tensor<2x128x4x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order apply_then_mix: apply-then-mix 3.38e+07 FLOP, 2.70e+06 B; mix-then-apply 4.19e+07 FLOP, 3.42e+07 B (T=256, gate rows=256, N=4, H=4, d=64, f=256)}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x128x4x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}
