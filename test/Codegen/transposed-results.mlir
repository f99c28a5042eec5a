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

// The source read after the copy: it is read through the transposed view
// of the destination, which lives until the source's last use (a 2x3
// transpose moves elements within runs of 6).
// CHECK-LABEL: func.func @read_after
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    %[[DST:.*]] = memref.alloc() : memref<3x2xf32>
// CHECK-NEXT:    %[[VIEW:.*]] = memref.transpose %[[DST]] (d0, d1) -> (d1, d0)
// CHECK-NEXT:    linalg.fill {{.*}} outs(%[[VIEW]]
// CHECK-NEXT:    linalg.copy ins(%[[DST]] {{.*}} outs(%arg0
// CHECK-NEXT:    linalg.copy ins(%[[VIEW]] {{.*}} outs(%arg1
// CHECK-NEXT:    memref.dealloc %[[DST]]
// CHECK-NEXT:    return
func.func @read_after(%out: memref<3x2xf32>, %out2: memref<2x3xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3xf32>)
  %dst = memref.alloc() : memref<3x2xf32>
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%dst : memref<3x2xf32>) permutation = [1, 0]
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out : memref<3x2xf32>)
  memref.dealloc %dst : memref<3x2xf32>
  linalg.copy ins(%src : memref<2x3xf32>) outs(%out2 : memref<2x3xf32>)
  memref.dealloc %src : memref<2x3xf32>
  return
}

// Left alone: the source is read after the copy, and the transpose moves
// elements across rows of 8 (a strided read of the source would not
// coalesce.
// CHECK-LABEL: func.func @read_after_across_rows
// CHECK:         linalg.transpose
func.func @read_after_across_rows(%out: memref<8x8xf32>, %out2: memref<8x8xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<8x8xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<8x8xf32>)
  %dst = memref.alloc() : memref<8x8xf32>
  linalg.transpose ins(%src : memref<8x8xf32>) outs(%dst : memref<8x8xf32>) permutation = [1, 0]
  linalg.copy ins(%src : memref<8x8xf32>) outs(%out2 : memref<8x8xf32>)
  memref.dealloc %src : memref<8x8xf32>
  linalg.copy ins(%dst : memref<8x8xf32>) outs(%out : memref<8x8xf32>)
  memref.dealloc %dst : memref<8x8xf32>
  return
}

// After the copy the two layouts share one buffer: the source updated
// while the destination is still read, or the destination while the
// source is, leaves the copy.
// CHECK-LABEL: func.func @source_written_after
// CHECK:         linalg.transpose
func.func @source_written_after(%out: memref<3x2xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3xf32>)
  %dst = memref.alloc() : memref<3x2xf32>
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%dst : memref<3x2xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%src : memref<2x3xf32>) {
  ^bb0(%o: f32):
    %a = arith.addf %o, %one : f32
    linalg.yield %a : f32
  }
  memref.dealloc %src : memref<2x3xf32>
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out : memref<3x2xf32>)
  memref.dealloc %dst : memref<3x2xf32>
  return
}

// CHECK-LABEL: func.func @destination_written_after
// CHECK:         linalg.transpose
func.func @destination_written_after(%out: memref<3x2xf32>, %out2: memref<2x3xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3xf32>)
  %dst = memref.alloc() : memref<3x2xf32>
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%dst : memref<3x2xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%dst : memref<3x2xf32>) {
  ^bb0(%o: f32):
    %a = arith.addf %o, %one : f32
    linalg.yield %a : f32
  }
  linalg.copy ins(%src : memref<2x3xf32>) outs(%out2 : memref<2x3xf32>)
  memref.dealloc %src : memref<2x3xf32>
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out : memref<3x2xf32>)
  memref.dealloc %dst : memref<3x2xf32>
  return
}

