// RUN: mix-opt %S/Inputs/flash_attention.mlir --mix-flash-attention-kernels --canonicalize | FileCheck %s

// The launches of mix-flash-attention-kernels (emulate-flash-attention.test
// checks their numbers). Each is a grid of (tiles of 64 rows, heads, batch
// rows or streams) of 64 threads; the tiles in workgroup memory hold 16
// KiB each, so heads of dh = 80 get tiles of 32 rows and heads of dh = 16
// tiles of 64; each thread's vectors are private.

// The forward pass: one launch, tiles of keys and values loaded between
// barriers, the output and the log-sum-exp written by in-range queries.
// CHECK-LABEL: func.func @fwd_plain
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c2) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME: workgroup(%[[K:.*]] : memref<32x80xf32, #gpu.address_space<workgroup>>, %[[V:.*]] : memref<32x80xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: private({{.*}} : memref<80xf32, #gpu.address_space<private>>, {{.*}} : memref<80xf32, #gpu.address_space<private>>, {{.*}} : memref<32xf32, #gpu.address_space<private>>)
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}}, %[[K]]
// CHECK: memref.store {{.*}}, %[[V]]
// CHECK: gpu.barrier
// CHECK: math.exp
// CHECK: scf.if
// CHECK: memref.store {{.*}} : memref<2x70x160xf32>
// CHECK: math.log
// CHECK: memref.store {{.*}} : memref<2x2x70xf32>
// CHECK-NOT: gpu.launch

// The backward pass: the queries' launch (dQ), then the keys' (dK, dV),
// whose workgroup memory also holds a tile's log-sum-exps and D.
// CHECK-LABEL: func.func @grad_plain
// CHECK: gpu.launch {{.*}} workgroup({{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>) private(
// CHECK: gpu.launch {{.*}} workgroup({{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32xf32, #gpu.address_space<workgroup>>) private(
// CHECK-NOT: gpu.launch

// With prefixes the forward pass walks the prefix's tiles, then the real
// keys': four barriers. A third backward launch, a block for each 64
// prefix keys of each (head, stream), writes the prefixes' gradients.
// CHECK-LABEL: func.func @fwd_prefix
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c4)
// CHECK-COUNT-4: gpu.barrier
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func @grad_prefix
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c4)
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c4)
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c2)
// CHECK: memref.store {{.*}} : memref<2x2x70x16xf32>
// CHECK: memref.store {{.*}} : memref<2x2x70x16xf32>
// CHECK-NOT: gpu.launch
