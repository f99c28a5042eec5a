// Reductions as the models have them (linalg.generic on buffers, a
// reassociable combiner, the output initialized by linalg.fill), which
// mix-block-reductions gives a block of threads a row. The input k holds
// 1, 2, 3, ... (run_emulated.py), so every result has a closed form.

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// out[r] = 10 + sum_j a[r, j]: 100 elements a row (a block of 128 threads,
// 4 warps, the last partly idle).
func.func @row_sums(%a: memref<3x100xf32>, %out: memref<3xf32>) {
  %init = arith.constant 10.0 : f32
  linalg.fill ins(%init : f32) outs(%out : memref<3xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<3x100xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// 1000 elements a row: 256 threads, each folding 4 elements (the last 3).
func.func @long_rows(%a: memref<2x1000xf32>, %out: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x1000xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// The largest element of each row of 40 (one warp and a bit).
func.func @row_max(%a: memref<2x40xf32>, %out: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x40xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// Every element to one scalar: both loops reduce, flattened to 300.
func.func @total(%a: memref<10x30xf32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<f32>)
  linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<10x30xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// A payload that uses the reduced index: out[r] = sum_j (a[r, j] - j)^2.
func.func @squares(%a: memref<2x64xf32>, %out: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x64xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %d = arith.subf %x, %jf : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %sq, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// Sums over the rows for each column (the innermost loop is parallel):
// 100 rows of 40 columns, two tiles of 32 columns, one launch.
func.func @column_sums(%a: memref<100x40xf32>, %out: memref<40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<40xf32>)
  linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<100x40xf32>) outs(%out : memref<40xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// 2000 rows of 3 columns: the rows split over 15 blocks, whose partial
// sums a second launch folds.
func.func @split_columns(%a: memref<2000x3xf32>, %out: memref<3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<3xf32>)
  linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<2000x3xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// A parallel loop outside the reduced one: out[b, c] = sum_r a[b, r, c].
func.func @batched_columns(%a: memref<2x50x33xf32>, %out: memref<2x33xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2x33xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a : memref<2x50x33xf32>) outs(%out : memref<2x33xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// Split over blocks with more output elements (2 x 289) than the last
// block has threads: out[b, c] = sum_r (a[b, r, c] mod 4).
func.func @split_batched_columns(%a: memref<2x1024x289xf32>, %out: memref<2x289xf32>) {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2x289xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a : memref<2x1024x289xf32>) outs(%out : memref<2x289xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.remf %x, %four : f32
    %s = arith.addf %m, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// An elementwise producer read whole by a rows reduction (through a
// reshape) and by a copy in between: the reduction's kernel runs the
// producer where the producer was and stores its result.
// p = a mod 4, q = p, out[r] = sum_{i, j} p[r, 8 i + j].
func.func @produced_rows(%a: memref<128x64xf32>, %p: memref<128x64xf32>,
                         %q: memref<128x64xf32>, %out: memref<128xf32>) {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<128x64xf32>) outs(%p : memref<128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.remf %x, %four : f32
    linalg.yield %m : f32
  }
  memref.copy %p, %q : memref<128x64xf32> to memref<128x64xf32>
  %v = memref.expand_shape %p [[0], [1, 2]] output_shape [128, 8, 8] : memref<128x64xf32> into memref<128x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%v : memref<128x8x8xf32>) outs(%out : memref<128xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// An elementwise producer into a temporary that a split column reduction
// reads: out[b, c] = sum_r (a[b, r, c] mod 4).
func.func @produced_split_columns(%a: memref<64x256x32xf32>, %out: memref<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %p = memref.alloc() : memref<64x256x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<64x256x32xf32>) outs(%p : memref<64x256x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.remf %x, %four : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<64x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%p : memref<64x256x32xf32>) outs(%out : memref<64x32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<64x256x32xf32>
  return
}
