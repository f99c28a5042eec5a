// The cMoLLM feed-forward layer (docs/models.md §3) in the mix dialect, at the small
// model size (B=8, S=256, d=256, f=1024, N=4 streams), with each of the four
// gatings, a ReLU mixture Theorem 4.1 does not cover, and a shared bias
// behind a sigmoid gate that it covers with the gate-summed bias.
//
//   mix-opt examples/cmollm-ffn.mlir --mix-prove-dynamic-conv \
//       --mix-moe-to-dynamic-conv --mix-select-mixing-order

// simple: g = softmax(m W^T + b); U = sum_k g_k (m K_k^T + b_k).
func.func @ffn_simple(%m: tensor<8x256x256xf32>,
                      %gw: tensor<4x256xf32>, %gb: tensor<4xf32>,
                      %k: tensor<4x1024x256xf32>, %kb: tensor<4x1024xf32>,
                      %pw: tensor<256x1024xf32>, %pb: tensor<256xf32>)
    -> (tensor<8x256x256xf32>, tensor<f32>) {
  %g = mix.gate simple softmax %m, %gw, %gb : (tensor<8x256x256xf32>, tensor<4x256xf32>, tensor<4xf32>) -> tensor<8x256x4xf32>
  %u = mix.mixture %m, %g kernels %k bias %kb : (tensor<8x256x256xf32>, tensor<8x256x4xf32>, tensor<4x1024x256xf32>, tensor<4x1024xf32>) -> tensor<8x256x1024xf32>
  %a = mix.gelu %u : tensor<8x256x1024xf32>
  %y = mix.linear %a, %pw, %pb : (tensor<8x256x1024xf32>, tensor<256x1024xf32>, tensor<256xf32>) -> tensor<8x256x256xf32>
  %aux = mix.balance_loss %g alpha 1.000000e-02 : tensor<8x256x4xf32> -> tensor<f32>
  return %y, %aux : tensor<8x256x256xf32>, tensor<f32>
}

// multi_head: 4 gate heads, head j weights output channels [256 j, 256 (j+1)).
func.func @ffn_multi_head(%m: tensor<8x256x256xf32>,
                          %gw: tensor<4x4x64xf32>, %gb: tensor<4x4xf32>,
                          %k: tensor<4x1024x256xf32>, %kb: tensor<4x1024xf32>)
    -> tensor<8x256x1024xf32> {
  %g = mix.gate multi_head softmax %m, %gw, %gb : (tensor<8x256x256xf32>, tensor<4x4x64xf32>, tensor<4x4xf32>) -> tensor<8x256x4x4xf32>
  %u = mix.mixture %m, %g kernels %k bias %kb : (tensor<8x256x256xf32>, tensor<8x256x4x4xf32>, tensor<4x1024x256xf32>, tensor<4x1024xf32>) -> tensor<8x256x1024xf32>
  return %u : tensor<8x256x1024xf32>
}

// context_aware: the causal prefix mean modulates the gate's input.
func.func @ffn_context_aware(%m: tensor<8x256x256xf32>,
                             %f1: tensor<64x256xf32>, %b1: tensor<64xf32>,
                             %f2: tensor<256x64xf32>, %b2: tensor<256xf32>,
                             %lw: tensor<256xf32>, %lb: tensor<256xf32>,
                             %gw: tensor<4x256xf32>, %gb: tensor<4xf32>,
                             %k: tensor<4x1024x256xf32>, %kb: tensor<4x1024xf32>)
    -> tensor<8x256x1024xf32> {
  %c = mix.prefix_mean %m : tensor<8x256x256xf32>
  %h = mix.linear %c, %f1, %b1 : (tensor<8x256x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<8x256x64xf32>
  %r = mix.relu %h : tensor<8x256x64xf32>
  %o = mix.linear %r, %f2, %b2 : (tensor<8x256x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<8x256x256xf32>
  %mod = mix.sigmoid %o : tensor<8x256x256xf32>
  %g = mix.gate context_aware softmax %m, %gw, %gb modulation %mod norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<8x256x256xf32>, tensor<4x256xf32>, tensor<4xf32>, tensor<8x256x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<8x256x4xf32>
  %u = mix.mixture %m, %g kernels %k bias %kb : (tensor<8x256x256xf32>, tensor<8x256x4xf32>, tensor<4x1024x256xf32>, tensor<4x1024xf32>) -> tensor<8x256x1024xf32>
  return %u : tensor<8x256x1024xf32>
}

// adaptive: a sensitivity from the prefix mean scales the gate logits.
func.func @ffn_adaptive(%m: tensor<8x256x256xf32>, %s: tensor<8x256x1xf32>,
                        %gw: tensor<4x256xf32>, %gb: tensor<4xf32>,
                        %k: tensor<4x1024x256xf32>, %kb: tensor<4x1024xf32>)
    -> tensor<8x256x1024xf32> {
  %g = mix.gate adaptive softmax %m, %gw, %gb scale %s : (tensor<8x256x256xf32>, tensor<4x256xf32>, tensor<4xf32>, tensor<8x256x1xf32>) -> tensor<8x256x4xf32>
  %u = mix.mixture %m, %g kernels %k bias %kb : (tensor<8x256x256xf32>, tensor<8x256x4xf32>, tensor<4x1024x256xf32>, tensor<4x1024xf32>) -> tensor<8x256x1024xf32>
  return %u : tensor<8x256x1024xf32>
}

// Not covered: ReLU experts (Corollary 4.2). Covered although the gate rows
// need not sum to one: a bias shared by all experts behind a sigmoid gate
// leaves the mixture as (sum_k g_k) c, the convolution's gate-summed bias.
func.func @relu_and_sigmoid_shared_bias(%m: tensor<8x256x256xf32>,
                            %gw: tensor<4x256xf32>, %gb: tensor<4xf32>,
                            %k: tensor<4x1024x256xf32>, %c: tensor<1024xf32>)
    -> (tensor<8x256x1024xf32>, tensor<8x256x1024xf32>) {
  %g = mix.gate simple softmax %m, %gw, %gb : (tensor<8x256x256xf32>, tensor<4x256xf32>, tensor<4xf32>) -> tensor<8x256x4xf32>
  %relu = mix.mixture %m, %g experts(%k) : (tensor<8x256x256xf32>, tensor<8x256x4xf32>, tensor<4x1024x256xf32>) -> tensor<8x256x1024xf32> {
  ^bb0(%x: tensor<8x256x256xf32>, %kk: tensor<1024x256xf32>):
    %y = mix.linear %x, %kk : (tensor<8x256x256xf32>, tensor<1024x256xf32>) -> tensor<8x256x1024xf32>
    %z = mix.relu %y : tensor<8x256x1024xf32>
    mix.yield %z : tensor<8x256x1024xf32>
  }
  %sg = mix.gate simple sigmoid %m, %gw, %gb : (tensor<8x256x256xf32>, tensor<4x256xf32>, tensor<4xf32>) -> tensor<8x256x4xf32>
  %shared = mix.mixture %m, %sg kernels %k shared_bias %c : (tensor<8x256x256xf32>, tensor<8x256x4xf32>, tensor<4x1024x256xf32>, tensor<1024xf32>) -> tensor<8x256x1024xf32>
  return %relu, %shared : tensor<8x256x1024xf32>, tensor<8x256x1024xf32>
}
