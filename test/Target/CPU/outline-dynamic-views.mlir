// RUN: mix-opt %s --mix-outline-loop-nests | FileCheck %s

// A view at an offset known only at run time (a stream rank's share of a
// tensor) has no bare-pointer form, so it cannot be an argument: it is
// rebuilt inside the outlined function from its source buffer and offset,
// which become the arguments.
// CHECK-LABEL: func.func @share
//  CHECK-SAME:   (%[[A:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<16xf32>, %[[OFF:.*]]: index)
//       CHECK:   call @[[F:share_loop0]](%[[OUT]], %[[A]], %[[OFF]]) : (memref<16xf32>, memref<4x8xf32>, index) -> ()
//       CHECK: func.func @[[F]](%{{.*}}: memref<16xf32>, %[[FA:.*]]: memref<4x8xf32>, %[[FOFF:.*]]: index)
//       CHECK:   %[[V:.*]] = memref.subview %[[FA]][%[[FOFF]], 0] [2, 8] [1, 1]
//       CHECK:   %[[C:.*]] = memref.collapse_shape %[[V]]
//       CHECK:   scf.for
//       CHECK:     memref.load %[[C]]
func.func @share(%a: memref<4x8xf32>, %out: memref<16xf32>, %off: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %v = memref.subview %a[%off, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
  %f = memref.collapse_shape %v [[0, 1]] : memref<2x8xf32, strided<[8, 1], offset: ?>> into memref<16xf32, strided<[1], offset: ?>>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %f[%i] : memref<16xf32, strided<[1], offset: ?>>
    memref.store %x, %out[%i] : memref<16xf32>
  }
  return
}
