// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-transposed-operands))' | FileCheck %s --check-prefixes=CHECK,PRODUCTS
// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-transposed-operands{generics=true}))' | FileCheck %s --check-prefixes=CHECK,GENERICS

// @generic_reader's maps, printed first:
// GENERICS-DAG:   #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// GENERICS-DAG:   #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>

// A product whose operand is a transposed copy that nothing else reads
// reads the transposed view of the copy's source instead; the copy and its
// buffer go. Bufferization reuses one buffer for successive copies: each
// copy's reader is what accesses the buffer before the next write to it.

// CHECK-LABEL: func.func @reuse
// CHECK-SAME:    (%[[X:.*]]: memref<8x4xf32>, %[[W1:.*]]: memref<6x4xf32>, %[[W2:.*]]: memref<6x4xf32>, %[[Y1:.*]]: memref<8x6xf32>, %[[Y2:.*]]: memref<8x6xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[T1:.*]] = memref.transpose %[[W1]] (d0, d1) -> (d1, d0) : memref<6x4xf32> to memref<4x6xf32, strided<[1, 4]>>
// CHECK-NEXT:    linalg.matmul ins(%[[X]], %[[T1]] : memref<8x4xf32>, memref<4x6xf32, strided<[1, 4]>>) outs(%[[Y1]] : memref<8x6xf32>)
// CHECK-NEXT:    %[[T2:.*]] = memref.transpose %[[W2]] (d0, d1) -> (d1, d0)
// CHECK-NEXT:    linalg.matmul ins(%[[X]], %[[T2]] : {{.*}}) outs(%[[Y2]] : memref<8x6xf32>)
// CHECK-NEXT:    return
func.func @reuse(%x: memref<8x4xf32>, %w1: memref<6x4xf32>, %w2: memref<6x4xf32>, %y1: memref<8x6xf32>, %y2: memref<8x6xf32>) {
  %t = memref.alloc() : memref<4x6xf32>
  linalg.transpose ins(%w1 : memref<6x4xf32>) outs(%t : memref<4x6xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %t : memref<8x4xf32>, memref<4x6xf32>) outs(%y1 : memref<8x6xf32>)
  linalg.transpose ins(%w2 : memref<6x4xf32>) outs(%t : memref<4x6xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %t : memref<8x4xf32>, memref<4x6xf32>) outs(%y2 : memref<8x6xf32>)
  memref.dealloc %t : memref<4x6xf32>
  return
}

// Batched, through the collapse of the batch dimensions (P^T for dV).
// CHECK-LABEL: func.func @batched
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[T:.*]] = memref.transpose %arg0 (d0, d1, d2, d3) -> (d0, d1, d3, d2)
// CHECK-NEXT:    %[[C:.*]] = memref.collapse_shape %[[T]] {{\[}}[0, 1], [2], [3]]
// CHECK-NEXT:    linalg.batch_matmul ins(%[[C]], %arg1 : memref<6x5x3xf32, strided<[15, 1, 5]>>, memref<6x3x7xf32>)
func.func @batched(%p: memref<2x3x3x5xf32>, %g: memref<6x3x7xf32>, %out: memref<6x5x7xf32>) {
  %t = memref.alloc() : memref<2x3x5x3xf32>
  linalg.transpose ins(%p : memref<2x3x3x5xf32>) outs(%t : memref<2x3x5x3xf32>) permutation = [0, 1, 3, 2]
  %c = memref.collapse_shape %t [[0, 1], [2], [3]] : memref<2x3x5x3xf32> into memref<6x5x3xf32>
  linalg.batch_matmul ins(%c, %g : memref<6x5x3xf32>, memref<6x3x7xf32>) outs(%out : memref<6x5x7xf32>)
  memref.dealloc %t : memref<2x3x5x3xf32>
  return
}

