// RUN: mix-opt %S/Inputs/cross_entropy.mlir --mix-cross-entropy-kernels --canonicalize | FileCheck %s

// The launches of mix-cross-entropy-kernels (emulate-cross-entropy.test
// checks their numbers).

// Forward: the rows' losses go to a temporary; a block of 256 threads a
// row (6 rows) combines (max, sum) pairs by shuffles, then across its 8
// warps in workgroup memory; one more block sums the losses into the mean.
// CHECK-LABEL: func.func @fwd_i32
// CHECK: %[[LOSSES:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<6xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) workgroup({{.*}} : memref<8xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-10: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: math.log
// CHECK: memref.store {{.*}} : memref<2x3xf32>
// CHECK: memref.store {{.*}}, %[[LOSSES]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}}[] : memref<f32>
// CHECK: gpu.dealloc async [%{{.*}}] %[[LOSSES]]
// CHECK-NOT: gpu.launch

// Backward: one launch, a block a row, every element written once.
// CHECK-LABEL: func.func @grad_i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK: math.exp
// CHECK: memref.store {{.*}} : memref<2x3x300xf32>
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func @grad_i32_scaled

// The loss and its gradient together: the forward launch of rows computes
// each row's log-sum-exp in every thread and writes the row's gradient
// right after its loss; then the mean. No backward launch. (The
// log-sum-exps, a temporary only the two ops read, are not stored once
// canonicalization sees that nothing reads them.)
// CHECK-LABEL: func.func @both_i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK: gpu.barrier
// CHECK: math.log
// CHECK: math.exp
// CHECK: memref.store {{.*}} : memref<2x3x300xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: memref.store {{.*}}[] : memref<f32>
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func @both_apart
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6,
// CHECK-NOT: memref.store {{.*}} : memref<2x3x300xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1,
// CHECK: linalg.fill
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6,
// CHECK: memref.store {{.*}} : memref<2x3x300xf32>
// CHECK-LABEL: func.func @both_device
// CHECK: %[[DL:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<2x3x300xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6,
// CHECK: memref.store {{.*}}, %[[DL]][{{.*}}] : memref<2x3x300xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1,
// CHECK: linalg.generic
// CHECK-NOT: gpu.launch
// CHECK: gpu.dealloc async [%{{.*}}] %[[DL]]
