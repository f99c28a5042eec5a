// RUN: mix-opt %s --mix-memory-to-device | FileCheck %s

// Allocations become device allocations issued and waited on a stream,
// copies become linalg.copy (a kernel later), constants get a device copy.

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
func.func @buffers(%a: memref<4xf32>, %out: memref<4xf32>) {
  // CHECK: %[[S0:.*]] = gpu.wait async
  // CHECK: %[[T:.*]], %[[T0:.*]] = gpu.alloc async [%[[S0]]] () : memref<4xf32>
  // CHECK: gpu.wait [%[[T0]]]
  %t = memref.alloc() : memref<4xf32>
  // CHECK: %[[S1:.*]] = gpu.wait async
  // CHECK: %[[K:.*]], %[[T1:.*]] = gpu.alloc async [%[[S1]]] () : memref<4xf32>
  // CHECK: gpu.wait [%[[T1]]]
  // CHECK: %[[S2:.*]] = gpu.wait async
  // CHECK: %[[T2:.*]] = gpu.memcpy async [%[[S2]]] %[[K]], %[[HOST:.*]] : memref<4xf32>, memref<4xf32>
  // CHECK: gpu.wait [%[[T2]]]
  %k = memref.get_global @table : memref<4xf32>
  // CHECK: linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[T]] : memref<4xf32>)
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  // CHECK: linalg.add ins(%[[T]], %[[K]] : {{.*}}) outs(%[[OUT]] : memref<4xf32>)
  linalg.add ins(%t, %k : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>)
  // CHECK: %[[S3:.*]] = gpu.wait async
  // CHECK: %[[T3:.*]] = gpu.dealloc async [%[[S3]]] %[[T]] : memref<4xf32>
  // CHECK: gpu.wait [%[[T3]]]
  memref.dealloc %t : memref<4xf32>
  // The constant's device copy lives until the return.
  // CHECK: gpu.dealloc async [%{{.*}}] %[[K]] : memref<4xf32>
  // CHECK-NEXT: gpu.wait
  // CHECK-NEXT: return
  return
}

// CHECK-LABEL: func.func @stack
func.func @stack(%out: memref<f32>) {
  // CHECK-NOT: memref.alloca
  // CHECK: %[[B:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<f32>
  %s = memref.alloca() : memref<f32>
  // CHECK: linalg.copy ins(%[[B]] : memref<f32>)
  memref.copy %s, %out : memref<f32> to memref<f32>
  // CHECK: gpu.dealloc async [%{{.*}}] %[[B]] : memref<f32>
  // CHECK: return
  return
}

// The deallocation lowering's bookkeeping (i1 flags, index lists) is host
// data: it stays where it is.
// CHECK-LABEL: func.func @bookkeeping
func.func @bookkeeping() {
  // CHECK-NEXT: memref.alloca() : memref<4xi1>
  // CHECK-NEXT: memref.alloc() : memref<2xindex>
  // CHECK-NEXT: memref.dealloc
  // CHECK-NEXT: return
  %flags = memref.alloca() : memref<4xi1>
  %list = memref.alloc() : memref<2xindex>
  memref.dealloc %list : memref<2xindex>
  return
}
