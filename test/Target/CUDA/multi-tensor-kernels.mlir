// RUN: mix-opt %s --mix-multi-tensor-kernels --canonicalize | FileCheck %s

// The launches of mix-multi-tensor-kernels (emulate-multi-tensor.test
// checks their numbers, and a group of tensors too many for one launch).
// Two tensors: a of 5000 elements (two chunks of 4096) and b of 21 (one
// chunk), so 3 blocks; a block whose index is 2 or more works on b.

// The sum of squares: a partial sum a chunk, in a temporary; then one
// block adds the three partials.
// CHECK-LABEL: func.func @sumsq
// CHECK-SAME:    (%[[A:.*]]: memref<5000xf32>, %[[B:.*]]: memref<3x7xf32>, %[[R:.*]]: memref<f32>)
// CHECK: %[[PARTIALS:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<3xf32>
// CHECK: gpu.launch blocks(%[[BLOCK:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c3, {{.*}} = %c1, {{.*}} = %c1) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) workgroup({{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-DAG: memref.cast %[[A]] : memref<5000xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK-DAG: %[[BFLAT:.*]] = memref.collapse_shape %[[B]] {{\[\[}}0, 1]] : memref<3x7xf32> into memref<21xf32>
// CHECK-DAG: memref.cast %[[BFLAT]] : memref<21xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK: %[[ISB:.*]] = arith.cmpi uge, %[[BLOCK]], %c2 : index
// CHECK: arith.select %[[ISB]], %{{.*}}, %{{.*}} : memref<?xf32, strided<[1], offset: ?>>
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[PARTIALS]][%[[BLOCK]]] : memref<3xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK: memref.load %[[PARTIALS]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[R]][] : memref<f32>
// CHECK: gpu.dealloc async [%{{.*}}] %[[PARTIALS]]
// CHECK-NOT: gpu.launch
func.func @sumsq(%a: memref<5000xf32>, %b: memref<3x7xf32>, %r: memref<f32>) {
  mix.multi_tensor_sum_squares_buffers %a, %b : memref<5000xf32>, memref<3x7xf32> into %r : memref<f32>
  return
}

// AdamW: one launch of 3 blocks; a block selects its tensor's parameter,
// gradient and moments; b (rank 2) decays, a does not; each thread
// updates its elements in place.
// CHECK-LABEL: func.func @adamw
// CHECK: gpu.launch blocks(%[[BLOCK:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c3, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: %[[ISB:.*]] = arith.cmpi uge, %[[BLOCK]], %c2 : index
// CHECK-COUNT-4: arith.select %[[ISB]], %{{.*}}, %{{.*}} : memref<?xf32, strided<[1], offset: ?>>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: math.sqrt
// CHECK-COUNT-3: memref.store
// CHECK-NOT: gpu.launch
func.func @adamw(%a: memref<5000xf32>, %b: memref<3x7xf32>,
                 %ga: memref<5000xf32>, %gb: memref<3x7xf32>,
                 %ma: memref<5000xf32>, %mb: memref<3x7xf32>,
                 %va: memref<5000xf32>, %vb: memref<3x7xf32>,
                 %h: memref<3xf32>, %c: memref<f32>) {
  mix.multi_tensor_adamw_buffers params(%a, %b : memref<5000xf32>, memref<3x7xf32>) grads(%ga, %gb : memref<5000xf32>, memref<3x7xf32>) m(%ma, %mb : memref<5000xf32>, memref<3x7xf32>) v(%va, %vb : memref<5000xf32>, memref<3x7xf32>) hyper %h : memref<3xf32> clip %c : memref<f32> {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: false, true>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64}
  return
}
