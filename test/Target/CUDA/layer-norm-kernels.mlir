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

// Backward: a block a chunk of rows (15 chunks of one row here), each row's
// dinput (its two sums reduced together) and, in each thread's registers,
// the chunk's column sums of the weight's and bias's gradients, stored in
// partial buffers that a second launch folds.
// CHECK-LABEL: func.func @grad_small
// CHECK: %[[PW:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<15x40xf32>
// CHECK: %[[PB:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<15x40xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c15, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK-COUNT-10: gpu.shuffle xor
// CHECK: memref.store {{.*}} : memref<15x40xf32>
// CHECK: memref.store %{{.*}}, %[[PW]]
// CHECK: memref.store %{{.*}}, %[[PB]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK: memref.load %[[PW]]
// CHECK: memref.load %[[PB]]
// CHECK: gpu.dealloc async [%{{.*}}] %[[PW]]
// CHECK: gpu.dealloc async [%{{.*}}] %[[PB]]
// CHECK-NOT: gpu.launch

// More rows than chunks: 551 chunks of two rows (the last one partial),
// each block's rows one after another.
// CHECK-LABEL: func.func @fwd_tall
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1101, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-LABEL: func.func @grad_tall
// CHECK: gpu.alloc async [%{{.*}}] () : memref<551x40xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c551, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: scf.for
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)

// The wide case: 201 rows; 201 chunks of one row, two columns a thread,
// the final fold over 2 column tiles.
// CHECK-LABEL: func.func @fwd_wide
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-LABEL: func.func @grad_wide
// CHECK: gpu.alloc async [%{{.*}}] () : memref<201x300xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1)

// The residual add before the LayerNorm runs in its kernel: the first pass
// computes the input from the add's operands and stores it, the others
// compute it again; the add's launch goes.
// CHECK-LABEL: func.func @fwd_residual
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201,
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %arg4
// CHECK-NOT: linalg.generic
// CHECK: return
// The residual gradient's add runs in the backward kernel's store, into
// the add's output; dinput's buffer goes.
// CHECK-LABEL: func.func @grad_residual
// CHECK-NOT: memref.alloc()
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201,
// CHECK: memref.store %{{.*}}, %arg6
// CHECK-NOT: linalg.generic
// CHECK: return
// An add in place of its operand stays a launch of its own.
// CHECK-LABEL: func.func @fwd_in_place
// CHECK: linalg.generic
// CHECK: gpu.launch
// The add's operand freed between the add and the LayerNorm is freed after
// the kernel, which reads it.
// CHECK-LABEL: func.func @fwd_residual_freed
// CHECK: %[[T:.*]] = memref.alloc()
// CHECK: linalg.generic
// CHECK-NOT: memref.dealloc
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201,
// CHECK: memref.load %[[T]]
// CHECK: gpu.terminator
// CHECK: memref.dealloc %[[T]]
// The residual gradient's add into the buffer of the incoming gradient
// (the same elements, through reshapes) runs in the kernel's store too.
// CHECK-LABEL: func.func @grad_residual_in_place
// CHECK: %[[DY:.*]] = memref.alloc() : memref<201x300xf32>
// CHECK-NOT: memref.alloc()
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201,
// CHECK: memref.store %{{.*}}, %[[DY]]
// CHECK-NOT: linalg.generic
// CHECK: return
// The incoming gradient the sum of two that nothing else reads: the kernel
// reads the two where it read the sum (in both passes over a row), the
// sum's launch goes, and the temporary freed in between is freed after the
// kernel; the residual gradient's add still updates the sum's buffer in
// place.
// CHECK-LABEL: func.func @grad_sum
// CHECK: %[[G2:.*]] = memref.alloc() : memref<201x300xf32>
// CHECK: memref.copy %arg5, %[[G2]]
// CHECK: %[[S:.*]] = memref.alloc() : memref<201x300xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc %[[G2]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201,
// CHECK: memref.load %arg4
// CHECK: memref.load %[[G2]]
// CHECK: arith.addf
// CHECK: memref.load %arg4
// CHECK: memref.load %[[G2]]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: gpu.terminator
// CHECK: memref.dealloc %[[G2]]
// CHECK-NOT: linalg.generic
// CHECK: return
// The sum read again after the LayerNorm stays, and the kernel reads it.
// CHECK-LABEL: func.func @grad_sum_kept
// CHECK: %[[S:.*]] = memref.alloc() : memref<201x300xf32>
// CHECK: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c201,
// CHECK: memref.load %[[S]]
// CHECK: return
