// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-round-into-producers))' | FileCheck %s

// mix-round-into-producers (--precision bf16): a product operand's
// rounding (an elementwise arith.truncf into a bf16 buffer) goes into the
// op that produced the f32 value, when nothing else reads that value; a
// bias-gradient sum of the value reads the rounded one instead.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1) -> (0, d1)>

// The LayerNorm writes its result in bf16: the f32 buffer and the rounding
// are gone, the bf16 allocation is made before the LayerNorm.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<2x4x8xbf16>
// CHECK-NEXT:    mix.fused_layer_norm_buffers %arg0, %arg1, %arg2 into %[[Y]], %arg3, %arg4 {{.*}} memref<2x4x8xbf16>
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.batch_matmul ins(%[[Y]], %arg5 : memref<2x4x8xbf16>, memref<2x8x8xbf16>)
// CHECK-NOT:     memref.dealloc %{{.*}} : memref<2x4x8xf32>
func.func @layer_norm(%in: memref<2x4x8xf32>, %w: memref<8xf32>, %b: memref<8xf32>, %mean: memref<2x4xf32>, %rstd: memref<2x4xf32>, %k: memref<2x8x8xbf16>, %out: memref<2x4x8xf32>) {
  %x = memref.alloc() : memref<2x4x8xf32>
  mix.fused_layer_norm_buffers %in, %w, %b into %x, %mean, %rstd eps 1.0e-05 : memref<2x4x8xf32>, memref<8xf32>, memref<8xf32>, memref<2x4x8xf32>, memref<2x4xf32>, memref<2x4xf32>
  %y = memref.alloc() : memref<2x4x8xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<2x4x8xf32>) outs(%y : memref<2x4x8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %x : memref<2x4x8xf32>
  linalg.batch_matmul ins(%y, %k : memref<2x4x8xbf16>, memref<2x8x8xbf16>) outs(%out : memref<2x4x8xf32>)
  memref.dealloc %y : memref<2x4x8xbf16>
  return
}

// An elementwise producer rounds what it yields; the sum of the value (a
// bias gradient, through a reshape) sums the rounded values, widened, from
// the same reshape of the bf16 buffer as the product reads.
// CHECK-LABEL: func.func @elementwise_and_sum
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<2x4x8xbf16>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg0, %arg1 : memref<2x4x8xf32>, memref<2x4x8xf32>) outs(%[[Y]] : memref<2x4x8xbf16>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[R]] : bf16
// CHECK:         %[[V:.*]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : memref<2x4x8xbf16> into memref<8x8xbf16>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[V]] : memref<8x8xbf16>) outs(%arg2 : memref<1x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:      arith.addf %[[W]], %[[ACC]]
// CHECK:         linalg.matmul ins(%[[V]], %arg3 : memref<8x8xbf16>, memref<8x8xbf16>)
// CHECK-NOT:     memref<2x4x8xf32>
// CHECK:         return
func.func @elementwise_and_sum(%a: memref<2x4x8xf32>, %b: memref<2x4x8xf32>, %bias: memref<1x8xf32>, %k: memref<8x8xbf16>, %out: memref<8x8xf32>) {
  %x = memref.alloc() : memref<2x4x8xf32>
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a, %b : memref<2x4x8xf32>, memref<2x4x8xf32>) outs(%x : memref<2x4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  }
  %y = memref.alloc() : memref<2x4x8xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<2x4x8xf32>) outs(%y : memref<2x4x8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  %yv = memref.collapse_shape %y [[0, 1], [2]] : memref<2x4x8xbf16> into memref<8x8xbf16>
  %xv = memref.collapse_shape %x [[0, 1], [2]] : memref<2x4x8xf32> into memref<8x8xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%bias : memref<1x8xf32>)
  linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%xv : memref<8x8xf32>) outs(%bias : memref<1x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  memref.dealloc %x : memref<2x4x8xf32>
  linalg.matmul ins(%yv, %k : memref<8x8xbf16>, memref<8x8xbf16>) outs(%out : memref<8x8xf32>)
  memref.dealloc %y : memref<2x4x8xbf16>
  return
}

