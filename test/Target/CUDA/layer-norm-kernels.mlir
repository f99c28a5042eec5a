// RUN: mix-opt %S/Inputs/layer_norm.mlir --mix-layer-norm-kernels --canonicalize | FileCheck %s

// The launches of mix-layer-norm-kernels (emulate-layer-norm.test checks
// their numbers).

// Forward: the (3, 5, 40) input as 15 rows of 40; a block of 256 threads
// a row: two block reductions (the sum, then the centred squares), the
// rsqrt, every element written, then thread 0's mean and 1/std.
// CHECK-LABEL: func.func @fwd_small
// CHECK: %[[X:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<3x5x40xf32> into memref<15x40xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c15, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) workgroup({{.*}} : memref<8xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: math.rsqrt
// CHECK: memref.store {{.*}} : memref<15x40xf32>
// CHECK-COUNT-2: memref.store {{.*}} : memref<15xf32>
// CHECK-NOT: gpu.launch

// Backward: dinput a block a row (its two sums reduced together), then
// the weight's and bias's column sums: 15 chunks of one row in partial
// buffers, folded by a second launch.
// CHECK-LABEL: func.func @grad_small
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c15, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK-COUNT-10: gpu.shuffle xor
// CHECK: memref.store {{.*}} : memref<15x40xf32>
// CHECK: %[[PW:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<15x40xf32>
// CHECK: %[[PB:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<15x40xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c15, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK: memref.store %{{.*}}, %[[PW]]
// CHECK: memref.store %{{.*}}, %[[PB]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK: memref.load %[[PW]]
// CHECK: memref.load %[[PB]]
// CHECK: gpu.dealloc async [%{{.*}}] %[[PW]]
// CHECK: gpu.dealloc async [%{{.*}}] %[[PB]]
// CHECK-NOT: gpu.launch

// The wide case: 201 rows; 101 chunks of two rows over 2 column tiles.
// CHECK-LABEL: func.func @fwd_wide
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-LABEL: func.func @grad_wide
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: gpu.alloc async [%{{.*}}] () : memref<101x300xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c101, {{.*}} = %c1)
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1)
