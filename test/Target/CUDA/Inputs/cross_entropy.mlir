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

// The loss and its gradient on the same logits, as a training step makes
// them: the backward op runs in the forward op's launch of rows.
func.func @both_i32(%logits: memref<2x3x300xf32>, %targets: memref<2x3xi32>,
                    %dce: memref<f32>, %ce: memref<f32>,
                    %dlogits: memref<2x3x300xf32>) {
  %lse = memref.alloc() : memref<2x3xf32>
  mix.fused_cross_entropy_buffers %logits, %targets into %ce, %lse
      : memref<2x3x300xf32>, memref<2x3xi32>, memref<f32>, memref<2x3xf32>
  mix.fused_cross_entropy_grad_buffers %logits, %targets, %lse, %dce
      into %dlogits : memref<2x3x300xf32>, memref<2x3xi32>, memref<2x3xf32>,
                      memref<f32>, memref<2x3x300xf32>
  memref.dealloc %lse : memref<2x3xf32>
  return
}

// The same with the logits rewritten in between: two launches of rows.
func.func @both_apart(%logits: memref<2x3x300xf32>, %targets: memref<2x3xi32>,
                      %ce: memref<f32>, %dlogits: memref<2x3x300xf32>) {
  %zero = arith.constant 0.0 : f32
  %lse = memref.alloc() : memref<2x3xf32>
  mix.fused_cross_entropy_buffers %logits, %targets into %ce, %lse
      : memref<2x3x300xf32>, memref<2x3xi32>, memref<f32>, memref<2x3xf32>
  linalg.fill ins(%zero : f32) outs(%logits : memref<2x3x300xf32>)
  mix.fused_cross_entropy_grad_buffers %logits, %targets, %lse
      into %dlogits : memref<2x3x300xf32>, memref<2x3xi32>, memref<2x3xf32>,
                      memref<2x3x300xf32>
  memref.dealloc %lse : memref<2x3xf32>
  return
}

// As the training step has them after mix-memory-to-device: the gradient's
// buffer a gpu.alloc (between waits) after the forward op, and the loss's
// own sum in between. The allocation moves up with its waits: one launch
// of rows.
func.func @both_device(%logits: memref<2x3x300xf32>, %targets: memref<2x3xi32>,
                       %ce: memref<f32>, %loss: memref<f32>) {
  %lse = memref.alloc() : memref<2x3xf32>
  mix.fused_cross_entropy_buffers %logits, %targets into %ce, %lse
      : memref<2x3x300xf32>, memref<2x3xi32>, memref<f32>, memref<2x3xf32>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                  iterator_types = []} ins(%ce : memref<f32>) outs(%loss : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %t0 = gpu.wait async
  %dlogits, %t1 = gpu.alloc async [%t0] () : memref<2x3x300xf32>
  gpu.wait [%t1]
  mix.fused_cross_entropy_grad_buffers %logits, %targets, %lse
      into %dlogits : memref<2x3x300xf32>, memref<2x3xi32>, memref<2x3xf32>,
                      memref<2x3x300xf32>
  memref.dealloc %lse : memref<2x3xf32>
  %t2 = gpu.wait async
  %t3 = gpu.dealloc async [%t2] %dlogits : memref<2x3x300xf32>
  gpu.wait [%t3]
  return
}