// A buffer reused for the next layer's value: the first value is read by
// its rounding alone (the buffer is overwritten next), so its producer
// writes bf16 only; the second value an add reads besides its rounding: its
// producer writes both (one kernel, which a LayerNorm gradient's kernel
// can absorb as its residual add).
// CHECK-LABEL: func.func @reused
// CHECK:         %[[X:.*]] = memref.alloc() : memref<8x8xf32>
// CHECK:         %[[Y:.*]] = memref.alloc() : memref<8x8xbf16>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg0 : memref<8x8xf32>) outs(%[[Y]] : memref<8x8xbf16>)
// CHECK:           math.exp
// CHECK-NEXT:      arith.truncf
// CHECK:         linalg.matmul ins(%[[Y]], %arg1
// CHECK:         %[[Y2:.*]] = memref.alloc() : memref<8x8xbf16>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg2 : memref<8x8xf32>) outs(%[[X]], %[[Y2]] : memref<8x8xf32>, memref<8x8xbf16>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[N:.*]] = arith.negf
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[N]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[N]], %[[R]] : f32, bf16
// CHECK-NOT:     arith.truncf
// CHECK:         linalg.matmul ins(%[[Y2]], %arg1
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %arg0 : memref<8x8xf32>, memref<8x8xf32>) outs(%arg3
func.func @reused(%a: memref<8x8xf32>, %k: memref<8x8xbf16>, %c: memref<8x8xf32>, %out: memref<8x8xf32>, %p: memref<8x8xf32>) {
  %x = memref.alloc() : memref<8x8xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : memref<8x8xf32>) outs(%x : memref<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  %y = memref.alloc() : memref<8x8xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x8xf32>) outs(%y : memref<8x8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.matmul ins(%y, %k : memref<8x8xbf16>, memref<8x8xbf16>) outs(%p : memref<8x8xf32>)
  memref.dealloc %y : memref<8x8xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x8xf32>) outs(%x : memref<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  %y2 = memref.alloc() : memref<8x8xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x8xf32>) outs(%y2 : memref<8x8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.matmul ins(%y2, %k : memref<8x8xbf16>, memref<8x8xbf16>) outs(%p : memref<8x8xf32>)
  memref.dealloc %y2 : memref<8x8xbf16>
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  }
  memref.dealloc %x : memref<8x8xf32>
  return
}

// The value is read after its rounding (an accumulation in place), and
// the sum reads the next value: the producer writes both, and the sum
// keeps its f32 input.
// CHECK-LABEL: func.func @sum_after_rewrite
// CHECK:         linalg.generic {{.*}} ins(%arg0 : memref<8x8xf32>) outs(%{{.*}}, %{{.*}} : memref<8x8xf32>, memref<8x8xbf16>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : memref<8x8xf32>)
// CHECK-NOT:       arith.extf
func.func @sum_after_rewrite(%a: memref<8x8xf32>, %k: memref<8x8xbf16>, %c: memref<8x8xf32>, %p: memref<8x8xf32>, %bias: memref<1x8xf32>) {
  %x = memref.alloc() : memref<8x8xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : memref<8x8xf32>) outs(%x : memref<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  %y = memref.alloc() : memref<8x8xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x8xf32>) outs(%y : memref<8x8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.matmul ins(%y, %k : memref<8x8xbf16>, memref<8x8xbf16>) outs(%p : memref<8x8xf32>)
  memref.dealloc %y : memref<8x8xbf16>
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %c : memref<8x8xf32>, memref<8x8xf32>) outs(%x : memref<8x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%x : memref<8x8xf32>) outs(%bias : memref<1x8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  memref.dealloc %x : memref<8x8xf32>
  return
}

