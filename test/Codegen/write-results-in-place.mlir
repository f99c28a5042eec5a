// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-write-results-in-place))' | FileCheck %s

// Results that buffer-results-to-out-params left as a copy at the end (an
// allocation returned through a reshape, or not hoisted) are computed in
// their out-parameter: the allocation becomes a view of it, and the copy
// and the frees go.

// CHECK-LABEL: func.func @grads
//  CHECK-SAME:     (%[[IN:.*]]: memref<4x2xf32>, %[[OUT0:.*]]: memref<8xf32>, %[[OUT1:.*]]: memref<4x2xf32>, %[[OUT2:.*]]: memref<4x2xf32>)
//   CHECK-NOT:   memref.alloc
//       CHECK:   %[[V:.*]] = memref.expand_shape %[[OUT0]] {{\[\[}}0, 1]] output_shape [4, 2]
//       CHECK:   memref.copy %[[IN]], %[[V]]
//       CHECK:   memref.copy %[[IN]], %[[OUT1]]
//       CHECK:   %[[KEPT:.*]] = memref.alloc() : memref<4x2xf32>
//       CHECK:   memref.copy %[[IN]], %[[KEPT]]
//       CHECK:   memref.copy %[[KEPT]], %[[OUT2]]
//       CHECK:   memref.copy %[[KEPT]], %[[IN]]
//   CHECK-NOT:   memref.copy
//       CHECK:   return
func.func @grads(%in: memref<4x2xf32>, %out0: memref<8xf32>, %out1: memref<4x2xf32>, %out2: memref<4x2xf32>) {
  %a = memref.alloc() : memref<4x2xf32>
  memref.copy %in, %a : memref<4x2xf32> to memref<4x2xf32>
  %b = memref.alloc() : memref<4x2xf32>
  memref.copy %in, %b : memref<4x2xf32> to memref<4x2xf32>
  // Read after its copy into the out-parameter: stays.
  %c = memref.alloc() : memref<4x2xf32>
  memref.copy %in, %c : memref<4x2xf32> to memref<4x2xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x2xf32> into memref<8xf32>
  memref.copy %flat, %out0 : memref<8xf32> to memref<8xf32>
  memref.dealloc %a : memref<4x2xf32>
  memref.copy %b, %out1 : memref<4x2xf32> to memref<4x2xf32>
  memref.dealloc %b : memref<4x2xf32>
  memref.copy %c, %out2 : memref<4x2xf32> to memref<4x2xf32>
  memref.copy %c, %in : memref<4x2xf32> to memref<4x2xf32>
  memref.dealloc %c : memref<4x2xf32>
  return
}
