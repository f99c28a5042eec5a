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

// --precision bf16: the weights' roundings at the start of the step,
// separated by their outputs' allocations only, are one launch over both
// tensors (3 blocks), where the last of them was; each thread stores its
// elements rounded. A rounding after another op is a run of its own (one
// rounding: left to the elementwise lowering).
// CHECK-LABEL: func.func @roundings
// CHECK-SAME:    (%[[A:.*]]: memref<5000xf32>, %[[B:.*]]: memref<3x7xf32>, %[[C:.*]]: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK: %[[AR:.*]] = memref.alloc() : memref<5000xbf16>
// CHECK: %[[BR:.*]] = memref.alloc() : memref<3x7xbf16>
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in ({{.*}} = %c3, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// CHECK-DAG: memref.cast %[[AR]] : memref<5000xbf16> to memref<?xbf16, strided<[1], offset: ?>>
// CHECK-DAG: memref.collapse_shape %[[BR]] {{\[\[}}0, 1]] : memref<3x7xbf16> into memref<21xbf16>
// CHECK: scf.for
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xf32, strided<[1], offset: ?>>
// CHECK: %[[R:.*]] = arith.truncf %[[V]] : f32 to bf16
// CHECK: memref.store %[[R]], %{{.*}}[%{{.*}}] : memref<?xbf16, strided<[1], offset: ?>>
// CHECK: gpu.terminator
// CHECK: linalg.generic {{.*}} ins(%[[B]], %[[B]]
// CHECK: linalg.generic {{.*}} ins(%[[C]] : memref<8xf32>) outs(%{{.*}} : memref<8xbf16>)
#round1 = affine_map<(d0) -> (d0)>
#round2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @roundings(%a: memref<5000xf32>, %b: memref<3x7xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  %ar = memref.alloc() : memref<5000xbf16>
  linalg.generic {indexing_maps = [#round1, #round1], iterator_types = ["parallel"]} ins(%a : memref<5000xf32>) outs(%ar : memref<5000xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  %br = memref.alloc() : memref<3x7xbf16>
  linalg.generic {indexing_maps = [#round2, #round2], iterator_types = ["parallel", "parallel"]} ins(%b : memref<3x7xf32>) outs(%br : memref<3x7xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  %bb = memref.alloc() : memref<3x7xf32>
  linalg.generic {indexing_maps = [#round2, #round2, #round2], iterator_types = ["parallel", "parallel"]} ins(%b, %b : memref<3x7xf32>, memref<3x7xf32>) outs(%bb : memref<3x7xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  }
  %cr = memref.alloc() : memref<8xbf16>
  linalg.generic {indexing_maps = [#round1, #round1], iterator_types = ["parallel"]} ins(%c : memref<8xf32>) outs(%cr : memref<8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  }
  func.call @use(%ar, %br, %bb, %cr) : (memref<5000xbf16>, memref<3x7xbf16>, memref<3x7xf32>, memref<8xbf16>) -> ()
  return
}
func.func private @use(memref<5000xbf16>, memref<3x7xbf16>, memref<3x7xf32>, memref<8xbf16>)
