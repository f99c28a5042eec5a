// The fused cross-entropy ops on buffers, as bufferization leaves them,
// for mix-cross-entropy-kernels and the emulator (cross_entropy_check.py).
//
// i32: B=2, S=3 rows of V=300 logits (a 256-thread block's stride covers
//      a row once and 44 elements twice).
// i64: B=3, S=2 rows of V=1000, 64-bit targets.

func.func @fwd_i32(%logits: memref<2x3x300xf32>, %targets: memref<2x3xi32>,
                   %ce: memref<f32>, %lse: memref<2x3xf32>) {
  mix.fused_cross_entropy_buffers %logits, %targets into %ce, %lse
      : memref<2x3x300xf32>, memref<2x3xi32>, memref<f32>, memref<2x3xf32>
  return
}

func.func @grad_i32(%logits: memref<2x3x300xf32>, %targets: memref<2x3xi32>,
                    %lse: memref<2x3xf32>, %dce: memref<f32>,
                    %dlogits: memref<2x3x300xf32>) {
  mix.fused_cross_entropy_grad_buffers %logits, %targets, %lse, %dce
      into %dlogits : memref<2x3x300xf32>, memref<2x3xi32>, memref<2x3xf32>,
                      memref<f32>, memref<2x3x300xf32>
  return
}

// The adjoint as a constant folded into the op (no dresult buffer).
func.func @grad_i32_scaled(%logits: memref<2x3x300xf32>,
                           %targets: memref<2x3xi32>, %lse: memref<2x3xf32>,
                           %dlogits: memref<2x3x300xf32>) {
  mix.fused_cross_entropy_grad_buffers %logits, %targets, %lse into %dlogits
      scale 7.500000e-01 : memref<2x3x300xf32>, memref<2x3xi32>,
                           memref<2x3xf32>, memref<2x3x300xf32>
  return
}

func.func @fwd_i64(%logits: memref<3x2x1000xf32>, %targets: memref<3x2xi64>,
                   %ce: memref<f32>, %lse: memref<3x2xf32>) {
  mix.fused_cross_entropy_buffers %logits, %targets into %ce, %lse
      : memref<3x2x1000xf32>, memref<3x2xi64>, memref<f32>, memref<3x2xf32>
  return
}

func.func @grad_i64(%logits: memref<3x2x1000xf32>, %targets: memref<3x2xi64>,
                    %lse: memref<3x2xf32>, %dce: memref<f32>,
                    %dlogits: memref<3x2x1000xf32>) {
  mix.fused_cross_entropy_grad_buffers %logits, %targets, %lse, %dce
      into %dlogits : memref<3x2x1000xf32>, memref<3x2xi64>, memref<3x2xf32>,
                      memref<f32>, memref<3x2x1000xf32>
  return
}
