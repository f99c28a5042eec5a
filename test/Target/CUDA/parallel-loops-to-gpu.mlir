// RUN: mix-opt %s --mix-parallel-loops-to-gpu --cse | FileCheck %s

// A 3 x 300 scf.parallel (900 iterations) becomes ceil(900 / 256) = 4
// blocks of 256 threads; thread t runs iteration (t / 300, t % 300) when
// t < 900. The inner sequential loop stays in the kernel body.

// CHECK-LABEL: func.func @rows
func.func @rows(%x: memref<3x300x4xf32>, %y: memref<3x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c300 = arith.constant 300 : index
  // CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
  // CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
  // CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C4]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDX:.*]] = %[[C256]], {{.*}})
  // CHECK: %[[M:.*]] = arith.muli %[[BX]], %[[BDX]] : index
  // CHECK: %[[T:.*]] = arith.addi %[[M]], %[[TX]] : index
  // CHECK: %[[C900:.*]] = arith.constant 900 : index
  // CHECK: %[[IN:.*]] = arith.cmpi ult, %[[T]], %[[C900]] : index
  // CHECK: scf.if %[[IN]] {
  // CHECK: %[[C300:.*]] = arith.constant 300 : index
  // CHECK: %[[J:.*]] = arith.remui %[[T]], %[[C300]] : index
  // CHECK: %[[I:.*]] = arith.divui %[[T]], %[[C300]] : index
  // CHECK: %[[JS:.*]] = arith.muli %[[J]], %[[ONE:.*]] : index
  // CHECK: %[[JV:.*]] = arith.addi %[[ZERO:.*]], %[[JS]] : index
  // CHECK: %[[IS:.*]] = arith.muli %[[I]], %[[ONE]] : index
  // CHECK: %[[IV:.*]] = arith.addi %[[ZERO]], %[[IS]] : index
  // CHECK: scf.for %[[K:.*]] =
  // CHECK: memref.load %{{.*}}[%[[IV]], %[[JV]], %[[K]]] : memref<3x300x4xf32>
  // CHECK: memref.store %{{.*}}, %{{.*}}[%[[IV]], %[[JV]]] : memref<3x300xf32>
  // CHECK: gpu.terminator
  // CHECK-NOT: scf.parallel
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c300) step (%c1, %c1) {
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %j, %k] : memref<3x300x4xf32>
      %a = memref.load %y[%i, %j] : memref<3x300xf32>
      %s = arith.addf %v, %a : f32
      memref.store %s, %y[%i, %j] : memref<3x300xf32>
    }
    scf.reduce
  }
  return
}

// A small loop: one block of exactly as many threads as iterations; a
// step and a lower bound are folded into the induction variable.
// CHECK-LABEL: func.func @small
func.func @small(%y: memref<20xf32>) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c20 = arith.constant 20 : index
  %f = arith.constant 1.0 : f32
  // (20 - 2) / 3 rounded up = 6 iterations: 2, 5, 8, 11, 14, 17.
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
  // CHECK-DAG: %[[SIX:.*]] = arith.constant 6 : index
  // CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[ONE]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDX:.*]] = %[[SIX]], {{.*}})
  // CHECK: %[[M:.*]] = arith.muli %[[BX]], %[[BDX]] : index
  // CHECK: %[[T:.*]] = arith.addi %[[M]], %[[TX]] : index
  // CHECK: arith.cmpi ult, %[[T]], %[[SIX]] : index
  // CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
  // CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
  // CHECK: %[[SCALED:.*]] = arith.muli %[[T]], %[[C3]] : index
  // CHECK: %[[IV:.*]] = arith.addi %[[C2]], %[[SCALED]] : index
  // CHECK: memref.store %{{.*}}, %{{.*}}[%[[IV]]]
  scf.parallel (%i) = (%c2) to (%c20) step (%c3) {
    memref.store %f, %y[%i] : memref<20xf32>
    scf.reduce
  }
  return
}
