// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-transposed-results))' | FileCheck %s

// A multi-head mixture: products accumulate the head-major (H, T, c)
// result, which a copy transposes into the token-major (T, H, c) buffer
// the layer reads. The products write the token-major buffer through its
// transposed view (batch stride c, leading dimension H c) instead; the
// destination is allocated where the source was, the copy and the
// source's buffer go.

// CHECK-LABEL: func.func @heads
// CHECK-SAME:    (%[[X:.*]]: memref<3x5x4xf32>, %[[K:.*]]: memref<3x4x2xf32>, %[[K2:.*]]: memref<3x4x2xf32>, %[[OUT:.*]]: memref<5x3x2xf32>)
// CHECK-NEXT:    %[[CST:.*]] = arith.constant
// CHECK-NEXT:    %[[U:.*]] = memref.alloc() {alignment = 64 : i64} : memref<5x3x2xf32>
// CHECK-NEXT:    %[[V:.*]] = memref.transpose %[[U]] (d0, d1, d2) -> (d1, d0, d2) : memref<5x3x2xf32> to memref<3x5x2xf32, strided<[2, 6, 1]>>
// CHECK-NEXT:    linalg.fill ins(%[[CST]] : f32) outs(%[[V]] : memref<3x5x2xf32, strided<[2, 6, 1]>>)
// CHECK-NEXT:    linalg.batch_matmul ins(%[[X]], %[[K]] : {{.*}}) outs(%[[V]] : memref<3x5x2xf32, strided<[2, 6, 1]>>)
// CHECK-NEXT:    linalg.batch_matmul ins(%[[X]], %[[K2]] : {{.*}}) outs(%[[V]] : memref<3x5x2xf32, strided<[2, 6, 1]>>)
// CHECK-NEXT:    linalg.copy ins(%[[U]] : memref<5x3x2xf32>) outs(%[[OUT]] : memref<5x3x2xf32>)
// CHECK-NEXT:    memref.dealloc %[[U]] : memref<5x3x2xf32>
// CHECK-NEXT:    return
func.func @heads(%x: memref<3x5x4xf32>, %k: memref<3x4x2xf32>, %k2: memref<3x4x2xf32>, %out: memref<5x3x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %hm = memref.alloc() {alignment = 64 : i64} : memref<3x5x2xf32>
  linalg.fill ins(%zero : f32) outs(%hm : memref<3x5x2xf32>)
  linalg.batch_matmul ins(%x, %k : memref<3x5x4xf32>, memref<3x4x2xf32>) outs(%hm : memref<3x5x2xf32>)
  linalg.batch_matmul ins(%x, %k2 : memref<3x5x4xf32>, memref<3x4x2xf32>) outs(%hm : memref<3x5x2xf32>)
  %tm = memref.alloc() {alignment = 64 : i64} : memref<5x3x2xf32>
  linalg.transpose ins(%hm : memref<3x5x2xf32>) outs(%tm : memref<5x3x2xf32>) permutation = [1, 0, 2]
  memref.dealloc %hm : memref<3x5x2xf32>
  linalg.copy ins(%tm : memref<5x3x2xf32>) outs(%out : memref<5x3x2xf32>)
  memref.dealloc %tm : memref<5x3x2xf32>
  return
}

// A permutation that is not its own inverse: the view takes the inverse.
// CHECK-LABEL: func.func @rotate
// CHECK:         %[[U:.*]] = memref.alloc() : memref<4x2x3xf32>
// CHECK-NEXT:    %[[V:.*]] = memref.transpose %[[U]] (d0, d1, d2) -> (d1, d2, d0) : memref<4x2x3xf32> to memref<2x3x4xf32, strided<[3, 1, 6]>>
// CHECK-NEXT:    linalg.fill {{.*}} outs(%[[V]]
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.copy ins(%[[U]]
func.func @rotate(%out: memref<4x2x3xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3x4xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3x4xf32>)
  %dst = memref.alloc() : memref<4x2x3xf32>
  linalg.transpose ins(%src : memref<2x3x4xf32>) outs(%dst : memref<4x2x3xf32>) permutation = [2, 0, 1]
  memref.dealloc %src : memref<2x3x4xf32>
  linalg.copy ins(%dst : memref<4x2x3xf32>) outs(%out : memref<4x2x3xf32>)
  memref.dealloc %dst : memref<4x2x3xf32>
  return
}

