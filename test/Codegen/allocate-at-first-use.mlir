// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-allocate-at-first-use))' | FileCheck %s

// Bufferization leaves allocations where the (CSE'd) empty tensors were:
// each moves to just before the first operation of its block that uses it,
// a use in a nested region counting as its operation's. An allocation with
// operands (a dynamic size) stays.

// CHECK-LABEL: func.func @step
// CHECK:         %[[OUTER:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:    memref.copy %arg0, %arg1
// CHECK-NEXT:    %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    memref.copy %arg0, %[[A]]
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      memref.copy %[[A]], %[[B]]
// CHECK:         memref.dealloc %[[A]]
// CHECK:         memref.dealloc %[[B]]
func.func @step(%in: memref<4xf32>, %out: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<4xf32>
  %a = memref.alloc() : memref<4xf32>
  %dyn = memref.alloc(%n) : memref<?xf32>
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  memref.copy %in, %a : memref<4xf32> to memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  }
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  memref.dealloc %dyn : memref<?xf32>
  return
}

// CHECK-LABEL: func.func @nested_use
// CHECK-NEXT:    memref.copy %arg0, %arg0
// CHECK-NEXT:    %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    scf.execute_region
// CHECK-NEXT:      memref.copy %arg0, %[[C]]
func.func @nested_use(%in: memref<4xf32>) {
  %c = memref.alloc() : memref<4xf32>
  memref.copy %in, %in : memref<4xf32> to memref<4xf32>
  scf.execute_region {
    memref.copy %in, %c : memref<4xf32> to memref<4xf32>
    scf.yield
  }
  memref.dealloc %c : memref<4xf32>
  return
}