// Each written once the other is done with (a softmax's probabilities
// updated in place into their gradient after the last read of their
// transposed copy): one buffer, freed after the source's last use.
// CHECK-LABEL: func.func @written_in_turn
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    %[[DST:.*]] = memref.alloc() : memref<3x2xf32>
// CHECK-NEXT:    %[[VIEW:.*]] = memref.transpose %[[DST]]
// CHECK-NEXT:    linalg.fill {{.*}} outs(%[[VIEW]]
// CHECK-NEXT:    linalg.copy ins(%[[DST]] {{.*}} outs(%arg0
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[VIEW]]
// CHECK:         linalg.copy ins(%[[VIEW]] {{.*}} outs(%arg1
// CHECK-NEXT:    memref.dealloc %[[DST]]
// CHECK-NEXT:    return
func.func @written_in_turn(%out: memref<3x2xf32>, %out2: memref<2x3xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3xf32>)
  %dst = memref.alloc() : memref<3x2xf32>
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%dst : memref<3x2xf32>) permutation = [1, 0]
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out : memref<3x2xf32>)
  memref.dealloc %dst : memref<3x2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%src : memref<2x3xf32>) {
  ^bb0(%o: f32):
    %a = arith.addf %o, %one : f32
    linalg.yield %a : f32
  }
  linalg.copy ins(%src : memref<2x3xf32>) outs(%out2 : memref<2x3xf32>)
  memref.dealloc %src : memref<2x3xf32>
  return
}

// A gate's softmax written (batch, token, head, stream), transposed
// through a collapse of the batch and token dimensions into the
// (token, stream, head) layout of the mixing, and summed over tokens
// after the copy: the softmax writes the mixing's buffer through the
// transposed view expanded again, the sum reads it there, the collapse
// and the copy go.
// CHECK-LABEL: func.func @gate_weights
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    %[[DST:.*]] = memref.alloc() : memref<6x2x2xf32>
// CHECK-NEXT:    %[[T:.*]] = memref.transpose %[[DST]] (d0, d1, d2) -> (d0, d2, d1) : memref<6x2x2xf32> to memref<6x2x2xf32, strided<[4, 1, 2]>>
// CHECK-NEXT:    %[[SRC:.*]] = memref.expand_shape %[[T]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 2, 2] : memref<6x2x2xf32, strided<[4, 1, 2]>> into memref<2x3x2x2xf32, strided<[12, 4, 1, 2]>>
// CHECK-NEXT:    linalg.fill {{.*}} outs(%[[SRC]]
// CHECK-NEXT:    linalg.copy ins(%[[DST]] {{.*}} outs(%arg0
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[SRC]] {{.*}} outs(%arg1
// CHECK:         memref.dealloc %[[DST]]
// CHECK-NEXT:    return
func.func @gate_weights(%out: memref<6x2x2xf32>, %sums: memref<2x1x1x2xf32>) {
  %one = arith.constant 1.0 : f32
  %src = memref.alloc() : memref<2x3x2x2xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3x2x2xf32>)
  %flat = memref.collapse_shape %src [[0, 1], [2], [3]] : memref<2x3x2x2xf32> into memref<6x2x2xf32>
  %dst = memref.alloc() : memref<6x2x2xf32>
  linalg.transpose ins(%flat : memref<6x2x2xf32>) outs(%dst : memref<6x2x2xf32>) permutation = [0, 2, 1]
  linalg.copy ins(%dst : memref<6x2x2xf32>) outs(%out : memref<6x2x2xf32>)
  memref.dealloc %dst : memref<6x2x2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%src : memref<2x3x2x2xf32>) outs(%sums : memref<2x1x1x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  memref.dealloc %src : memref<2x3x2x2xf32>
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

// Left alone: the destination's range is read through a chain of views
// made before it (a collapse and an expansion shared between layers),
// which splitting the range would not make again; the copy stays.
// CHECK-LABEL: func.func @view_chain_made_before
// CHECK:         linalg.transpose
func.func @view_chain_made_before(%out: memref<6xf32>, %out2: memref<3x2xf32>) {
  %one = arith.constant 1.0 : f32
  %dst = memref.alloc() : memref<3x2xf32>
  %flat = memref.collapse_shape %dst [[0, 1]] : memref<3x2xf32> into memref<6xf32>
  %again = memref.expand_shape %flat [[0, 1]] output_shape [2, 3] : memref<6xf32> into memref<2x3xf32>
  %again_flat = memref.collapse_shape %again [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  linalg.fill ins(%one : f32) outs(%dst : memref<3x2xf32>)
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out2 : memref<3x2xf32>)
  %src = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%src : memref<2x3xf32>)
  linalg.transpose ins(%src : memref<2x3xf32>) outs(%dst : memref<3x2xf32>) permutation = [1, 0]
  memref.dealloc %src : memref<2x3xf32>
  linalg.copy ins(%again_flat : memref<6xf32>) outs(%out : memref<6xf32>)
  linalg.fill ins(%one : f32) outs(%dst : memref<3x2xf32>)
  linalg.copy ins(%dst : memref<3x2xf32>) outs(%out2 : memref<3x2xf32>)
  memref.dealloc %dst : memref<3x2xf32>
  return
}
