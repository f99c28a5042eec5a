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