// Left alone: the source is read after the copy (its layout is still
// needed), the destination is written before the copy, the source is
// read through a view, the destination is an argument.
// CHECK-LABEL: func.func @read_after
// CHECK:         linalg.transpose
func.func @read_after(%out: memref<3x2xf32>, %out2: memref<2x3xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3xf32>)
  %dst = memref.alloc() : memref<3x2xf32>
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%dst : memref<3x2xf32>) permutation = [1, 0]
  linalg.copy ins(%src : memref<2x3xf32>) outs(%out2 : memref<2x3xf32>)
  memref.dealloc %src : memref<2x3xf32>
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out : memref<3x2xf32>)
  memref.dealloc %dst : memref<3x2xf32>
  return
}

// CHECK-LABEL: func.func @destination_used_before
// CHECK:         linalg.transpose
func.func @destination_used_before(%out: memref<3x2xf32>) {
  %one = arith.constant 1.0 : f32
  %dst = memref.alloc() : memref<3x2xf32>
  linalg.fill ins(%one : f32) outs(%dst : memref<3x2xf32>)
  %src = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3xf32>)
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%dst : memref<3x2xf32>) permutation = [1, 0]
  memref.dealloc %src : memref<2x3xf32>
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out : memref<3x2xf32>)
  memref.dealloc %dst : memref<3x2xf32>
  return
}

// CHECK-LABEL: func.func @source_viewed
// CHECK:         linalg.transpose
func.func @source_viewed(%out: memref<3x2xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3xf32>
  %flat = memref.collapse_shape %src [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  linalg.fill ins(%one : f32) outs(%flat : memref<6xf32>)
  %dst = memref.alloc() : memref<3x2xf32>
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%dst : memref<3x2xf32>) permutation = [1, 0]
  memref.dealloc %src : memref<2x3xf32>
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out : memref<3x2xf32>)
  memref.dealloc %dst : memref<3x2xf32>
  return
}

// CHECK-LABEL: func.func @into_argument
// CHECK:         linalg.transpose
func.func @into_argument(%out: memref<3x2xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3xf32>)
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%out : memref<3x2xf32>) permutation = [1, 0]
  memref.dealloc %src : memref<2x3xf32>
  return
}

// A plain copy, through reshapes, into a slice of an out-parameter (one
// stream's kernel gradient into the gradient of all the kernels): the
// product writes the slice, through the inverse reshapes, made again where
// the allocation was.
// CHECK-LABEL: func.func @copied_into_slice
// CHECK-SAME:    (%[[A:.*]]: memref<2x3x8xf32>, %[[B:.*]]: memref<2x8x4xf32>, %[[G:.*]]: memref<3x6x4xf32>)
// CHECK-NEXT:    %[[S:.*]] = memref.subview %[[G]][1, 0, 0] [1, 6, 4] [1, 1, 1]
// CHECK-NEXT:    %[[C:.*]] = memref.collapse_shape %[[S]] {{\[}}[0, 1, 2]]
// CHECK-NEXT:    %[[E:.*]] = memref.expand_shape %[[C]] {{\[}}[0, 1, 2]] output_shape [2, 3, 4] : memref<24xf32, strided<[1], offset: 24>> into memref<2x3x4xf32, strided<[12, 4, 1], offset: 24>>
// CHECK-NEXT:    linalg.batch_matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[E]] : memref<2x3x4xf32, strided<[12, 4, 1], offset: 24>>)
// CHECK-NOT:     memref.copy
// CHECK-NOT:     memref.alloc
func.func @copied_into_slice(%a: memref<2x3x8xf32>, %b: memref<2x8x4xf32>, %g: memref<3x6x4xf32>) {
  %k = memref.alloc() : memref<2x3x4xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x3x8xf32>, memref<2x8x4xf32>) outs(%k : memref<2x3x4xf32>)
  %flat = memref.collapse_shape %k [[0, 1, 2]] : memref<2x3x4xf32> into memref<24xf32>
  %rows = memref.expand_shape %flat [[0, 1, 2]] output_shape [1, 6, 4] : memref<24xf32> into memref<1x6x4xf32>
  %slot = memref.subview %g[1, 0, 0] [1, 6, 4] [1, 1, 1] : memref<3x6x4xf32> to memref<1x6x4xf32, strided<[24, 4, 1], offset: 24>>
  memref.copy %rows, %slot : memref<1x6x4xf32> to memref<1x6x4xf32, strided<[24, 4, 1], offset: 24>>
  memref.dealloc %k : memref<2x3x4xf32>
  return
}