// Left alone: the source is written between the copy and the product; the
// copy has a second reader that is not a product; the copy is the
// product's accumulator.
// CHECK-LABEL: func.func @unsafe
// CHECK-COUNT-3: linalg.transpose
// CHECK-NOT:     memref.transpose
func.func @unsafe(%x: memref<8x4xf32>, %w: memref<6x4xf32>, %y: memref<8x6xf32>, %s: memref<4x4xf32>, %z: memref<4x4xf32>, %y2: memref<4x6xf32>) {
  %cst = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x6xf32>
  linalg.transpose ins(%w : memref<6x4xf32>) outs(%t : memref<4x6xf32>) permutation = [1, 0]
  linalg.fill ins(%cst : f32) outs(%w : memref<6x4xf32>)
  linalg.matmul ins(%x, %t : memref<8x4xf32>, memref<4x6xf32>) outs(%y : memref<8x6xf32>)
  %u = memref.alloc() : memref<4x6xf32>
  linalg.transpose ins(%w : memref<6x4xf32>) outs(%u : memref<4x6xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %u : memref<8x4xf32>, memref<4x6xf32>) outs(%y : memref<8x6xf32>)
  linalg.copy ins(%u : memref<4x6xf32>) outs(%y2 : memref<4x6xf32>)
  %v = memref.alloc() : memref<4x4xf32>
  linalg.transpose ins(%s : memref<4x4xf32>) outs(%v : memref<4x4xf32>) permutation = [1, 0]
  linalg.matmul ins(%s, %z : memref<4x4xf32>, memref<4x4xf32>) outs(%v : memref<4x4xf32>)
  memref.dealloc %t : memref<4x6xf32>
  memref.dealloc %u : memref<4x6xf32>
  memref.dealloc %v : memref<4x4xf32>
  return
}

// Several products read the copy (a stream mixture's dH^T, read by each
// stream's kernel gradient): each reads the view of the source, through a
// collapse of its own where it read one.
// CHECK-LABEL: func.func @readers
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[T:.*]] = memref.transpose %arg0 (d0, d1) -> (d1, d0) : memref<8x4xf32> to memref<4x8xf32, strided<[1, 4]>>
//  CHECK-NEXT:   linalg.matmul ins(%[[T]], %arg1 : memref<4x8xf32, strided<[1, 4]>>, memref<8x6xf32>) outs(%arg3 : memref<4x6xf32>)
//  CHECK-NEXT:   linalg.matmul ins(%[[T]], %arg2 : memref<4x8xf32, strided<[1, 4]>>, memref<8x6xf32>) outs(%arg4 : memref<4x6xf32>)
//  CHECK-NEXT:   return
func.func @readers(%dh: memref<8x4xf32>, %a: memref<8x6xf32>, %b: memref<8x6xf32>, %ga: memref<4x6xf32>, %gb: memref<4x6xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  linalg.transpose ins(%dh : memref<8x4xf32>) outs(%t : memref<4x8xf32>) permutation = [1, 0]
  linalg.matmul ins(%t, %a : memref<4x8xf32>, memref<8x6xf32>) outs(%ga : memref<4x6xf32>)
  linalg.matmul ins(%t, %b : memref<4x8xf32>, memref<8x6xf32>) outs(%gb : memref<4x6xf32>)
  memref.dealloc %t : memref<4x8xf32>
  return
}

// A generic op among the readers (a gate's gradient summed over tokens):
// with `generics` it reads the source through its indexing map composed
// with the permutation, the product through the view; without, the copy
// stays.
// CHECK-LABEL:    func.func @generic_reader
// PRODUCTS:         linalg.transpose
// GENERICS-NOT:     memref.alloc
// GENERICS-NOT:     linalg.transpose
// GENERICS:         %[[T:.*]] = memref.transpose %arg0 (d0, d1, d2) -> (d1, d0, d2) : memref<6x2x3xf32> to memref<2x6x3xf32, strided<[3, 6, 1]>>
// GENERICS-NEXT:    linalg.batch_matmul ins(%[[T]], %arg1 : memref<2x6x3xf32, strided<[3, 6, 1]>>, memref<2x3x4xf32>)
// GENERICS-NEXT:    linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : memref<6x2x3xf32>) outs(%arg3 : memref<2x1x3xf32>)
// GENERICS:         return
func.func @generic_reader(%g: memref<6x2x3xf32>, %k: memref<2x3x4xf32>, %gk: memref<2x6x4xf32>, %sum: memref<2x1x3xf32>) {
  %t = memref.alloc() : memref<2x6x3xf32>
  linalg.transpose ins(%g : memref<6x2x3xf32>) outs(%t : memref<2x6x3xf32>) permutation = [1, 0, 2]
  linalg.batch_matmul ins(%t, %k : memref<2x6x3xf32>, memref<2x3x4xf32>) outs(%gk : memref<2x6x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%t : memref<2x6x3xf32>) outs(%sum : memref<2x1x3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<2x6x3xf32>
  return
}
