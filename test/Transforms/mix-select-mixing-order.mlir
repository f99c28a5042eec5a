// RUN: mix-opt %s -split-input-file -mix-select-mixing-order -verify-diagnostics | FileCheck %s

// The cost of each order is that of a training step's forward and backward
// passes: the products' FLOPs (three times the forward's) and the bytes
// all of it moves, in 4-byte words; time = FLOPs / 8 + bytes. Worked by
// hand with x = T d, u = T f, K = N f d, gate = G H N:
//
// Per-token gates, one head (T = G = 256, N = 4, H = 1, d = 64, f = 256):
//   apply-then-mix (S = T N d H = 65536 scaled inputs):
//     FLOPs 6 T N d f = 100663296
//     bytes forward  x + gate + K + 2 S + (2N - 1) u = 672768
//           backward 3 S + 2N u + 2 K + x + gate     = 869376
//           4 x 1542144 = 6168576, time 1.87e7
//   stack-then-mix (P = T N f = 262144 stream outputs):
//     FLOPs the same; bytes forward x + gate + K + 2 P + u = 672768,
//     backward u + gate + 4 P + 2 K + 2 x = 1278976: 4 x 1951744 = 7806976
//   mix-then-apply (M = G f d = 4194304 mixed kernels):
//     FLOPs 6 G N f d + 6 T d f = 125829120
//     bytes forward K + 2 M + x + u + gate = 8537088,
//     backward 4 M + 2 u + 2 x + 2 K + gate = 17073152: 102440960
// Apply-then-mix is cheapest: its scaled input is 4x narrower than P.

// CHECK-LABEL: func @per_token
// CHECK: mix.dynamic_conv {{.*}} order apply_then_mix
func.func @per_token(%x: tensor<2x128x64xf32>, %g: tensor<2x128x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order apply_then_mix, forward and backward: apply-then-mix 1.01e+08 FLOP, 6.17e+06 B; stack-then-mix 1.01e+08 FLOP, 7.81e+06 B; mix-then-apply 1.26e+08 FLOP, 1.02e+08 B (T=256, gate rows=256, N=4, H=1, d=64, f=256)}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x128x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}

// -----

// A gate shared by each sequence: mix the kernels once per sequence.
// G = 2: mix-then-apply FLOPs 6 G N f d + 6 T d f = 786432 + 25165824 =
// 25952256, time 3.2e6 + 2.6e6 against apply-then-mix's 1.9e7.

// CHECK-LABEL: func @per_sequence
// CHECK: mix.dynamic_conv {{.*}} order mix_then_apply
func.func @per_sequence(%x: tensor<2x128x64xf32>, %g: tensor<2x1x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order mix_then_apply, forward and backward: apply-then-mix 1.01e+08 FLOP, 6.16e+06 B; stack-then-mix 1.01e+08 FLOP, 7.80e+06 B; mix-then-apply 2.60e+07 FLOP, 2.56e+06 B (T=256, gate rows=2, N=4, H=1, d=64, f=256)}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x1x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}

// -----

// Short sequences: a shared gate has as many rows as there are tokens, and
// mixing the kernels per row costs more than applying them.

// CHECK-LABEL: func @per_sequence_short
// CHECK: mix.dynamic_conv {{.*}} order apply_then_mix
func.func @per_sequence_short(%x: tensor<8x1x64xf32>, %g: tensor<8x1x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<8x1x256xf32> {
  // expected-remark @+1 {{mixing order apply_then_mix}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<8x1x64xf32>, tensor<8x1x4xf32>, tensor<4x256x64xf32>) -> tensor<8x1x256xf32>
  return %u : tensor<8x1x256xf32>
}

// -----

// Per-head gates (H = 4, f = H d): apply-then-mix scales the input once
// for each head, S = T N d H = 262144 = P, and its N products read and
// write U again: bytes 4 x (1069056 + 1462272) = 10125312 against
// stack-then-mix's 4 x (675840 + 1282048) = 7831552, with the same FLOPs.

// CHECK-LABEL: func @per_head
// CHECK: mix.dynamic_conv {{.*}} order stack_then_mix
func.func @per_head(%x: tensor<2x128x64xf32>, %g: tensor<2x128x4x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order stack_then_mix, forward and backward: apply-then-mix 1.01e+08 FLOP, 1.01e+07 B; stack-then-mix 1.01e+08 FLOP, 7.83e+06 B; mix-then-apply 1.26e+08 FLOP, 1.02e+08 B (T=256, gate rows=256, N=4, H=4, d=64, f=256)}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x128x4x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}

// -----

// Per-head gates shared by each sequence: mix-then-apply is not lowered for
// them (one head only), however cheap.

// CHECK-LABEL: func @per_head_per_sequence
// CHECK-NOT: mix_then_apply
func.func @per_head_per_sequence(%x: tensor<2x128x64xf32>, %g: tensor<2x1x4x4xf32>, %k: tensor<4x256x64xf32>) -> tensor<2x128x256xf32> {
  // expected-remark @+1 {{mixing order stack_then_mix}}
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x128x64xf32>, tensor<2x1x4x4xf32>, tensor<4x256x64xf32>) -> tensor<2x128x256xf32>
  return %u : tensor<2x128x256xf32>
}
