// The fused LayerNorm ops on buffers, as bufferization leaves them, for
// mix-layer-norm-kernels and the emulator (layer_norm_check.py).
//
// small: (3, 5, 40): 15 rows narrower than a block, fewer than the 1024
//        row chunks of the backward pass (a chunk a row).
// wide:  (201, 300): rows that a block's stride covers unevenly (two
//        columns a thread in the backward pass, the second in 44 threads),
//        the final fold over two column tiles.
// tall:  (1101, 40): more rows than chunks: 551 chunks of two rows, the
//        last one partial.

func.func @fwd_small(%x: memref<3x5x40xf32>, %w: memref<40xf32>,
                     %b: memref<40xf32>, %y: memref<3x5x40xf32>,
                     %mean: memref<3x5xf32>, %rstd: memref<3x5xf32>) {
  mix.fused_layer_norm_buffers %x, %w, %b into %y, %mean, %rstd eps 1.0e-05
      : memref<3x5x40xf32>, memref<40xf32>, memref<40xf32>,
        memref<3x5x40xf32>, memref<3x5xf32>, memref<3x5xf32>
  return
}

func.func @grad_small(%x: memref<3x5x40xf32>, %w: memref<40xf32>,
                      %mean: memref<3x5xf32>, %rstd: memref<3x5xf32>,
                      %dy: memref<3x5x40xf32>, %dx: memref<3x5x40xf32>,
                      %dw: memref<40xf32>, %db: memref<40xf32>) {
  mix.fused_layer_norm_grad_buffers %x, %w, %mean, %rstd, %dy
      into %dx, %dw, %db
      : memref<3x5x40xf32>, memref<40xf32>, memref<3x5xf32>,
        memref<3x5xf32>, memref<3x5x40xf32>, memref<3x5x40xf32>,
        memref<40xf32>, memref<40xf32>
  return
}

func.func @fwd_tall(%x: memref<1101x40xf32>, %w: memref<40xf32>,
                    %b: memref<40xf32>, %y: memref<1101x40xf32>,
                    %mean: memref<1101xf32>, %rstd: memref<1101xf32>) {
  mix.fused_layer_norm_buffers %x, %w, %b into %y, %mean, %rstd eps 1.0e-05
      : memref<1101x40xf32>, memref<40xf32>, memref<40xf32>,
        memref<1101x40xf32>, memref<1101xf32>, memref<1101xf32>
  return
}

func.func @grad_tall(%x: memref<1101x40xf32>, %w: memref<40xf32>,
                     %mean: memref<1101xf32>, %rstd: memref<1101xf32>,
                     %dy: memref<1101x40xf32>, %dx: memref<1101x40xf32>,
                     %dw: memref<40xf32>, %db: memref<40xf32>) {
  mix.fused_layer_norm_grad_buffers %x, %w, %mean, %rstd, %dy
      into %dx, %dw, %db
      : memref<1101x40xf32>, memref<40xf32>, memref<1101xf32>,
        memref<1101xf32>, memref<1101x40xf32>, memref<1101x40xf32>,
        memref<40xf32>, memref<40xf32>
  return
}

func.func @fwd_wide(%x: memref<201x300xf32>, %w: memref<300xf32>,
                    %b: memref<300xf32>, %y: memref<201x300xf32>,
                    %mean: memref<201xf32>, %rstd: memref<201xf32>) {
  mix.fused_layer_norm_buffers %x, %w, %b into %y, %mean, %rstd eps 1.0e-05
      : memref<201x300xf32>, memref<300xf32>, memref<300xf32>,
        memref<201x300xf32>, memref<201xf32>, memref<201xf32>
  return
}

func.func @grad_wide(%x: memref<201x300xf32>, %w: memref<300xf32>,
                     %mean: memref<201xf32>, %rstd: memref<201xf32>,
                     %dy: memref<201x300xf32>, %dx: memref<201x300xf32>,
                     %dw: memref<300xf32>, %db: memref<300xf32>) {
  mix.fused_layer_norm_grad_buffers %x, %w, %mean, %rstd, %dy
      into %dx, %dw, %db
      : memref<201x300xf32>, memref<300xf32>, memref<201xf32>,
        memref<201xf32>, memref<201x300xf32>, memref<201x300xf32>,
        memref<300xf32>, memref<300xf32>
  return
}

