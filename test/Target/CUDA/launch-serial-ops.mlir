// RUN: mix-opt %s --mix-launch-serial-ops --cse | FileCheck %s

// Ops with no parallel loop move into a one-thread launch; the others stay.

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @serial
func.func @serial(%x: memref<8xf32>, %sum: memref<f32>, %y: memref<8xf32>) {
  // A full reduction: one thread.
  // CHECK: %[[ONE:.*]] = arith.constant 1 : index
  // CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
  // CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction"]
  // CHECK: gpu.terminator
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%x : memref<8xf32>) outs(%sum : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  // A rank-0 update: one thread.
  // CHECK: gpu.launch
  // CHECK-NEXT: linalg.generic {{.*}}iterator_types = []
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%sum : memref<f32>) outs(%sum : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }
  // A parallel loop: left to mix-parallel-loops-to-gpu.
  // CHECK-NOT: gpu.launch
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }
  return
}

// The embedding gradient's scatter-add: every store and every load of the
// stored buffer index their last dimension by the inner induction
// variable, so each of the 64 channels gets a thread that runs the 16
// tokens in order.
// CHECK-LABEL: func.func @scatter
// CHECK-SAME: (%[[IDS:.*]]: memref<16xi32>, %[[DY:.*]]: memref<16x64xf32>, %[[G:.*]]: memref<256x64xf32>)
func.func @scatter(%ids: memref<16xi32>, %dy: memref<16x64xf32>, %g: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  // CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
  // CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDX:.*]] = %[[C64]], {{.*}})
  // CHECK: %[[T:.*]] = arith.addi %{{.*}}, %[[TX]] : index
  // CHECK: scf.if
  // CHECK: %[[C:.*]] = arith.addi %{{.*}}, %{{.*}} : index
  // CHECK: scf.for %[[TOK:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
  // CHECK: %[[ID:.*]] = memref.load %[[IDS]][%[[TOK]]]
  // CHECK: %[[ROW:.*]] = arith.index_cast %[[ID]]
  // CHECK-NOT: scf.for
  // CHECK: memref.load %[[DY]][%[[TOK]], %[[C]]]
  // CHECK: memref.load %[[G]][%[[ROW]], %[[C]]]
  // CHECK: memref.store %{{.*}}, %[[G]][%[[ROW]], %[[C]]]
  scf.for %t = %c0 to %c16 step %c1 {
    %id = memref.load %ids[%t] : memref<16xi32>
    %row = arith.index_cast %id : i32 to index
    scf.for %c = %c0 to %c64 step %c1 {
      %d = memref.load %dy[%t, %c] : memref<16x64xf32>
      %old = memref.load %g[%row, %c] : memref<256x64xf32>
      %new = arith.addf %old, %d : f32
      memref.store %new, %g[%row, %c] : memref<256x64xf32>
    }
  }
  return
}

// A store whose last index is not the inner induction variable: iterations
// may collide, so the nest runs whole on one thread.
// CHECK-LABEL: func.func @colliding
func.func @colliding(%x: memref<4x8xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  // CHECK: %[[ONE:.*]] = arith.constant 1 : index
  // CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: scf.for
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      memref.store %v, %y[%j, %i] : memref<8x4xf32>
    }
  }
  return
}

// The host's bookkeeping (i1 flags in host memory) stays on the host.
// CHECK-LABEL: func.func @bookkeeping
func.func @bookkeeping(%flags: memref<4xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %false = arith.constant false
  // CHECK-NOT: gpu.launch
  // CHECK: scf.for
  // CHECK: memref.store
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %false, %flags[%i] : memref<4xi1>
  }
  return
}
