// The fused LayerNorm ops on buffers, as bufferization leaves them, for
// mix-layer-norm-kernels and the emulator (layer_norm_check.py).
//
// small: (3, 5, 40): 15 rows narrower than a block, fewer than the 128
//        row chunks of the column sums (a chunk a row).
// wide:  (201, 300): rows that a block's stride covers unevenly, columns
//        over two tiles, 101 chunks of 2 rows (the last one partial).

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