// Left alone: the out-parameter is written (filled) while the allocation
// is computed, which writing in place would now overwrite.
// CHECK-LABEL: func.func @target_written_between
// CHECK:         memref.copy
func.func @target_written_between(%a: memref<2x3x8xf32>, %b: memref<2x8x4xf32>, %g: memref<3x6x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %k = memref.alloc() : memref<2x3x4xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x3x8xf32>, memref<2x8x4xf32>) outs(%k : memref<2x3x4xf32>)
  linalg.fill ins(%zero : f32) outs(%g : memref<3x6x4xf32>)
  %flat = memref.collapse_shape %k [[0, 1, 2]] : memref<2x3x4xf32> into memref<24xf32>
  %rows = memref.expand_shape %flat [[0, 1, 2]] output_shape [1, 6, 4] : memref<24xf32> into memref<1x6x4xf32>
  %slot = memref.subview %g[1, 0, 0] [1, 6, 4] [1, 1, 1] : memref<3x6x4xf32> to memref<1x6x4xf32, strided<[24, 4, 1], offset: 24>>
  memref.copy %rows, %slot : memref<1x6x4xf32> to memref<1x6x4xf32, strided<[24, 4, 1], offset: 24>>
  memref.dealloc %k : memref<2x3x4xf32>
  return
}

// One buffer for the result of each of two layers, and one for its
// transposed copy (bufferization reuses them): each layer's values get
// allocations of their own from the write that starts them to the next
// one, and each is then computed in its transposed place. The second
// layer's range is the allocations' own (nothing overwrites them after).
// CHECK-LABEL: func.func @reused_across_layers
// CHECK-NOT: linalg.transpose
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.0
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.0
// CHECK: %[[T2:.*]] = memref.alloc() : memref<2x4x3xf32>
// CHECK: %[[V2:.*]] = memref.transpose %[[T2]] (d0, d1, d2) -> (d1, d0, d2)
// CHECK: %[[T1:.*]] = memref.alloc() : memref<2x4x3xf32>
// CHECK: %[[V1:.*]] = memref.transpose %[[T1]] (d0, d1, d2) -> (d1, d0, d2)
// CHECK: linalg.fill ins(%[[ONE]] : f32) outs(%[[V1]] : memref<4x2x3xf32, strided<[3, 12, 1]>>)
// CHECK: linalg.generic {{.*}} ins(%[[T1]] : memref<2x4x3xf32>) outs(%arg0 :
// CHECK: memref.dealloc %[[T1]]
// CHECK: linalg.fill ins(%[[TWO]] : f32) outs(%[[V2]] : memref<4x2x3xf32, strided<[3, 12, 1]>>)
// CHECK: linalg.generic {{.*}} ins(%[[T2]] : memref<2x4x3xf32>) outs(%arg1 :
// CHECK: memref.dealloc %[[T2]]
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @reused_across_layers(%out1: memref<2x4x3xf32>, %out2: memref<2x4x3xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %src = memref.alloc() : memref<4x2x3xf32>
  %dst = memref.alloc() : memref<2x4x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<4x2x3xf32>)
  linalg.transpose ins(%src : memref<4x2x3xf32>) outs(%dst : memref<2x4x3xf32>) permutation = [1, 0, 2]
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dst : memref<2x4x3xf32>) outs(%out1 : memref<2x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%two : f32) outs(%src : memref<4x2x3xf32>)
  linalg.transpose ins(%src : memref<4x2x3xf32>) outs(%dst : memref<2x4x3xf32>) permutation = [1, 0, 2]
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dst : memref<2x4x3xf32>) outs(%out2 : memref<2x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %src : memref<4x2x3xf32>
  memref.dealloc %dst : memref<2x4x3xf32>
  return
}
