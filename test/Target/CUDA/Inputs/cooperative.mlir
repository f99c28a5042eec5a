// Kernels whose threads work together, as the fused reductions will, written
// as gpu.launch (the CUDA pipeline outlines them as it does its own): sums
// through workgroup memory and barriers and through warp shuffles, a scan
// that uses the shuffles' `valid`, dynamic shared memory; then the same
// kinds of kernels with a mistake each.

// out[b] = a[128 b] + ... + a[128 b + 127], one block of 128 threads each:
// every thread puts its element in workgroup memory, then a tree: while
// s > 0, the threads below s add the value s above theirs to theirs, with
// a barrier between the steps.
func.func @block_sum(%a: memref<256xf32>, %out: memref<2xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
             workgroup(%partial : memref<128xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %half = arith.constant 64 : index
    %two = arith.constant 2 : index
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %a[%i] : memref<256xf32>
    memref.store %v, %partial[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %last = scf.while (%s = %half) : (index) -> index {
      %more = arith.cmpi ugt, %s, %c0 : index
      scf.condition(%more) %s : index
    } do {
    ^bb0(%s: index):
      %below = arith.cmpi ult, %tx, %s : index
      scf.if %below {
        %j = arith.addi %tx, %s : index
        %x = memref.load %partial[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
        %y = memref.load %partial[%j] : memref<128xf32, #gpu.address_space<workgroup>>
        %z = arith.addf %x, %y : f32
        memref.store %z, %partial[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %next = arith.divui %s, %two : index
      scf.yield %next : index
    }
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %sum = memref.load %partial[%c0] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %sum, %out[%bx] : memref<2xf32>
    }
    gpu.terminator
  }
  return
}

// out[w] = the sum of the 32 elements of warp w, by the butterfly: after
// the xor shuffles of 16, 8, 4, 2 and 1 lanes every lane holds it; lane 0
// writes it.
func.func @warp_sum(%a: memref<64xf32>, %out: memref<2xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %width = arith.constant 32 : i32
    %o16 = arith.constant 16 : i32
    %o8 = arith.constant 8 : i32
    %o4 = arith.constant 4 : i32
    %o2 = arith.constant 2 : i32
    %o1 = arith.constant 1 : i32
    %v0 = memref.load %a[%tx] : memref<64xf32>
    %s16, %ok16 = gpu.shuffle xor %v0, %o16, %width : f32
    %v1 = arith.addf %v0, %s16 : f32
    %s8, %ok8 = gpu.shuffle xor %v1, %o8, %width : f32
    %v2 = arith.addf %v1, %s8 : f32
    %s4, %ok4 = gpu.shuffle xor %v2, %o4, %width : f32
    %v3 = arith.addf %v2, %s4 : f32
    %s2, %ok2 = gpu.shuffle xor %v3, %o2, %width : f32
    %v4 = arith.addf %v3, %s2 : f32
    %s1, %ok1 = gpu.shuffle xor %v4, %o1, %width : f32
    %v5 = arith.addf %v4, %s1 : f32
    %lane = gpu.lane_id
    %warp = gpu.subgroup_id : index
    %lead = arith.cmpi eq, %lane, %c0 : index
    scf.if %lead {
      memref.store %v5, %out[%warp] : memref<2xf32>
    }
    gpu.terminator
  }
  return
}

// out = the inclusive prefix sums of a warp's 32 elements (Hillis and
// Steele): for d = 1, 2, 4, 8, 16 each lane adds the value d lanes below,
// where there is one (`valid`).
func.func @warp_scan(%a: memref<32xf32>, %out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %width = arith.constant 32 : i32
    %d1 = arith.constant 1 : i32
    %d16 = arith.constant 16 : i32
    %two = arith.constant 2 : i32
    %v0 = memref.load %a[%tx] : memref<32xf32>
    %r:2 = scf.while (%d = %d1, %v = %v0) : (i32, f32) -> (i32, f32) {
      %more = arith.cmpi ule, %d, %d16 : i32
      scf.condition(%more) %d, %v : i32, f32
    } do {
    ^bb0(%d: i32, %v: f32):
      %below, %valid = gpu.shuffle up %v, %d, %width : f32
      %zero = arith.constant 0.0 : f32
      %add = arith.select %valid, %below, %zero : f32
      %w = arith.addf %v, %add : f32
      %next = arith.muli %d, %two : i32
      scf.yield %next, %w : i32, f32
    }
    memref.store %r#1, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// out[i] = a[7 - i] through dynamic shared memory (32 bytes of it): each
// thread puts its element in, a barrier, each reads its mirror's.
func.func @dynamic_reverse(%a: memref<8xf32>, %out: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %bytes = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %bytes {
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %values = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
    %v = memref.load %a[%tx] : memref<8xf32>
    memref.store %v, %values[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %j = arith.subi %c7, %tx : index
    %w = memref.load %values[%j] : memref<8xf32, #gpu.address_space<workgroup>>
    memref.store %w, %out[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}

// The mistake: a barrier inside `if t < 64`, which threads 64 to 127 never
// reach.
func.func @divergent_barrier(%a: memref<128xf32>, %out: memref<128xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %c64 = arith.constant 64 : index
    %v = memref.load %a[%tx] : memref<128xf32>
    %below = arith.cmpi ult, %tx, %c64 : index
    scf.if %below {
      gpu.barrier
    }
    memref.store %v, %out[%tx] : memref<128xf32>
    gpu.terminator
  }
  return
}

// The mistake: a warp shuffle that lanes 16 to 31 never reach.
func.func @divergent_shuffle(%a: memref<32xf32>, %out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %c16 = arith.constant 16 : index
    %width = arith.constant 32 : i32
    %o1 = arith.constant 1 : i32
    %v = memref.load %a[%tx] : memref<32xf32>
    memref.store %v, %out[%tx] : memref<32xf32>
    %below = arith.cmpi ult, %tx, %c16 : index
    scf.if %below {
      %s, %ok = gpu.shuffle xor %v, %o1, %width : f32
      memref.store %s, %out[%tx] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}

// The mistake: after the barrier, each thread reads the workgroup element
// after its own, and the last thread reads past the end.
func.func @shared_off_by_one(%a: memref<64xf32>, %out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<64xf32, #gpu.address_space<workgroup>>) {
    %one = arith.constant 1 : index
    %v = memref.load %a[%tx] : memref<64xf32>
    memref.store %v, %tile[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %j = arith.addi %tx, %one : index
    %w = memref.load %tile[%j] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// The mistake: the launch gives 16 bytes of dynamic shared memory, the
// kernel takes 8 floats of it.
func.func @dynamic_too_short(%a: memref<8xf32>, %out: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %bytes = arith.constant 16 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %bytes {
    %c0 = arith.constant 0 : index
    %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %values = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
    %v = memref.load %a[%tx] : memref<8xf32>
    memref.store %v, %values[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}
