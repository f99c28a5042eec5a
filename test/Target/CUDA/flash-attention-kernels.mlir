// RUN: mix-opt %S/Inputs/flash_attention.mlir --mix-flash-attention-kernels --canonicalize | FileCheck %s

// The launches of mix-flash-attention-kernels (emulate-flash-attention.test
// checks their numbers). Each is a grid of (tiles of 64 rows, heads, batch
// rows or streams) of four warps, 16 rows a warp; heads are padded to a
// multiple of 8 (the tensor cores' k), dh = 76 to 80; the tiles in
// workgroup memory hold 16 KiB each, so heads of 80 get tiles of 32 rows
// and heads of dh = 16 tiles of 64. Nothing is private: the fragments are
// registers.

// The forward pass: one launch, tiles of keys and values loaded (rounded
// to tf32) between barriers; per tile, the scores of 4 groups of 8 keys
// over 10 steps of the head (40 products), then the probabilities (their
// fragments moved by shuffles to the left operand's lanes) times the
// values: 4 groups by 10 columns of 8 (40 more); the output and the
// log-sum-exp written by in-range queries.
// CHECK-LABEL: func.func @fwd_plain
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c2) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME: workgroup(%[[K:.*]] : memref<32x80xf32, #gpu.address_space<workgroup>>, %[[V:.*]] : memref<32x80xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: private
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}}, %[[K]]
// CHECK: memref.store {{.*}}, %[[V]]
// CHECK: gpu.barrier
// CHECK-COUNT-40: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// CHECK: math.exp
// CHECK: gpu.shuffle idx
// CHECK-COUNT-40: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: scf.if
// CHECK: memref.store {{.*}} : memref<2x70x152xf32>
// CHECK: math.log
// CHECK: memref.store {{.*}} : memref<2x2x70xf32>
// CHECK-NOT: gpu.launch

// The backward pass: the queries' launch (dQ: scores, dout times values,
// dS times keys: 120 products a tile), then the keys' (dK, dV: 160 a
// tile), whose workgroup memory also holds a tile's log-sum-exps and D.
// CHECK-LABEL: func.func @grad_plain
// CHECK: gpu.launch {{.*}} workgroup({{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>) {
// CHECK-COUNT-120: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: gpu.launch {{.*}} workgroup({{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32xf32, #gpu.address_space<workgroup>>) {
// CHECK-COUNT-160: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
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

// The operands' rounding: tf32 by default (half an ulp of tf32, 0x1000,
// added to the bits, then the 13 lowest cleared), bf16 on request (to
// nearest even: 0x7fff and the lowest kept bit added, the 16 lowest
// cleared); anything else is an error.
// RUN: mix-opt %S/Inputs/flash_attention.mlir --mix-flash-attention-kernels | FileCheck %s --check-prefix=TF32
// TF32-DAG: arith.constant 4096 : i32
// TF32-DAG: arith.constant -8192 : i32
// RUN: mix-opt %S/Inputs/flash_attention.mlir --mix-flash-attention-kernels=rounding=bf16 | FileCheck %s --check-prefix=BF16
// BF16-DAG: arith.constant 32767 : i32
// BF16-DAG: arith.constant -65536 : i32
// BF16-DAG: arith.shrui
// With bf16 operands the products are m16n8k16 (nvvm.mma.sync, two operands
// a register: half as many instructions), and an accumulator is the next
// product's A operand where it is (no index shuffles).
// RUN: mix-opt %S/Inputs/flash_attention.mlir --mix-flash-attention-kernels=rounding=bf16 --canonicalize | FileCheck %s --check-prefix=K16
// K16-LABEL: func.func @fwd_plain
// K16: workgroup({{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x80xf32, #gpu.address_space<workgroup>>)
// K16-COUNT-20: nvvm.mma.sync A[{{.*}}, {{.*}}, {{.*}}, {{.*}}]  B[{{.*}}, {{.*}}]  C[{{.*}}, {{.*}}, {{.*}}, {{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// K16: math.exp
// K16-COUNT-20: nvvm.mma.sync
// K16-NOT: nvvm.mma.sync
// K16-NOT: gpu.shuffle idx
// K16-LABEL: func.func @grad_plain
// K16-COUNT-60: nvvm.mma.sync
// K16-NOT: nvvm.mma.sync
// K16: gpu.launch
// K16-COUNT-80: nvvm.mma.sync
// K16-NOT: mma.sync
// K16-LABEL: func.func @fwd_prefix
// RUN: not mix-opt %S/Inputs/flash_attention.mlir --mix-flash-attention-kernels=rounding=fp8 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: rounding 'fp8' is neither tf32 nor bf16