// residual: (201, 300) as a transformer block has them: the residual add
// that makes the LayerNorm's input runs in the forward kernel (its sum is
// still written, for what follows), and the add of the residual's gradient
// to dinput in the backward kernel's store (dinput itself is not written).
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @fwd_residual(%a: memref<201x300xf32>, %r: memref<201x300xf32>,
                        %w: memref<300xf32>, %b: memref<300xf32>,
                        %x: memref<201x300xf32>, %y: memref<201x300xf32>,
                        %mean: memref<201xf32>, %rstd: memref<201xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %r : memref<201x300xf32>, memref<201x300xf32>)
      outs(%x : memref<201x300xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  }
  mix.fused_layer_norm_buffers %x, %w, %b into %y, %mean, %rstd eps 1.0e-05
      : memref<201x300xf32>, memref<300xf32>, memref<300xf32>,
        memref<201x300xf32>, memref<201xf32>, memref<201xf32>
  return
}

func.func @grad_residual(%x: memref<201x300xf32>, %w: memref<300xf32>,
                         %mean: memref<201xf32>, %rstd: memref<201xf32>,
                         %dy: memref<201x300xf32>, %dres: memref<201x300xf32>,
                         %out: memref<201x300xf32>, %dw: memref<300xf32>,
                         %db: memref<300xf32>) {
  %dx = memref.alloc() : memref<201x300xf32>
  mix.fused_layer_norm_grad_buffers %x, %w, %mean, %rstd, %dy
      into %dx, %dw, %db
      : memref<201x300xf32>, memref<300xf32>, memref<201xf32>,
        memref<201xf32>, memref<201x300xf32>, memref<201x300xf32>,
        memref<300xf32>, memref<300xf32>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%dres, %dx : memref<201x300xf32>, memref<201x300xf32>)
      outs(%out : memref<201x300xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  }
  memref.dealloc %dx : memref<201x300xf32>
  return
}

// The same, with the add's output read by the LayerNorm (an add in place
// of its operand): nothing moves into the kernels.
func.func @fwd_in_place(%a: memref<201x300xf32>, %x: memref<201x300xf32>,
                        %w: memref<300xf32>, %b: memref<300xf32>,
                        %y: memref<201x300xf32>, %mean: memref<201xf32>,
                        %rstd: memref<201xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %x : memref<201x300xf32>, memref<201x300xf32>)
      outs(%x : memref<201x300xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  }
  mix.fused_layer_norm_buffers %x, %w, %b into %y, %mean, %rstd eps 1.0e-05
      : memref<201x300xf32>, memref<300xf32>, memref<300xf32>,
        memref<201x300xf32>, memref<201xf32>, memref<201xf32>
  return
}

// The residual add's operand a temporary freed right after the add (its
// last reader): it is freed after the LayerNorm's kernel instead, which
// reads it.
func.func @fwd_residual_freed(%a: memref<201x300xf32>, %r: memref<201x300xf32>,
                              %w: memref<300xf32>, %b: memref<300xf32>,
                              %x: memref<201x300xf32>, %y: memref<201x300xf32>,
                              %mean: memref<201xf32>, %rstd: memref<201xf32>) {
  %t = memref.alloc() : memref<201x300xf32>
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<201x300xf32>) outs(%t : memref<201x300xf32>) {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %t : memref<201x300xf32>, memref<201x300xf32>)
      outs(%x : memref<201x300xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<201x300xf32>
  mix.fused_layer_norm_buffers %x, %w, %b into %y, %mean, %rstd eps 1.0e-05
      : memref<201x300xf32>, memref<300xf32>, memref<300xf32>,
        memref<201x300xf32>, memref<201xf32>, memref<201xf32>
  return
}

