// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-free-after-last-use))' | FileCheck %s

// The deallocation pipeline frees at the end of the block; each buffer is
// freed instead right after the block's last use of it or of a view of it,
// a use inside a later op's region counting as that op's; a buffer that
// is never used is freed at once.

// CHECK-LABEL: func.func @step
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK:         %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    memref.dealloc %[[C]]
// CHECK-NEXT:    %[[AV:.*]] = memref.collapse_shape %[[A]]
// CHECK-NEXT:    memref.copy %arg0, %[[AV]]
// CHECK-NEXT:    memref.copy %[[AV]], %[[B]]
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    scf.for
// CHECK:           memref.load %[[B]]
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NEXT:    memref.copy %arg0, %arg1
// CHECK-NEXT:    return
func.func @step(%in: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<2x2xf32>
  %b = memref.alloc() : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  %av = memref.collapse_shape %a [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  memref.copy %in, %av : memref<4xf32> to memref<4xf32>
  memref.copy %av, %b : memref<4xf32> to memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    memref.store %x, %out[%i] : memref<4xf32>
  }
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<2x2xf32>
  memref.dealloc %b : memref<4xf32>
  memref.dealloc %c : memref<4xf32>
  return
}

// A buffer allocated in another block than its dealloc is left alone.
// CHECK-LABEL: func.func @other_block
// CHECK:         scf.for
// CHECK:           memref.dealloc
// CHECK:         }
// CHECK-NEXT:    return
func.func @other_block(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloc() : memref<4xf32>
    memref.copy %out, %t : memref<4xf32> to memref<4xf32>
    memref.dealloc %t : memref<4xf32>
  }
  return
}
