// RUN: mix-opt %s --mix-record-kernel-traffic | FileCheck %s

// mix-record-kernel-traffic: each kernel's bytes a launch, read and
// written, and its float operations, for the profile. Per memref argument,
// the smaller of the distinct bytes of the views accessed and the bytes of
// the accesses (element bytes x loop trips x the launch's threads); the
// operations are counted as the accesses are. The expected values are
// worked out by hand below each kernel.

// CHECK: llvm.mlir.global external constant @mixrt_kernel_traffic
// CHECK-SAME: "scale 512 512 0 0\0Agather 1040 256 0 0\0Areduce 320 64 64 0\0Aunknown_trips 4160 64 -1 0\0Aopaque 1024 1024 0 0\0Awrites_only 0 256 0 0\0Acausal 0 0 30720 0\0Amma 0 0 0 24576\0Amerged 128 768 384 0\0A\00"

module attributes {gpu.container_module} {
  func.func @host(%x: memref<128xf32>, %y: memref<128xf32>,
                  %table: memref<1000x16xf32>, %ids: memref<4xi32>,
                  %rows: memref<4x16xf32>, %m: memref<16x64xf32>,
                  %sums: memref<16xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @mix_kernels::@scale blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<128xf32>, %y : memref<128xf32>)
    gpu.launch_func @mix_kernels::@gather blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%ids : memref<4xi32>, %table : memref<1000x16xf32>, %rows : memref<4x16xf32>)
    // The loop bounds travel as arguments, the same constants at both launches.
    gpu.launch_func @mix_kernels::@reduce blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%m : memref<16x64xf32>, %sums : memref<16xf32>, %c0 : index, %c4 : index)
    gpu.launch_func @mix_kernels::@reduce blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%m : memref<16x64xf32>, %sums : memref<16xf32>, %c0 : index, %c4 : index)
    // Different bounds at two launches: the trip count is not known.
    gpu.launch_func @mix_kernels::@unknown_trips blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%m : memref<16x64xf32>, %sums : memref<16xf32>, %c4 : index)
    gpu.launch_func @mix_kernels::@unknown_trips blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%m : memref<16x64xf32>, %sums : memref<16xf32>, %n : index)
    gpu.launch_func @mix_kernels::@opaque blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<128xf32>, %y : memref<128xf32>)
    gpu.launch_func @mix_kernels::@writes_only blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%rows : memref<4x16xf32>)
    gpu.launch_func @mix_kernels::@causal blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
    gpu.launch_func @mix_kernels::@mma blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
    %big = memref.alloc() : memref<1024xf32>
    gpu.launch_func @mix_kernels::@merged blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1) args(%big : memref<1024xf32>, %big : memref<1024xf32>)
    return
  }
  gpu.module @mix_kernels {
    // 128 threads each load x[i] and store y[i]: 128 x 4 = 512 bytes either
    // way, which is also each view's size.
    gpu.func @scale(%x: memref<128xf32>, %y: memref<128xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c64 = arith.constant 64 : index
      %o = arith.muli %b, %c64 : index
      %i = arith.addi %o, %t : index
      %v = memref.load %x[%i] : memref<128xf32>
      memref.store %v, %y[%i] : memref<128xf32>
      gpu.return
    }
    // 64 threads, 4 trips of the loop each. ids: 4 x 64 x 4 = 1024 bytes of
    // loads, but the view holds 16: 16. table: 4 x 64 x 4 = 1024 bytes of
    // loads of a 64000-byte table: 1024 (the rows gathered, not the table).
    // Read 16 + 1024 = 1040; rows: 1024 bytes of stores into 256: 256.
    gpu.func @gather(%ids: memref<4xi32>, %table: memref<1000x16xf32>, %rows: memref<4x16xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %r = arith.divui %t, %c16 : index
      %col = arith.remui %t, %c16 : index
      scf.for %j = %c0 to %c4 step %c1 {
        %id = memref.load %ids[%r] : memref<4xi32>
        %row = arith.index_cast %id : i32 to index
        %v = memref.load %table[%row, %col] : memref<1000x16xf32>
        memref.store %v, %rows[%r, %col] : memref<4x16xf32>
      }
      gpu.return
    }
    // 16 threads, 4 trips: the bounds are arguments, but every launch
    // passes the same constants. m: 4 x 16 x 4 = 256 bytes of loads (of a
    // 4096-byte view); sums: 256 bytes of loads of 64: 64. Read 256 + 64 =
    // 320 (4096 + 64 if the trips were not known); written 64.
    gpu.func @reduce(%m: memref<16x64xf32>, %sums: memref<16xf32>, %lb: index, %ub: index) kernel attributes {known_block_size = array<i32: 16, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : index
      scf.for %j = %lb to %ub step %c1 {
        %a = memref.load %m[%t, %j] : memref<16x64xf32>
        %s = memref.load %sums[%t] : memref<16xf32>
        %n = arith.addf %a, %s : f32
        memref.store %n, %sums[%t] : memref<16xf32>
      }
      gpu.return
    }
    // The same loads with a trip count the launches disagree on: each view
    // counts in full. Read 4096 + 64 = 4160, written 64.
    gpu.func @unknown_trips(%m: memref<16x64xf32>, %sums: memref<16xf32>, %ub: index) kernel attributes {known_block_size = array<i32: 16, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %j = %c0 to %ub step %c1 {
        %a = memref.load %m[%t, %c0] : memref<16x64xf32>
        %s = memref.load %sums[%t] : memref<16xf32>
        %n = arith.addf %a, %s : f32
        memref.store %n, %sums[%t] : memref<16xf32>
      }
      gpu.return
    }
    // memref.copy is not a load or store: both views count in full, both
    // ways (512 + 512).
    gpu.func @opaque(%x: memref<128xf32>, %y: memref<128xf32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      memref.copy %x, %y : memref<128xf32> to memref<128xf32>
      gpu.return
    }
    // Stores only: nothing read, 64 x 4 = 256 bytes written (the view's 256).
    gpu.func @writes_only(%rows: memref<4x16xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %t = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %r = arith.divui %t, %c16 : index
      %col = arith.remui %t, %c16 : index
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %rows[%r, %col] : memref<4x16xf32>
      gpu.return
    }
    // A loop whose bound varies over the blocks, as a causal walk's: up to
    // min(64 (b + 1), 96), 64 trips in block 0 and 96 in block 1. Its bounds'
    // midpoints (b in [0, 1], so the bound in [64, 96]) give the average,
    // 80 trips, each an exp (one operation) and a fused multiply-add (two):
    // 3 x 80 x 128 threads = 30720. The reduce kernel above: an add a trip,
    // 4 x 16 = 64; unknown_trips' trips are not known: -1.
    gpu.func @causal() kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
      %b = gpu.block_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %c96 = arith.constant 96 : index
      %first = arith.muli %b, %c64 : index
      %end = arith.addi %first, %c64 : index
      %ub = arith.minui %end, %c96 : index
      %one = arith.constant 1.0 : f32
      %r = scf.for %j = %c0 to %ub step %c1 iter_args(%acc = %one) -> (f32) {
        %e = math.exp %acc : f32
        %f = math.fma %e, %e, %acc : f32
        scf.yield %f : f32
      }
      gpu.return
    }
    // Tensor-core products: an m16n8k8 mma.sync is 2 x 16 x 8 x 8 = 2048
    // FLOPs a warp, 64 a lane, counted apart from the CUDA cores'
    // arithmetic; 3 trips of 2 x 64 threads: 64 x 3 x 128 = 24576.
    gpu.func @mma() kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %a = arith.constant dense<1.0> : vector<4x1xf32>
      %b = arith.constant dense<1.0> : vector<2x1xf32>
      %zero = arith.constant dense<0.0> : vector<2x2xf32>
      %r = scf.for %j = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (vector<2x2xf32>) {
        %d = nvgpu.mma.sync (%a, %b, %acc) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
        scf.yield %d : vector<2x2xf32>
      }
      gpu.return
    }
    // Two kernels merged (mix-merge-independent-kernels): block 0 of 4 runs
    // the first, in the first 32 of its 64 threads; blocks 1 to 3 the
    // second. x: 256 threads x 1/4 x 1/2 run the load: 32 x 4 = 128 bytes.
    // y: 256 x 3/4 run the store: 768 bytes. The loop runs i + 1 times,
    // i = id - 1 in [0, 2] in the else-branch (without the split, [-1, 2]
    // and the division unknown): 2 trips at the midpoint, an add each, in
    // 192 threads: 384.
    gpu.func @merged(%x: memref<1024xf32>, %y: memref<1024xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %first = arith.cmpi ult, %b, %c1 : index
      scf.if %first {
        %in = arith.cmpi ult, %t, %c32 : index
        scf.if %in {
          %v = memref.load %x[%t] : memref<1024xf32>
        } {mix.thread_split = 32 : i64}
      } else {
        %i = arith.subi %b, %c1 : index
        %q = arith.divui %i, %c1 : index
        %ub = arith.addi %q, %c1 : index
        %sum = scf.for %k = %c0 to %ub step %c1 iter_args(%acc = %zero) -> (f32) {
          %next = arith.addf %acc, %one : f32
          scf.yield %next : f32
        }
        %o = arith.muli %i, %c64 : index
        %j = arith.addi %o, %t : index
        memref.store %sum, %y[%j] : memref<1024xf32>
      } {mix.block_split = 1 : i64}
      gpu.return
    }
  }
}
