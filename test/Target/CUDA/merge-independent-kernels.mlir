// RUN: mix-opt %s --split-input-file --mix-merge-independent-kernels --canonicalize | FileCheck %s
// RUN: mix-opt %s --split-input-file --mix-merge-independent-kernels=threads=32 --canonicalize | FileCheck %s --check-prefix=SMALL

// mix-merge-independent-kernels: two launches that neither depend on each
// other nor conflict become one launch of the sum of their blocks; the
// first kernel's body runs in the blocks below its count, the second's in
// the rest, with its block ids counted from there.

// Independent: a -> b in one block, c -> d in two. The merged launch has 3
// blocks; block 0 runs the first body, blocks 1 and 2 the second with
// block id (id - 1). With a limit of 32 threads, neither kernel (64 and
// 128 threads) is small: they stay apart.
// CHECK-LABEL: func.func @independent
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C3]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C64]],
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[BX]], %{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.load %arg0[%[[TX]]]
// CHECK: memref.store %{{.*}}, %arg1[%[[TX]]]
// CHECK: } else {
// CHECK: %[[ID:.*]] = arith.subi %[[BX]], %{{.*}} : index
// CHECK: arith.muli %[[ID]]
// CHECK: memref.load %arg2
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: } {mix.block_split = 1 : i64}
// CHECK-NOT: gpu.launch
// SMALL-LABEL: func.func @independent
// SMALL-COUNT-2: gpu.launch
// SMALL-LABEL: func.func @dependent
func.func @independent(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<128xf32>, %d: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xf32>
    memref.store %v, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %o = arith.muli %bx, %sx : index
    %i = arith.addi %o, %tx : index
    %v = memref.load %c[%i] : memref<128xf32>
    memref.store %v, %d[%i] : memref<128xf32>
    gpu.terminator
  }
  return
}

// -----

// The second reads what the first writes (b), or writes what the first
// reads (a): two launches each time.
// CHECK-LABEL: func.func @dependent
// CHECK-COUNT-4: gpu.launch
func.func @dependent(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xf32>
    memref.store %v, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%tx] : memref<64xf32>
    memref.store %v, %c[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
func.func @antidependent(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xf32>
    memref.store %v, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%tx] : memref<64xf32>
    memref.store %v, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Between them, a product that writes what the first reads: the first
// cannot move past it. A deallocation of the first's buffer moves after
// the merged launch instead.
// CHECK-LABEL: func.func @in_between
// CHECK-COUNT-2: gpu.launch
// CHECK-LABEL: func.func @dealloc_in_between
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: gpu.dealloc async [%{{.*}}] %[[A:.*]] : memref<64xf32>
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @product(memref<64xf32>)
func.func @in_between(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>, %d: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xf32>
    memref.store %v, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  func.call @product(%a) : (memref<64xf32>) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%tx] : memref<64xf32>
    memref.store %v, %d[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
func.func @dealloc_in_between(%b: memref<64xf32>, %c: memref<64xf32>, %d: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %s = gpu.wait async
  %a, %t = gpu.alloc async [%s] () : memref<64xf32>
  gpu.wait [%t]
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xf32>
    memref.store %v, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  %s1 = gpu.wait async
  %t1 = gpu.dealloc async [%s1] %a : memref<64xf32>
  gpu.wait [%t1]
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%tx] : memref<64xf32>
    memref.store %v, %d[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Blocks of different sizes: the smaller (32 threads) runs in the first 32
// threads of each of its blocks if it synchronizes nothing; with a
// barrier it cannot.
// CHECK-LABEL: func.func @smaller_block
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128,
// CHECK: scf.if
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[TX]], %c32 : index
// CHECK: scf.if %[[IN]] {
// CHECK: memref.load %arg0[%[[TX]]]
// CHECK: } {mix.thread_split = 32 : i64}
// CHECK: } else {
// CHECK: memref.load %arg2[%[[TX]]]
// CHECK: } {mix.block_split = 1 : i64}
// CHECK-LABEL: func.func @smaller_block_with_barrier
// CHECK-COUNT-2: gpu.launch
func.func @smaller_block(%a: memref<32xf32>, %b: memref<32xf32>, %c: memref<128xf32>, %d: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<32xf32>
    memref.store %v, %b[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%tx] : memref<128xf32>
    gpu.barrier
    memref.store %v, %d[%tx] : memref<128xf32>
    gpu.terminator
  }
  return
}
func.func @smaller_block_with_barrier(%a: memref<32xf32>, %b: memref<32xf32>, %c: memref<128xf32>, %d: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<32xf32>
    gpu.barrier
    memref.store %v, %b[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%tx] : memref<128xf32>
    memref.store %v, %d[%tx] : memref<128xf32>
    gpu.terminator
  }
  return
}

