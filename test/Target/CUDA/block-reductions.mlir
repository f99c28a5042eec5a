// RUN: mix-opt %s --mix-block-reductions | FileCheck %s
// RUN: mix-opt %s --mix-block-reductions | FileCheck %s --check-prefix=GLOBALS

// mix-block-reductions: a reduction with enough elements and a combiner it
// can split becomes a launch with a block of threads a row (the innermost
// loop reduces) or a block a tile of 32 columns (it is parallel); the
// others are left to the generic mapping.

#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// 6 rows of 100: 6 blocks of 128 threads (100 rounded up to whole warps),
// 4 warps' values in workgroup memory. Each thread folds elements tid,
// tid + 128, ... from the identity; the warps shuffle (xor 16, 8, 4, 2, 1),
// lane 0 of each stores, a barrier, the warps' values are shuffled again
// (lanes past the 4th take the identity), and thread 0 folds the result
// into the output.
// CHECK-LABEL: func.func @row_sums
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[THREADS:.*]] = arith.constant 128 : index
// CHECK:         gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], {{.*}} threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], {{.*}} workgroup(%[[SMEM:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[PART:.*]] = scf.for %[[K:.*]] = %[[T]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32)
// CHECK:             %[[X:.*]] = memref.load %{{.*}}[%[[B]], %[[K]]] : memref<6x100xf32>
// CHECK:             %[[S:.*]] = arith.addf %[[ACC]], %[[X]] fastmath<reassoc> : f32
// CHECK:             scf.yield %[[S]]
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %[[SMEM]]
// CHECK:           gpu.barrier
// CHECK:           memref.load %[[SMEM]]
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           scf.if
// CHECK:             %[[OLD:.*]] = memref.load %{{.*}}[%[[B]]] : memref<6xf32>
// CHECK:             %[[NEW:.*]] = arith.addf %{{.*}}, %[[OLD]] fastmath<reassoc> : f32
// CHECK:             memref.store %[[NEW]], %{{.*}}[%[[B]]] : memref<6xf32>
// CHECK-NOT:     linalg.generic
func.func @row_sums(%a: memref<6x100xf32>, %out: memref<6xf32>) {
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<6x100xf32>) outs(%out : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// One warp (40 elements round to 64: two warps; 32 would be one): a max
// from -inf.
// CHECK-LABEL: func.func @row_max
// CHECK:         gpu.launch
// CHECK:           arith.constant 0xFF800000 : f32
// CHECK:           arith.maximumf
func.func @row_max(%a: memref<2x40xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x40xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// Exactly one warp: no workgroup memory, no barrier.
// CHECK-LABEL: func.func @one_warp
// CHECK:         gpu.launch
// CHECK-NOT:       workgroup
// CHECK-NOT:       gpu.barrier
// CHECK:           gpu.terminator
func.func @one_warp(%a: memref<2x32xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x32xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// A sum of 64 values to one scalar: one block, of 256 threads however few
// the values (merged into an independent neighbour's launch of that size
// later), 8 warps' values in workgroup memory.
// CHECK-LABEL: func.func @to_scalar
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[THREADS:.*]] = arith.constant 256 : index
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE]], {{.*}} threads({{.*}}) in (%{{.*}} = %[[THREADS]], {{.*}} workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
func.func @to_scalar(%a: memref<64xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%a : memref<64xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// Left alone: a float sum that may not be reassociated, fewer than 32
// elements a row, a 64-bit element.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     gpu.launch
func.func @left_alone(%a: memref<2x64xf32>, %b: memref<2x16xf32>, %d: memref<2x64xf64>,
                      %out: memref<2xf32>, %out64: memref<2xf64>) {
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x64xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<2x16xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : memref<2x64xf64>) outs(%out64 : memref<2xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %s = arith.addf %x, %acc fastmath<reassoc> : f64
    linalg.yield %s : f64
  }
  return
}

// A reduction over the outer loop (a sum over rows for each of 40
// columns): blocks of 32 columns by 8 groups of rows, 2 tiles; 100 rows
// are too few to split (each of the 8 groups keeps at least 16 rows), so
// one launch, whose groups meet in workgroup memory.
// CHECK-LABEL: func.func @column_sums
// CHECK-DAG:     %[[TILES:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[LANES:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[GROUPS:.*]] = arith.constant 8 : index
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[TILES]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %[[LANES]], %{{.*}} = %[[GROUPS]], %{{.*}} = %c1{{.*}}) workgroup(%{{.*}} : memref<8x32xf32, #gpu.address_space<workgroup>>)
// CHECK:           gpu.barrier
// CHECK-NOT:     gpu.alloc
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @column_sums(%a: memref<100x40xf32>, %out: memref<40xf32>) {
  linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<100x40xf32>) outs(%out : memref<40xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// 4096 rows of 2 columns: one tile, so the rows are split over 32 blocks
// (4096 / (8 x 16): each group keeps 16 rows) into a partial buffer of 32
// x 1 x 2, which the last block to finish folds into the output in the same
// launch: each block fences its partial values (release), synchronizes,
// and its thread 0 fences again and takes a ticket from a
// zero-initialised counter; the
// block with ticket 31 fences (acquire), its threads fold the 32 partial
// values of each column in order, and thread 0 sets the counter back to 0.
// The buffer is freed after the launch.
// CHECK-LABEL: func.func @split_columns
// CHECK:         %{{.*}}, %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<32x1x2xf32>
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c32{{.*}}) {{.*}} workgroup({{.*}}, %[[FLAG:.*]] : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK:           memref.store %{{.*}} : memref<32x1x2xf32>
// CHECK:           %[[COUNTER:.*]] = memref.get_global @__mix_blocks_done : memref<1xi32>
// CHECK:           llvm.fence syncscope("device") release
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      scf.if %[[FIRST:.*]] {
// CHECK-NEXT:        llvm.fence syncscope("device") release
// CHECK:             %[[TICKET:.*]] = memref.atomic_rmw addi %{{.*}}, %[[COUNTER]][%{{.*}}]
// CHECK:             %[[LAST:.*]] = arith.cmpi eq, %[[TICKET]], %c31_i32
// CHECK:             %[[EXT:.*]] = arith.extui %[[LAST]]
// CHECK:             memref.store %[[EXT]], %[[FLAG]]
// CHECK:           gpu.barrier
// CHECK:           %[[READ:.*]] = memref.load %[[FLAG]]
// CHECK:           %[[ENTER:.*]] = arith.cmpi ne, %[[READ]]
// CHECK:           scf.if %[[ENTER]] {
// CHECK-NEXT:        llvm.fence syncscope("device") acquire
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step %c256
// CHECK:               scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c1
// CHECK:                 memref.load %{{.*}} : memref<32x1x2xf32>
// CHECK:               memref.store %{{.*}} : memref<2xf32>
// CHECK:             scf.if %[[FIRST]] {
// CHECK:               memref.store %c0_i32{{.*}}, %[[COUNTER]]
// CHECK-NOT:     gpu.launch
// CHECK:         gpu.dealloc async
// The counter is a global of the module, one a split launch (the names
// made unique).
// GLOBALS:     memref.global "private" @__mix_blocks_done : memref<1xi32> = dense<0>
// GLOBALS-NOT: memref.global
// GLOBALS:     func.func @split_columns
// GLOBALS:       memref.get_global @__mix_blocks_done :
func.func @split_columns(%a: memref<4096x2xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<4096x2xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// An output filled with the combiner's identity just before (a gradient's
// zeros; a max's -inf): the fill goes and the result is stored over it,
// not folded into it. A fill of anything else, or one with a write of the
// output in between, stays and the result is folded in.
// CHECK-LABEL: func.func @identity_filled
//   CHECK-NOT:   linalg.fill
//       CHECK:   gpu.launch
//       CHECK:     scf.if
//   CHECK-NOT:       memref.load %{{.*}} : memref<40xf32>
//       CHECK:       memref.store %{{.*}} : memref<40xf32>
//       CHECK:   gpu.launch
//       CHECK:     scf.if
//   CHECK-NOT:       memref.load %{{.*}} : memref<2xf32>
//       CHECK:       memref.store %{{.*}} : memref<2xf32>
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<6xf32>)
//       CHECK:   gpu.launch
//       CHECK:       memref.load %{{.*}} : memref<6xf32>
//       CHECK:       memref.store %{{.*}} : memref<6xf32>
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<2xf32>)
//       CHECK:   memref.store
//       CHECK:   gpu.launch
//       CHECK:       memref.load %{{.*}} : memref<2xf32>
//       CHECK:   return
func.func @identity_filled(%a: memref<100x40xf32>, %out: memref<40xf32>,
                           %b: memref<2x40xf32>, %max: memref<2xf32>,
                           %c: memref<6x100xf32>, %ones: memref<6xf32>,
                           %late: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %i0 = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%out : memref<40xf32>)
  linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<100x40xf32>) outs(%out : memref<40xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%ninf : f32) outs(%max : memref<2xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<2x40xf32>) outs(%max : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%one : f32) outs(%ones : memref<6xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<6x100xf32>) outs(%ones : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%ninf : f32) outs(%late : memref<2xf32>)
  memref.store %one, %late[%i0] : memref<2xf32>
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<2x40xf32>) outs(%late : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// Work on other buffers between the fill and the reduction (a gradient's
// zeros made several kernels before its column sums) leaves the fill the
// output's previous access: it goes.
// CHECK-LABEL: func.func @filled_apart
//   CHECK-NOT:   linalg.fill
//       CHECK:   linalg.generic
//       CHECK:   gpu.launch
//   CHECK-NOT:       memref.load %{{.*}} : memref<40xf32>
//       CHECK:       memref.store %{{.*}} : memref<40xf32>
func.func @filled_apart(%a: memref<100x40xf32>, %out: memref<40xf32>,
                        %x: memref<6xf32>, %y: memref<6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<40xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<6xf32>) outs(%y : memref<6xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<100x40xf32>) outs(%out : memref<40xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// Siblings: a mixture's backward step. From dX (H=2, T=3, N=2, d=40) the
// gate's gradient sums over d (a row reduction) and the input's over H and
// N (a column reduction that keeps d). One launch does both in one pass
// over dX: a block a token (3 blocks of 64 threads), an accumulator a
// column of d in workgroup memory (set to the identity, then folded by the
// one thread that owns the column), and for each (h, n) in turn a block
// reduction of the rows' sums, stored by thread 0 over the identity fill,
// and a barrier before the next (h, n) reuses the warps' buffer. dX is
// loaded once for both. At the end each thread stores its columns.
#x4 = affine_map<(h, t, n, c) -> (h, t, n, c)>
#m4 = affine_map<(h, t, n, c) -> (0, t, 0, c)>
#g4 = affine_map<(h, t, n, c) -> (h, t, n, 0)>
// CHECK-LABEL: func.func @siblings
// CHECK-SAME:    (%[[DX:.*]]: memref<2x3x2x40xf32>, %[[M:.*]]: memref<1x3x1x40xf32>, %[[G:.*]]: memref<2x3x2x1xf32>, %[[DG:.*]]: memref<2x3x2x1xf32>, %[[DM:.*]]: memref<1x3x1x40xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c3{{.*}}, {{.*}} threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64{{.*}}, {{.*}} workgroup(%[[ACC:.*]] : memref<40xf32, #gpu.address_space<workgroup>>, %[[WARPS:.*]] : memref<2xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for %[[C0:.*]] = %[[T]] to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        memref.store %{{.*}}, %[[ACC]][%[[C0]]]
// CHECK:           scf.for %[[O:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             %[[N:.*]] = arith.remui %[[O]]
// CHECK:             %[[H:.*]] = arith.divui %[[O]]
// CHECK:             scf.for %[[C:.*]] = %[[T]] to {{.*}} iter_args
// CHECK-NEXT:          %[[X:.*]] = memref.load %[[DX]][%[[H]], %[[B]], %[[N]], %[[C]]]
// CHECK:               %{{.*}} = memref.load %[[M]]
// CHECK:               memref.load %[[ACC]][%[[C]]]
// CHECK-NOT:           memref.load %[[DX]]
// CHECK:               memref.load %[[G]][%[[H]], %[[B]], %[[N]]
// CHECK:               memref.store %{{.*}}, %[[ACC]][%[[C]]]
// CHECK-COUNT-5:     gpu.shuffle  xor
// CHECK:             gpu.barrier
// CHECK-COUNT-5:     gpu.shuffle  xor
// CHECK:             scf.if
// CHECK:               memref.store %{{.*}}, %[[DG]][%[[H]], %[[B]], %[[N]], %{{.*}}]
// CHECK:             gpu.barrier
// CHECK:           scf.for %[[C2:.*]] = %[[T]] to
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[ACC]][%[[C2]]]
// CHECK:             memref.store %[[V]], %[[DM]][%{{.*}}, %[[B]], %{{.*}}, %[[C2]]]
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     gpu.launch
func.func @siblings(%dx: memref<2x3x2x40xf32>, %m: memref<1x3x1x40xf32>, %g: memref<2x3x2x1xf32>, %dg: memref<2x3x2x1xf32>, %dm: memref<1x3x1x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dg : memref<2x3x2x1xf32>)
  linalg.generic {indexing_maps = [#x4, #m4, #g4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%dx, %m : memref<2x3x2x40xf32>, memref<1x3x1x40xf32>) outs(%dg : memref<2x3x2x1xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dm : memref<1x3x1x40xf32>)
  linalg.generic {indexing_maps = [#x4, #g4, #m4], iterator_types = ["reduction", "parallel", "reduction", "parallel"]}
      ins(%dx, %g : memref<2x3x2x40xf32>, memref<2x3x2x1xf32>) outs(%dm : memref<1x3x1x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// Not siblings, each lowered alone: something between them writes what
// the first reads (dX), or one reads the other's output.
// CHECK-LABEL: func.func @siblings_apart
// CHECK-COUNT-2: gpu.launch
// CHECK-LABEL: func.func @sibling_reads_output
// CHECK-COUNT-2: gpu.launch
func.func @siblings_apart(%dx: memref<2x3x2x40xf32>, %m: memref<1x3x1x40xf32>, %g: memref<2x3x2x1xf32>, %dg: memref<2x3x2x1xf32>, %dm: memref<1x3x1x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#x4, #m4, #g4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%dx, %m : memref<2x3x2x40xf32>, memref<1x3x1x40xf32>) outs(%dg : memref<2x3x2x1xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x3x2x40xf32>)
  linalg.generic {indexing_maps = [#x4, #g4, #m4], iterator_types = ["reduction", "parallel", "reduction", "parallel"]}
      ins(%dx, %g : memref<2x3x2x40xf32>, memref<2x3x2x1xf32>) outs(%dm : memref<1x3x1x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}
func.func @sibling_reads_output(%dx: memref<2x3x2x40xf32>, %m: memref<1x3x1x40xf32>, %dg: memref<2x3x2x1xf32>, %dm: memref<1x3x1x40xf32>) {
  linalg.generic {indexing_maps = [#x4, #m4, #g4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%dx, %m : memref<2x3x2x40xf32>, memref<1x3x1x40xf32>) outs(%dg : memref<2x3x2x1xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x4, #g4, #m4], iterator_types = ["reduction", "parallel", "reduction", "parallel"]}
      ins(%dx, %dg : memref<2x3x2x40xf32>, memref<2x3x2x1xf32>) outs(%dm : memref<1x3x1x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// An elementwise producer whose result a reduction reads whole, each
// element once: the reduction's launch goes to the producer's place and
// runs it where it reads its result (storing it there for the other
// readers, here a copy in between), when its grid has at least 128
// blocks, or when the elements are few enough for a smaller grid to
// compute them in at most 16 steps a thread (here 64 blocks of up to 256
// threads: 262144 elements). Not when there are more than that for a
// smaller grid (64 x 8192), nor when something in between may touch the
// reduction's output (a call).
// CHECK-LABEL: func.func @producer_fused
// CHECK-NOT:     linalg.generic
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c128
// CHECK:           %[[X:.*]] = memref.load %arg0
// CHECK:           %[[Y:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK:           memref.store %[[Y]], %arg1
// CHECK:           arith.addf
// CHECK:           memref.store %{{.*}}, %arg3
// CHECK:         linalg.copy ins(%arg1 {{.*}}) outs(%arg2
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @producer_small_grid_few_elements
// CHECK-NOT:     linalg.generic
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c64
// CHECK:           memref.store %{{.*}}, %arg1
// CHECK:         linalg.copy
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @producer_small_grid
// CHECK:         linalg.generic
// CHECK:         linalg.copy
// CHECK:         gpu.launch
// CHECK-LABEL: func.func @producer_output_read_between
// CHECK:         linalg.generic
// CHECK:         call @use_sums
// CHECK:         gpu.launch
func.func private @use_sums(memref<128xf32>)
func.func @producer_fused(%a: memref<128x64xf32>, %p: memref<128x64xf32>, %q: memref<128x64xf32>, %out: memref<128xf32>) {
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<128x64xf32>) outs(%p : memref<128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  linalg.copy ins(%p : memref<128x64xf32>) outs(%q : memref<128x64xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : memref<128x64xf32>) outs(%out : memref<128xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}
func.func @producer_small_grid_few_elements(%a: memref<64x64xf32>, %p: memref<64x64xf32>, %q: memref<64x64xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x64xf32>) outs(%p : memref<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  linalg.copy ins(%p : memref<64x64xf32>) outs(%q : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : memref<64x64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}
func.func @producer_small_grid(%a: memref<64x8192xf32>, %p: memref<64x8192xf32>, %q: memref<64x8192xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x8192xf32>) outs(%p : memref<64x8192xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  linalg.copy ins(%p : memref<64x8192xf32>) outs(%q : memref<64x8192xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : memref<64x8192xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}
func.func @producer_output_read_between(%a: memref<128x64xf32>, %p: memref<128x64xf32>, %out: memref<128xf32>) {
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<128x64xf32>) outs(%p : memref<128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  }
  func.call @use_sums(%out) : (memref<128xf32>) -> ()
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : memref<128x64xf32>) outs(%out : memref<128xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}
