// RUN: mix-opt %s --mix-outline-loop-nests | FileCheck %s

// Two nests that differ only in their buffers share one function; a nest
// with other loop bounds gets its own. Constants are cloned into the
// outlined function, buffers passed.
// CHECK-LABEL: func.func @glue
//  CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[C:.*]]: memref<4xf32>)
//   CHECK-NOT:   scf.for
//       CHECK:   call @[[F:glue_loop[0-9]+]](%[[A]])
//       CHECK:   call @[[F]](%[[B]])
//       CHECK:   call @[[G:glue_loop[0-9]+]](%[[C]])
//   CHECK-NOT:   scf.for
//       CHECK:   return
//       CHECK: func.func @[[F]](%[[X:.*]]: memref<8xf32>)
//   CHECK-DAG:   %[[TWO:.*]] = arith.constant 2.0{{.*}} : f32
//   CHECK-DAG:   %[[EIGHT:.*]] = arith.constant 8 : index
//       CHECK:   scf.for %[[I:.*]] = %{{.*}} to %[[EIGHT]]
//       CHECK:     memref.load %[[X]][%[[I]]]
//       CHECK:     arith.mulf %{{.*}}, %[[TWO]]
//       CHECK: func.func @[[G]](%{{.*}}: memref<4xf32>)
//   CHECK-NOT: func.func @glue_loop
func.func @glue(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %a[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %b[%i] : memref<8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %b[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %c[%i] : memref<4xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %c[%i] : memref<4xf32>
  }
  return
}