// The attention's output, rounded for its projection and read by the
// attention's gradient: the gradient reads the rounded values (D =
// rowsum(dout . out) from bf16, as FlashAttention-2 does), so the forward
// kernel writes bf16 alone; the rounded buffer is freed after the
// gradient. The gradient's dqkv, read by the rounding alone, is written in
// bf16 too.
// CHECK-LABEL: func.func @attention
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<2x8x8xbf16>
// CHECK-NEXT:    mix.flash_attention_buffers %arg0 into %[[Y]], %arg1 heads 2 : memref<2x8x24xf32>, memref<2x8x8xbf16>, memref<2x2x8xf32>
// CHECK:         linalg.batch_matmul ins(%[[Y]], %arg2
// CHECK:         %[[DY:.*]] = memref.alloc() : memref<2x8x24xbf16>
// CHECK-NEXT:    mix.flash_attention_grad_buffers %arg0, %[[Y]], %arg1, %arg3 into %[[DY]] heads 2 : memref<2x8x24xf32>, memref<2x8x8xbf16>, memref<2x2x8xf32>, memref<2x8x8xf32>, memref<2x8x24xbf16>
// CHECK-NEXT:    memref.dealloc %[[Y]]
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.alloc() : memref<2x8x8xf32>
// CHECK:         linalg.batch_matmul ins(%[[DY]], %arg4
// CHECK:         return
func.func @attention(%qkv: memref<2x8x24xf32>, %lse: memref<2x2x8xf32>, %w: memref<2x8x8xbf16>, %do: memref<2x8x8xf32>, %w2: memref<2x24x8xbf16>, %out: memref<2x8x8xf32>) {
  %o = memref.alloc() : memref<2x8x8xf32>
  mix.flash_attention_buffers %qkv into %o, %lse heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>
  %y = memref.alloc() : memref<2x8x8xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o : memref<2x8x8xf32>) outs(%y : memref<2x8x8xbf16>) {
  ^bb0(%v: f32, %u: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.batch_matmul ins(%y, %w : memref<2x8x8xbf16>, memref<2x8x8xbf16>) outs(%out : memref<2x8x8xf32>)
  memref.dealloc %y : memref<2x8x8xbf16>
  %dqkv = memref.alloc() : memref<2x8x24xf32>
  mix.flash_attention_grad_buffers %qkv, %o, %lse, %do into %dqkv heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>, memref<2x8x8xf32>, memref<2x8x24xf32>
  memref.dealloc %o : memref<2x8x8xf32>
  %dy = memref.alloc() : memref<2x8x24xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dqkv : memref<2x8x24xf32>) outs(%dy : memref<2x8x24xbf16>) {
  ^bb0(%v: f32, %u: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %dqkv : memref<2x8x24xf32>
  linalg.batch_matmul ins(%dy, %w2 : memref<2x8x24xbf16>, memref<2x24x8xbf16>) outs(%out : memref<2x8x8xf32>)
  memref.dealloc %dy : memref<2x8x24xbf16>
  return
}

// The f32 value is computed through a transposed view of its buffer (where
// mix-transposed-results put a gate's gradient): its writer writes the
// bf16 copy besides it, even though nothing reads the f32 value again.
// CHECK-LABEL: func.func @viewed
// CHECK-NEXT:    %[[X:.*]] = memref.alloc() : memref<2x4x8xf32>
// CHECK-NEXT:    %[[XV:.*]] = memref.transpose %[[X]] (d0, d1, d2) -> (d0, d2, d1)
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<2x8x4xbf16>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%arg0, %arg1 : memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%[[XV]], %[[Y]] : memref<2x8x4xf32, strided<[32, 1, 8]>>, memref<2x8x4xbf16>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32, %{{.*}}: bf16):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[M]], %[[R]] : f32, bf16
// CHECK-NOT:     arith.truncf
// CHECK:         return
func.func @viewed(%a: memref<2x8x4xf32>, %b: memref<2x8x4xf32>, %k: memref<2x4x4xbf16>, %out: memref<2x8x4xf32>) {
  %x = memref.alloc() : memref<2x4x8xf32>
  %xv = memref.transpose %x (d0, d1, d2) -> (d0, d2, d1) : memref<2x4x8xf32> to memref<2x8x4xf32, strided<[32, 1, 8]>>
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a, %b : memref<2x8x4xf32>, memref<2x8x4xf32>) outs(%xv : memref<2x8x4xf32, strided<[32, 1, 8]>>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  }
  %y = memref.alloc() : memref<2x8x4xbf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xv : memref<2x8x4xf32, strided<[32, 1, 8]>>) outs(%y : memref<2x8x4xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %x : memref<2x4x8xf32>
  linalg.batch_matmul ins(%y, %k : memref<2x8x4xbf16>, memref<2x4x4xbf16>) outs(%out : memref<2x8x4xf32>)
  memref.dealloc %y : memref<2x8x4xbf16>
  return
}