// The residual stream's gradient updated in place: the add's output is
// the buffer of the LayerNorm's incoming gradient.
func.func @grad_residual_in_place(%x: memref<201x300xf32>, %w: memref<300xf32>,
                                  %mean: memref<201xf32>, %rstd: memref<201xf32>,
                                  %dres: memref<201x300xf32>, %dw: memref<300xf32>,
                                  %db: memref<300xf32>, %out: memref<201x300xf32>) {
  %dy = memref.alloc() : memref<201x300xf32>
  memref.copy %dres, %dy : memref<201x300xf32> to memref<201x300xf32>
  %flat = memref.collapse_shape %dy [[0, 1]] : memref<201x300xf32> into memref<60300xf32>
  %rows = memref.expand_shape %flat [[0, 1]] output_shape [201, 300] : memref<60300xf32> into memref<201x300xf32>
  %dx = memref.alloc() : memref<201x300xf32>
  mix.fused_layer_norm_grad_buffers %x, %w, %mean, %rstd, %rows
      into %dx, %dw, %db
      : memref<201x300xf32>, memref<300xf32>, memref<201xf32>,
        memref<201xf32>, memref<201x300xf32>, memref<201x300xf32>,
        memref<300xf32>, memref<300xf32>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%dres, %dx : memref<201x300xf32>, memref<201x300xf32>)
      outs(%dy : memref<201x300xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  }
  memref.dealloc %dx : memref<201x300xf32>
  memref.copy %dy, %out : memref<201x300xf32> to memref<201x300xf32>
  memref.dealloc %dy : memref<201x300xf32>
  return
}

// A mixture layer's backward pass: the LayerNorm's incoming gradient is
// the sum of two input gradients (the gate's and the experts'), written
// into a buffer that the residual gradient's add then updates in place;
// one of the two is a temporary freed between the sum and the LayerNorm.
// The sum runs where the kernel reads the incoming gradient.
func.func @grad_sum(%x: memref<201x300xf32>, %w: memref<300xf32>,
                    %mean: memref<201xf32>, %rstd: memref<201xf32>,
                    %g1: memref<201x300xf32>, %src: memref<201x300xf32>,
                    %dres: memref<201x300xf32>, %dw: memref<300xf32>,
                    %db: memref<300xf32>, %out: memref<201x300xf32>) {
  %g2 = memref.alloc() : memref<201x300xf32>
  memref.copy %src, %g2 : memref<201x300xf32> to memref<201x300xf32>
  %s = memref.alloc() : memref<201x300xf32>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%g1, %g2 : memref<201x300xf32>, memref<201x300xf32>)
      outs(%s : memref<201x300xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.addf %u, %v : f32
    linalg.yield %t : f32
  }
  memref.dealloc %g2 : memref<201x300xf32>
  %dx = memref.alloc() : memref<201x300xf32>
  mix.fused_layer_norm_grad_buffers %x, %w, %mean, %rstd, %s
      into %dx, %dw, %db
      : memref<201x300xf32>, memref<300xf32>, memref<201xf32>,
        memref<201xf32>, memref<201x300xf32>, memref<201x300xf32>,
        memref<300xf32>, memref<300xf32>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%dres, %dx : memref<201x300xf32>, memref<201x300xf32>)
      outs(%s : memref<201x300xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.addf %u, %v : f32
    linalg.yield %t : f32
  }
  memref.dealloc %dx : memref<201x300xf32>
  memref.copy %s, %out : memref<201x300xf32> to memref<201x300xf32>
  memref.dealloc %s : memref<201x300xf32>
  return
}

// The same sum read again after the LayerNorm (copied out): it stays a
// launch of its own, which the kernel reads.
func.func @grad_sum_kept(%x: memref<201x300xf32>, %w: memref<300xf32>,
                         %mean: memref<201xf32>, %rstd: memref<201xf32>,
                         %g1: memref<201x300xf32>, %g2: memref<201x300xf32>,
                         %dx: memref<201x300xf32>, %dw: memref<300xf32>,
                         %db: memref<300xf32>, %sum: memref<201x300xf32>) {
  %s = memref.alloc() : memref<201x300xf32>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%g1, %g2 : memref<201x300xf32>, memref<201x300xf32>)
      outs(%s : memref<201x300xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %t = arith.addf %u, %v : f32
    linalg.yield %t : f32
  }
  mix.fused_layer_norm_grad_buffers %x, %w, %mean, %rstd, %s
      into %dx, %dw, %db
      : memref<201x300xf32>, memref<300xf32>, memref<201xf32>,
        memref<201xf32>, memref<201x300xf32>, memref<201x300xf32>,
        memref<300xf32>, memref<300xf32>
  memref.copy %s, %sum : memref<201x300xf32> to memref<201x300xf32>
  memref.dealloc %s : memref<201x300xf32>
  return
}
