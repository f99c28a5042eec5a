// The fused attention ops on buffers, as bufferization leaves them, for
// mix-flash-attention-kernels and the emulator (flash_attention_check.py).
//
// plain:  B=2, S=70 (a full and a partial block of 64 queries), 2 heads of
//         dh=76, padded to 80 for the tensor cores' products (tiles of 32
//         keys: 64 x 80 floats would pass 16 KiB), so
//         the causal walk crosses three tiles, the last one partial.
// prefix: B=4 rows of P=2 streams, S=40, 2 heads of dh=16 (tiles of 64),
//         T_p=70 prefix keys a stream (a full and a partial tile).

func.func @fwd_plain(%qkv: memref<2x70x456xf32>, %out: memref<2x70x152xf32>,
                     %lse: memref<2x2x70xf32>) {
  mix.flash_attention_buffers %qkv into %out, %lse heads 2
      : memref<2x70x456xf32>, memref<2x70x152xf32>, memref<2x2x70xf32>
  return
}

func.func @grad_plain(%qkv: memref<2x70x456xf32>, %out: memref<2x70x152xf32>,
                      %lse: memref<2x2x70xf32>, %dout: memref<2x70x152xf32>,
                      %dqkv: memref<2x70x456xf32>) {
  mix.flash_attention_grad_buffers %qkv, %out, %lse, %dout into %dqkv heads 2
      : memref<2x70x456xf32>, memref<2x70x152xf32>, memref<2x2x70xf32>,
        memref<2x70x152xf32>, memref<2x70x456xf32>
  return
}

func.func @fwd_prefix(%qkv: memref<4x40x96xf32>, %pk: memref<2x2x70x16xf32>,
                      %pv: memref<2x2x70x16xf32>, %out: memref<4x40x32xf32>,
                      %lse: memref<4x2x40xf32>) {
  mix.flash_attention_buffers %qkv prefix(%pk, %pv) into %out, %lse heads 2
      : memref<4x40x96xf32>, memref<2x2x70x16xf32>, memref<2x2x70x16xf32>,
        memref<4x40x32xf32>, memref<4x2x40xf32>
  return
}

func.func @grad_prefix(%qkv: memref<4x40x96xf32>, %pk: memref<2x2x70x16xf32>,
                       %pv: memref<2x2x70x16xf32>, %out: memref<4x40x32xf32>,
                       %lse: memref<4x2x40xf32>, %dout: memref<4x40x32xf32>,
                       %dqkv: memref<4x40x96xf32>,
                       %dpk: memref<2x2x70x16xf32>,
                       %dpv: memref<2x2x70x16xf32>) {
  mix.flash_attention_grad_buffers %qkv prefix(%pk, %pv), %out, %lse, %dout
      into %dqkv prefix(%dpk, %dpv) heads 2
      : memref<4x40x96xf32>, memref<2x2x70x16xf32>, memref<2x2x70x16xf32>,
        memref<4x40x32xf32>, memref<4x2x40xf32>, memref<4x40x32xf32>,
        memref<4x40x96xf32>, memref<2x2x70x16xf32>, memref<2x2x70x16xf32>
  return
}