// -----

// A 2 x 3 grid after a 1-block kernel: block ids (x, y) = (i mod 2,
// (i / 2) mod 3) of i = id - 1; the grid-size operations become the part's constants; the
// workgroup buffers of both are the merged launch's.
// CHECK-LABEL: func.func @grid_2d
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c7, {{.*}} workgroup(%[[W0:.*]] : memref<32xf32, #gpu.address_space<workgroup>>, %[[W1:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.store %{{.*}}, %[[W0]]
// CHECK: } else {
// CHECK: %[[I:.*]] = arith.subi %[[BX]], %c1 : index
// CHECK-DAG: %[[REST:.*]] = arith.divui %[[I]], %c2 : index
// CHECK-DAG: %[[X:.*]] = arith.remui %[[I]], %c2 : index
// CHECK: %[[Y:.*]] = arith.remui %[[REST]], %c3 : index
// CHECK: %[[ROW:.*]] = arith.muli %[[Y]], %c2 : index
// CHECK: %[[CELL:.*]] = arith.addi %[[ROW]], %[[X]] : index
// CHECK: memref.store %{{.*}}, %[[W1]]
// CHECK: memref.store %{{.*}}, %arg1[%[[CELL]]]
func.func @grid_2d(%a: memref<32xf32>, %b: memref<6xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) workgroup(%w : memref<32xf32, #gpu.address_space<workgroup>>) {
    memref.store %cst, %w[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    %v = memref.load %w[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    memref.store %v, %a[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c3, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) workgroup(%w : memref<64xf32, #gpu.address_space<workgroup>>) {
    %width = gpu.grid_dim x
    %row = arith.muli %by, %width : index
    %cell = arith.addi %row, %bx : index
    memref.store %cst, %w[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %cst, %b[%cell] : memref<6xf32>
    gpu.terminator
  }
  return
}

// -----

// Two kernels of 32 KiB of workgroup memory each: together past the 48 KiB
// a kernel may declare, they stay apart.
// CHECK-LABEL: func.func @too_much_workgroup_memory
// CHECK-COUNT-2: gpu.launch
func.func @too_much_workgroup_memory(%a: memref<32xf32>, %b: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) workgroup(%w : memref<8192xf32, #gpu.address_space<workgroup>>) {
    memref.store %cst, %w[%tx] : memref<8192xf32, #gpu.address_space<workgroup>>
    %v = memref.load %w[%tx] : memref<8192xf32, #gpu.address_space<workgroup>>
    memref.store %v, %a[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) workgroup(%w : memref<8192xf32, #gpu.address_space<workgroup>>) {
    memref.store %cst, %w[%tx] : memref<8192xf32, #gpu.address_space<workgroup>>
    %v = memref.load %w[%tx] : memref<8192xf32, #gpu.address_space<workgroup>>
    memref.store %v, %b[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// A kernel that writes a buffer it picks (a multi-tensor kernel's block
// selecting its tensor: arith.select of buffers) writes each of them: it
// cannot move past a product that reads one, nor merge with a kernel that
// reads the other.
// CHECK-LABEL: func.func @picked_buffer_read_between
// CHECK: gpu.launch
// CHECK: call @product_reads
// CHECK: gpu.launch
// CHECK-LABEL: func.func @picked_buffer_read_after
// CHECK-COUNT-2: gpu.launch
func.func private @product_reads(memref<64xf32>)
func.func @picked_buffer_read_between(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>, %d: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %first = arith.cmpi eq, %bx, %c1 : index
    %m = arith.select %first, %a, %b : memref<64xf32>
    memref.store %cst, %m[%tx] : memref<64xf32>
    gpu.terminator
  }
  func.call @product_reads(%a) : (memref<64xf32>) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%tx] : memref<64xf32>
    memref.store %v, %d[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
func.func @picked_buffer_read_after(%a: memref<64xf32>, %b: memref<64xf32>, %e: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %first = arith.cmpi eq, %bx, %c1 : index
    %m = arith.select %first, %a, %b : memref<64xf32>
    memref.store %cst, %m[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%tx] : memref<64xf32>
    memref.store %v, %e[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
