// RUN: mix-opt %s --mix-merge-gpu-modules | FileCheck %s

// Two outlined modules become @mix_kernels; a kernel name taken by another
// is renamed, and every launch follows its kernel.

module attributes {gpu.container_module} {
  gpu.module @f_kernel {
    gpu.func @f_kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    // The same function name in another module.
    gpu.func @f_kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @f
  func.func @f(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // CHECK: gpu.launch_func @mix_kernels::@[[FIRST:f_kernel]] blocks
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    // CHECK: gpu.launch_func @mix_kernels::@[[SECOND:f_kernel_[0-9]+]] blocks
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
}

// CHECK-NOT: gpu.module @f_kernel
// CHECK: gpu.module @mix_kernels {
// CHECK-DAG: gpu.func @[[FIRST]](%{{.*}}: memref<4xf32>) kernel
// CHECK-DAG: gpu.func @[[SECOND]](%{{.*}}: memref<4xf32>) kernel
// CHECK-NOT: gpu.module
