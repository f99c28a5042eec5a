// RUN: mix-opt %s --mix-kernel-memref-offsets | FileCheck %s

// mix-kernel-memref-offsets: a kernel argument whose offset (or a stride)
// is only known at run time cannot be passed as a bare pointer; it is
// passed as its base buffer and the dynamic parts of its layout, and the
// kernel rebuilds the view. A static view is left as it is.

// CHECK-LABEL: func.func @host
// CHECK-SAME:    (%[[BUF:.*]]: memref<3x5x4xf32>, %[[B:.*]]: index)
// CHECK:         %[[VIEW:.*]] = memref.subview %[[BUF]]
// CHECK:         %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[VIEW]]
// CHECK:         gpu.launch_func @mix_kernels::@k {{.*}} args(%[[BASE]] : memref<f32>, %[[OFF]] : index, %[[BUF]] : memref<3x5x4xf32>)
// CHECK:       gpu.func @k(%[[KB:.*]]: memref<f32>, %[[KO:.*]]: index, %[[S:.*]]: memref<3x5x4xf32>) kernel
// CHECK:         %[[V:.*]] = memref.reinterpret_cast %[[KB]] to offset: [%[[KO]]], sizes: [1, 5, 4], strides: [20, 4, 1] : memref<f32> to memref<1x5x4xf32, strided<[20, 4, 1], offset: ?>>
// CHECK:         memref.load %[[V]]
// CHECK:         memref.store %{{.*}}, %[[S]]
module attributes {gpu.container_module} {
  func.func @host(%buf: memref<3x5x4xf32>, %b: index) {
    %c1 = arith.constant 1 : index
    %view = memref.subview %buf[%b, 0, 0] [1, 5, 4] [1, 1, 1] : memref<3x5x4xf32> to memref<1x5x4xf32, strided<[20, 4, 1], offset: ?>>
    gpu.launch_func @mix_kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%view : memref<1x5x4xf32, strided<[20, 4, 1], offset: ?>>, %buf : memref<3x5x4xf32>)
    return
  }
  gpu.module @mix_kernels {
    gpu.func @k(%v: memref<1x5x4xf32, strided<[20, 4, 1], offset: ?>>, %s: memref<3x5x4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %v[%c0, %c0, %c0] : memref<1x5x4xf32, strided<[20, 4, 1], offset: ?>>
      memref.store %x, %s[%c0, %c0, %c0] : memref<3x5x4xf32>
      gpu.return
    }
  }
}
