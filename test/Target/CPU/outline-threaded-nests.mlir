// RUN: mix-opt %s --mix-outline-loop-nests=thread-ranges=true | FileCheck %s

// A parallel nest with enough work (here 128 x 256 iterations) is outlined
// to run a range [t0, t1) of its outer iterations, counted from 0, and is
// marked for mix-parallelize-outlined-calls; the call covers them all.
// CHECK-LABEL: func.func @big
//  CHECK-SAME:   (%[[X:.*]]: memref<256x256xf32>)
//       CHECK:   %[[TRIPS:.*]] = arith.constant 128 : index
//  CHECK-NEXT:   call @[[F:big_loop0]](%[[ZERO:.*]], %[[TRIPS]], %[[X]]) : (index, index, memref<256x256xf32>) -> ()
func.func @big(%x: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c256) step (%c2, %c1) {
    %v = memref.load %x[%i, %j] : memref<256x256xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %x[%i, %j] : memref<256x256xf32>
    scf.reduce
  }
  return
}

// Too little work to wake a second thread: outlined as before.
// CHECK-LABEL: func.func @small
//       CHECK:   call @[[G:small_loop0]](%{{.*}}) : (memref<8x8xf32>) -> ()
func.func @small(%x: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %x[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  return
}

// A float argument cannot travel through mix_parallel_for's int64 array.
// CHECK-LABEL: func.func @scaled
//       CHECK:   call @[[H:scaled_loop0]](%{{.*}}, %{{.*}}) : (memref<256x256xf32>, f32) -> ()
func.func @scaled(%x: memref<256x256xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c256) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<256x256xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %x[%i, %j] : memref<256x256xf32>
    scf.reduce
  }
  return
}

// The threaded function: the outer loop runs t in [t0, t1) with step 1 and
// the original index is 0 + t * 2; the inner dimension is unchanged.
//       CHECK: func.func @[[F]](%[[T0:.*]]: index, %[[T1:.*]]: index, %[[FX:.*]]: memref<256x256xf32>) attributes {mix.threaded}
//       CHECK:   scf.parallel (%[[T:.*]], %[[J:.*]]) = (%[[T0]], %{{.*}}) to (%[[T1]], %{{.*}}) step (%{{.*}}, %{{.*}})
//       CHECK:     %[[S:.*]] = arith.muli %[[T]], %{{.*}} : index
//       CHECK:     %[[I:.*]] = arith.addi %{{.*}}, %[[S]] : index
//       CHECK:     memref.load %[[FX]][%[[I]], %[[J]]]
//       CHECK: func.func @[[G]](%{{.*}}: memref<8x8xf32>) {
//       CHECK: func.func @[[H]](%{{.*}}: memref<256x256xf32>, %{{.*}}: f32) {
