// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-fuse-elementwise-kernels))' | FileCheck %s

// mix-fuse-elementwise-kernels: neighbouring elementwise ops over the same
// iteration space become one op when every buffer one writes and both
// touch is accessed by both at the same element.

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>

// AdamW's three updates: m, then v, then the parameter from the new m and
// v. One op with three outputs; the parameter's part takes m and v from
// the first two parts' results (no input reads them back), across the
// free of an unrelated buffer (which the fused op, placed where the last
// update was, now follows).
// CHECK-LABEL: func.func @adamw
// CHECK:         memref.dealloc
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[M:arg1]], %[[G:arg3]], %[[V:arg2]], %[[G]], %[[P:arg0]] : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>)
// CHECK-SAME:      outs(%[[M]], %[[V]], %[[P]] : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[M0:.*]]: f32, %[[G0:.*]]: f32, %[[V0:.*]]: f32, %[[G1:.*]]: f32, %[[P0:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK:           %[[M1:.*]] = arith.addf
// CHECK:           %[[V1:.*]] = arith.addf
// CHECK:           %[[S:.*]] = math.sqrt %[[V1]]
// CHECK:           %[[Q:.*]] = arith.divf %[[M1]], %{{.*}}
// CHECK:           %[[P1:.*]] = arith.subf %[[P0]], %[[Q]]
// CHECK-NEXT:      linalg.yield %[[M1]], %[[V1]], %[[P1]] : f32, f32, f32
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @adamw(%p: memref<4x8xf32>, %m: memref<4x8xf32>, %v: memref<4x8xf32>, %g: memref<4x8xf32>) {
  %b1 = arith.constant 0.9 : f32
  %b2 = arith.constant 0.95 : f32
  %eps = arith.constant 1.0e-8 : f32
  %other = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%m : memref<4x8xf32>) {
  ^bb0(%mi: f32, %gi: f32, %out: f32):
    %a = arith.mulf %mi, %b1 : f32
    %n = arith.addf %a, %gi : f32
    linalg.yield %n : f32
  }
  memref.dealloc %other : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%v : memref<4x8xf32>) {
  ^bb0(%vi: f32, %gi: f32, %out: f32):
    %a = arith.mulf %vi, %b2 : f32
    %sq = arith.mulf %gi, %gi : f32
    %n = arith.addf %a, %sq : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %m, %v : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>) outs(%p : memref<4x8xf32>) {
  ^bb0(%pi: f32, %mi: f32, %vi: f32, %out: f32):
    %s = math.sqrt %vi : f32
    %d = arith.addf %s, %eps : f32
    %q = arith.divf %mi, %d : f32
    %n = arith.subf %pi, %q : f32
    linalg.yield %n : f32
  }
  return
}

// The second op reads what the first writes at another element (the
// transpose): fusing would read elements not yet written. Left alone.
// CHECK-LABEL: func.func @transposed
// CHECK-COUNT-2: linalg.generic
func.func @transposed(%a: memref<8x8xf32>, %b: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%a : memref<8x8xf32>) {
  ^bb0(%out: f32):
    %one = arith.constant 1.0 : f32
    linalg.yield %one : f32
  }
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  return
}

// Iteration spaces of different shapes but as many elements, the second
// op over whole buffers with identity maps: it is viewed in the first's
// shape (a view of %b as 4x8) and the two fuse. A call that may write the
// buffer in between: the third is left alone.
// CHECK-LABEL: func.func @not_neighbours
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<8x4xf32> into memref<32xf32>
// CHECK:         %[[B:.*]] = memref.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [4, 8] : memref<32xf32> into memref<4x8xf32>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}}, %[[B]] : memref<4x8xf32>, memref<4x8xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         call @touch
// CHECK:         linalg.generic
func.func private @touch(memref<4x8xf32>)
func.func @not_neighbours(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%b : memref<8x4xf32>) {
  ^bb0(%out: f32):
    %one = arith.constant 1.0 : f32
    linalg.yield %one : f32
  }
  call @touch(%c) : (memref<4x8xf32>) -> ()
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32>) outs(%a : memref<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  return
}

// A mixture's mixing (an unrolled sum over a unit dimension, (T, 1, H, C))
// and the GELU after it over (B, S, H C): the GELU is viewed in the
// mixing's shape, reads the mixing's output as the same view, and the two
// are one op with both outputs, the GELU's input from registers.
// CHECK-LABEL: func.func @mixing_then_gelu
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}]
// CHECK-SAME:        ins(%[[P:.*]], %[[P]] : memref<4x2x2x3xf32>, memref<4x2x2x3xf32>) outs(%[[U:.*]], %{{.*}} : memref<4x1x2x3xf32>, memref<4x1x2x3xf32>)
// CHECK:           %[[SUM:.*]] = arith.addf
// CHECK:           %[[G:.*]] = math.tanh %[[SUM]]
// CHECK:           linalg.yield %[[SUM]], %[[G]]
// CHECK-NOT:     linalg.generic
#m0 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#m1 = affine_map<(d0, d1, d2, d3) -> (d0, 1, d2, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @mixing_then_gelu(%p: memref<4x2x2x3xf32>, %h: memref<2x2x6xf32>) {
  %u = memref.alloc() : memref<4x1x2x3xf32>
  linalg.generic {indexing_maps = [#m0, #m1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %p : memref<4x2x2x3xf32>, memref<4x2x2x3xf32>) outs(%u : memref<4x1x2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  %flat = memref.collapse_shape %u [[0, 1, 2, 3]] : memref<4x1x2x3xf32> into memref<24xf32>
  %u3 = memref.expand_shape %flat [[0, 1, 2]] output_shape [2, 2, 6] : memref<24xf32> into memref<2x2x6xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%u3 : memref<2x2x6xf32>) outs(%h : memref<2x2x6xf32>) {
  ^bb0(%x: f32, %out: f32):
    %g = math.tanh %x : f32
    linalg.yield %g : f32
  }
  memref.dealloc %u : memref<4x1x2x3xf32>
  return
}

// The second op reads the first's output through a transpose: no shape of
// it reads each element where the first writes it. Left alone.
// CHECK-LABEL: func.func @reshaped_but_transposed
// CHECK-COUNT-2: linalg.generic
#t3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
func.func @reshaped_but_transposed(%a: memref<2x4x4xf32>, %b: memref<4x4x2xf32>) {
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%a : memref<2x4x4xf32>) {
  ^bb0(%out: f32):
    %one = arith.constant 1.0 : f32
    linalg.yield %one : f32
  }
  %flat = memref.collapse_shape %a [[0, 1, 2]] : memref<2x4x4xf32> into memref<32xf32>
  %a2 = memref.expand_shape %flat [[0, 1, 2]] output_shape [4, 2, 4] : memref<32xf32> into memref<4x2x4xf32>
  linalg.generic {indexing_maps = [#t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a2 : memref<4x2x4xf32>) outs(%b : memref<4x4x2xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  return
}
