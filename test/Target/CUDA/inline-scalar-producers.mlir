// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-inline-scalar-producers))' | FileCheck %s

// mix-inline-scalar-producers: a one-thread kernel computing a scalar into
// a temporary that later kernels read broadcast is folded into each of
// them; left alone when something may write its inputs in between.

#id = affine_map<(d0) -> (d0)>
#bcast = affine_map<(d0) -> (0)>
#scalar = affine_map<() -> ()>

// The clipping factor min(1, 1 / (norm + 1e-6)) read by two updates: each
// update reads the norm itself (a rank-0 input, `(d0) -> ()`) and computes
// the factor first in its payload; the producer is gone.
// CHECK-LABEL: func.func @two_readers
// CHECK-NOT:     iterator_types = []
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[NORM:.*]], #{{.*}}], iterator_types = ["parallel"]} ins(%arg1, %arg0 : memref<8xf32>, memref<f32>) outs(%arg2 : memref<8xf32>)
// CHECK-NEXT:    ^bb0(%[[G:.*]]: f32, %[[N:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[N]], %{{.*}} : f32
// CHECK-NEXT:      %[[R:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK-NEXT:      %[[F:.*]] = arith.minimumf %[[R]], %{{.*}} : f32
// CHECK-NEXT:      %[[U:.*]] = arith.mulf %[[G]], %[[F]] : f32
// CHECK-NEXT:      linalg.yield %[[U]]
// CHECK:         linalg.generic {{.*}} ins(%arg1, %arg0 : memref<8xf32>, memref<f32>) outs(%arg3 : memref<8xf32>)
// CHECK:           arith.minimumf
// CHECK-NOT:     memref.expand_shape
// CHECK:         return
func.func @two_readers(%norm: memref<f32>, %g: memref<8xf32>, %m: memref<8xf32>, %v: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %tmp = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%norm : memref<f32>) outs(%tmp : memref<f32>) {
  ^bb0(%n: f32, %out: f32):
    %s = arith.addf %n, %eps : f32
    %r = arith.divf %one, %s : f32
    %f = arith.minimumf %r, %one : f32
    linalg.yield %f : f32
  }
  %view = memref.expand_shape %tmp [] output_shape [1] : memref<f32> into memref<1xf32>
  linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel"]}
      ins(%g, %view : memref<8xf32>, memref<1xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%x: f32, %f: f32, %out: f32):
    %u = arith.mulf %x, %f : f32
    linalg.yield %u : f32
  }
  linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel"]}
      ins(%g, %view : memref<8xf32>, memref<1xf32>) outs(%v : memref<8xf32>) {
  ^bb0(%x: f32, %f: f32, %out: f32):
    %u = arith.mulf %x, %f : f32
    %w = arith.mulf %u, %u : f32
    linalg.yield %w : f32
  }
  memref.dealloc %tmp : memref<f32>
  return
}

// The norm is overwritten between the producer and its reader: the
// reader must see the old factor, so nothing moves.
// CHECK-LABEL: func.func @input_written_between
// CHECK:         iterator_types = []
// CHECK:         linalg.fill
// CHECK:         memref.expand_shape
func.func @input_written_between(%norm: memref<f32>, %g: memref<8xf32>, %m: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%norm : memref<f32>) outs(%tmp : memref<f32>) {
  ^bb0(%n: f32, %out: f32):
    %s = arith.addf %n, %n : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%norm : memref<f32>)
  %view = memref.expand_shape %tmp [] output_shape [1] : memref<f32> into memref<1xf32>
  linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel"]}
      ins(%g, %view : memref<8xf32>, memref<1xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%x: f32, %f: f32, %out: f32):
    %u = arith.mulf %x, %f : f32
    linalg.yield %u : f32
  }
  memref.dealloc %tmp : memref<f32>
  return
}

// An accumulation (the payload reads the output's old value) is not a
// pure function of its inputs: left alone.
// CHECK-LABEL: func.func @accumulates
// CHECK:         iterator_types = []
func.func @accumulates(%norm: memref<f32>, %g: memref<8xf32>, %m: memref<8xf32>) {
  %tmp = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%norm : memref<f32>) outs(%tmp : memref<f32>) {
  ^bb0(%n: f32, %out: f32):
    %s = arith.addf %n, %out : f32
    linalg.yield %s : f32
  }
  %view = memref.expand_shape %tmp [] output_shape [1] : memref<f32> into memref<1xf32>
  linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel"]}
      ins(%g, %view : memref<8xf32>, memref<1xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%x: f32, %f: f32, %out: f32):
    %u = arith.mulf %x, %f : f32
    linalg.yield %u : f32
  }
  memref.dealloc %tmp : memref<f32>
  return
}
