// RUN: mix-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(gpu.module(generate-runtime-verification{verbose-level=0}),mix-emulate-kernels)' | FileCheck %s --implicit-check-not='#gpu.address_space'

// mix-emulate-kernels: each kernel becomes a host function that takes the
// kernel's arguments, then the twelve ids (thread id, block id, block
// size, grid size; x, y, z), the block's 48 KiB of shared memory and the
// size of its dynamic part; a barrier becomes a call into the emulator
// with a string naming its place; every memory access is checked, and a
// failed check calls mixemu_fail with the kernel's name. The gpu.module
// becomes a gpu.binary whose object is the emulator's marker, so the
// launch stays as it is. No memref keeps a GPU address space.

// CHECK-LABEL: func.func @host
// CHECK:         gpu.launch_func @mix_kernels::@scale
// CHECK:       gpu.binary @mix_kernels [#gpu.object<#nvvm.target, bin = "MIXEMU01">]
// CHECK:       func.func @__mixemu_scale(%[[A:.*]]: memref<8xf32>, %[[N:.*]]: index, %[[TX:[^:]*]]: index, %{{.*}}: index, %{{.*}}: index, %[[BX:[^:]*]]: index, %{{.*}}: index, %{{.*}}: index, %[[DX:[^:]*]]: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<49152xi8>, %{{.*}}: index)
// CHECK-SAME:    mix.emulated_kernel = "scale"
// CHECK-SAME:    mix.known_block_size = array<i32: 8, 1, 1>
// CHECK-SAME:    mix.uses_barrier
// CHECK:         %[[BD:.*]] = arith.muli %[[BX]], %[[DX]] : index
// CHECK:         %[[I:.*]] = arith.addi %[[BD]], %[[TX]] : index
// CHECK:         %[[OK:.*]] = arith.andi
// CHECK:         %[[BAD:.*]] = arith.xori %[[OK]], %{{.*}} : i1
// CHECK:         scf.if %[[BAD]] {
// CHECK:           %[[MSG:.*]] = llvm.mlir.addressof @__mixemu_message_0 : !llvm.ptr
// CHECK:           func.call @mixemu_fail(%[[MSG]]) : (!llvm.ptr) -> ()
// CHECK:         }
// CHECK:         memref.load %[[A]][%[[I]]] : memref<8xf32>
// CHECK:         %[[SITE:.*]] = llvm.mlir.addressof @__mixemu_site_0 : !llvm.ptr
// CHECK:         call @mixemu_barrier(%[[SITE]]) : (!llvm.ptr) -> ()
// CHECK:         memref.store
// CHECK:         return
// CHECK-NOT:   gpu.thread_id
// CHECK:       func.func private @mixemu_barrier(!llvm.ptr)
// CHECK:       func.func private @mixemu_fail(!llvm.ptr)
// CHECK:       llvm.mlir.global internal constant @__mixemu_message_0("kernel scale: out-of-bounds access; Location: loc(
// CHECK:       llvm.mlir.global internal constant @__mixemu_site_0("loc(\22{{.*}}emulate-kernels.mlir\22:53:7)\00")
module attributes {gpu.container_module} {
  func.func @host(%a: memref<8xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @mix_kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>, %n : index)
    return
  }
  gpu.module @mix_kernels {
    gpu.func @scale(%a: memref<8xf32>, %n: index) kernel attributes {known_block_size = array<i32: 8, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %d = gpu.block_dim x
      %bd = arith.muli %b, %d : index
      %i = arith.addi %bd, %t : index
      %v = memref.load %a[%i] : memref<8xf32>
      %w = arith.addf %v, %v : f32
      gpu.barrier
      memref.store %w, %a[%i] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A check inside a loop stays inside it (an scf.if, not a branch).
// CHECK-LABEL: func.func @__mixemu_loop
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK:             func.call @mixemu_fail
// CHECK:           memref.load
module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    gpu.func @loop(%a: memref<8xf32>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %z = arith.constant 0.0 : f32
      %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> f32 {
        %v = memref.load %a[%i] : memref<8xf32>
        %r = arith.addf %acc, %v : f32
        scf.yield %r : f32
      }
      memref.store %s, %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Workgroup attributions are views of the block's shared memory, each at a
// multiple of 16 bytes (40 bytes of %tile, then %flags at 48: 64 in all);
// private ones, of 0xFF bytes on the thread's stack; the dynamic shared
// memory follows the static part, as long as the launch says.
// CHECK-LABEL: func.func @__mixemu_tile(
// CHECK-SAME:    %[[SHARED:[^:]*]]: memref<49152xi8>, %[[DYN:[^:]*]]: index)
// CHECK-SAME:    mix.shared_memory_bytes = 64 : i64
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[TILE:.*]] = memref.view %[[SHARED]][%[[C0]]][] : memref<49152xi8> to memref<10xf32>
// CHECK:         %[[C48:.*]] = arith.constant 48 : index
// CHECK:         %[[FLAGS:.*]] = memref.view %[[SHARED]][%[[C48]]][] : memref<49152xi8> to memref<3xi8>
// CHECK:         %[[STACK:.*]] = memref.alloca() {alignment = 16 : i64} : memref<16xi8>
// CHECK-DAG:     %[[SIXTEEN:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[POISON:.*]] = arith.constant -1 : i8
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %[[SIXTEEN]] step %{{.*}} {
// CHECK-NEXT:      memref.store %[[POISON]], %[[STACK]][%[[B]]] : memref<16xi8>
// CHECK:         %[[SCRATCH:.*]] = memref.view %[[STACK]][%{{.*}}][] : memref<16xi8> to memref<4xf32>
// CHECK:         memref.store %{{.*}}, %[[TILE]][%{{.*}}] : memref<10xf32>
// CHECK:         memref.store %{{.*}}, %[[FLAGS]][%{{.*}}] : memref<3xi8>
// CHECK:         memref.store %{{.*}}, %[[SCRATCH]][%{{.*}}] : memref<4xf32>
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[RAW:.*]] = memref.view %[[SHARED]][%[[C64]]][%[[DYN]]] : memref<49152xi8> to memref<?xi8>
// A view of it must end inside what the launch gives: here 4 x 2 bytes.
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK:         %[[BYTES:.*]] = arith.muli %[[FOUR]], %[[TWO]] : index
// CHECK:         %[[END:.*]] = arith.addi %{{.*}}, %[[BYTES]] : index
// CHECK:         %[[INSIDE:.*]] = arith.cmpi ule, %[[END]], %[[DYN]] : index
// CHECK:         %[[OUTSIDE:.*]] = arith.xori %[[INSIDE]], %{{.*}} : i1
// CHECK:         scf.if %[[OUTSIDE]] {
// CHECK:           %[[MSG:.*]] = llvm.mlir.addressof @[[VIEWMSG:__mixemu_message_[0-9]+]] : !llvm.ptr
// CHECK:           func.call @mixemu_fail(%[[MSG]])
// CHECK:         memref.view %[[RAW]][%{{.*}}][] : memref<?xi8> to memref<2xf32>
// CHECK:       llvm.mlir.global internal constant @[[VIEWMSG]]("kernel tile: memref.view past the end of the dynamic shared memory the launch gives; Location: loc(
module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    gpu.func @tile(%a: memref<8xf32>)
        workgroup(%tile : memref<10xf32, #gpu.address_space<workgroup>>,
                  %flags : memref<3xi8, #gpu.address_space<workgroup>>)
        private(%scratch : memref<4xf32, #gpu.address_space<private>>)
        kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %one = arith.constant 1 : i8
      %v = memref.load %a[%c0] : memref<8xf32>
      memref.store %v, %tile[%c1] : memref<10xf32, #gpu.address_space<workgroup>>
      memref.store %one, %flags[%c1] : memref<3xi8, #gpu.address_space<workgroup>>
      memref.store %v, %scratch[%c1] : memref<4xf32, #gpu.address_space<private>>
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %more = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2xf32, #gpu.address_space<workgroup>>
      memref.store %v, %more[%c1] : memref<2xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// A shuffle becomes a call of mixemu_shuffle with its mode (xor 0, down 1,
// up 2, idx 3), its place, the value's bits, the offset and the width; the
// value comes back in the low 32 bits and `valid` in bit 32.
// CHECK-LABEL: func.func @__mixemu_shuffle(
// CHECK-SAME:    %[[A:[^:]*]]: memref<8xf32>, %[[OFF:[^:]*]]: i32, %[[W:[^:]*]]: i32,
// CHECK-SAME:    mix.uses_shuffle
// CHECK:         %[[V:.*]] = memref.load %[[A]]
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[V]] : f32 to i32
// CHECK:         %[[XOR:.*]] = arith.constant 0 : i32
// CHECK:         %[[SITE:.*]] = llvm.mlir.addressof @__mixemu_site_0 : !llvm.ptr
// CHECK:         %[[P:.*]] = call @mixemu_shuffle(%[[SITE]], %[[XOR]], %[[BITS]], %[[OFF]], %[[W]]) : (!llvm.ptr, i32, i32, i32, i32) -> i64
// CHECK:         %[[LO:.*]] = arith.trunci %[[P]] : i64 to i32
// CHECK:         %[[R:.*]] = arith.bitcast %[[LO]] : i32 to f32
// CHECK:         %[[C32:.*]] = arith.constant 32 : i64
// CHECK:         %[[HI:.*]] = arith.shrui %[[P]], %[[C32]] : i64
// CHECK:         %[[OK:.*]] = arith.trunci %[[HI]] : i64 to i1
// CHECK:         arith.select %[[OK]], %[[R]], %[[V]] : f32
// CHECK:         %[[DOWN:.*]] = arith.constant 1 : i32
// CHECK:         call @mixemu_shuffle(%{{.*}}, %[[DOWN]], %{{.*}}, %[[OFF]], %[[W]])
// CHECK:         %[[UP:.*]] = arith.constant 2 : i32
// CHECK:         call @mixemu_shuffle(%{{.*}}, %[[UP]], %{{.*}}, %[[OFF]], %[[W]])
// CHECK:         %[[IDX:.*]] = arith.constant 3 : i32
// CHECK:         %[[Q:.*]] = call @mixemu_shuffle(%{{.*}}, %[[IDX]], %[[I:[^,]*]], %[[OFF]], %[[W]])
// CHECK:         arith.trunci %[[Q]] : i64 to i32
// CHECK-NOT:     arith.bitcast
// CHECK:         return
// CHECK:       func.func private @mixemu_shuffle(!llvm.ptr, i32, i32, i32, i32) -> i64
// CHECK:       llvm.mlir.global internal constant @__mixemu_site_0("loc(
module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    gpu.func @shuffle(%a: memref<8xf32>, %offset: i32, %width: i32) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<8xf32>
      %s, %ok = gpu.shuffle xor %v, %offset, %width : f32
      %r = arith.select %ok, %s, %v : f32
      %d, %ok1 = gpu.shuffle down %r, %offset, %width : f32
      %u, %ok2 = gpu.shuffle up %d, %offset, %width : f32
      memref.store %u, %a[%c0] : memref<8xf32>
      %i = arith.bitcast %u : f32 to i32
      %j, %ok3 = gpu.shuffle idx %i, %offset, %width : i32
      %k = arith.sitofp %j : i32 to f32
      memref.store %k, %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A subgroup reduction is the butterfly of xor shuffles over the warp's 32
// lanes (offsets 1, 2, 4, 8, 16).
// CHECK-LABEL: func.func @__mixemu_reduce(
// CHECK-SAME:    mix.uses_shuffle
// CHECK-COUNT-5: call @mixemu_shuffle
// CHECK-NOT:     gpu.subgroup_reduce
// CHECK-NOT:     call @mixemu_shuffle
// CHECK:         return
module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    gpu.func @reduce(%a: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<8xf32>
      %s = gpu.subgroup_reduce add %v : (f32) -> f32
      memref.store %s, %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Lanes and warps (subgroups) from the ids: the thread's linear id
// tx + dx (ty + dy tz) in warps of 32.
// CHECK-LABEL: func.func @__mixemu_lanes(
// CHECK-SAME:    %[[OUT:[^:]*]]: memref<8xindex>, %[[TX:[^:]*]]: index, %[[TY:[^:]*]]: index, %[[TZ:[^:]*]]: index, %[[BX:[^:]*]]: index, %[[BY:[^:]*]]: index, %[[BZ:[^:]*]]: index, %[[DX:[^:]*]]: index, %[[DY:[^:]*]]: index, %[[DZ:[^:]*]]: index,
// CHECK:         %[[YZ:.*]] = arith.muli %[[DY]], %[[TZ]] : index
// CHECK:         %[[Y:.*]] = arith.addi %[[TY]], %[[YZ]] : index
// CHECK:         %[[XYZ:.*]] = arith.muli %[[DX]], %[[Y]] : index
// CHECK:         %[[LINEAR:.*]] = arith.addi %[[TX]], %[[XYZ]] : index
// CHECK:         %[[WARP:.*]] = arith.constant 32 : index
// CHECK:         %[[LANE:.*]] = arith.remui %[[LINEAR]], %[[WARP]] : index
// CHECK:         %[[SUBGROUP:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK:         %[[SIZE:.*]] = arith.constant 32 : index
// CHECK:         %[[DYZ:.*]] = arith.muli %[[DY]], %[[DZ]] : index
// CHECK:         %[[THREADS:.*]] = arith.muli %[[DX]], %[[DYZ]] : index
// CHECK:         %[[COUNT:.*]] = arith.ceildivui %[[THREADS]], %{{.*}} : index
// CHECK:         %[[GY:.*]] = arith.muli %[[BY]], %[[DY]] : index
// CHECK:         %[[GLOBAL:.*]] = arith.addi %[[GY]], %[[TY]] : index
// CHECK:         memref.store %[[LANE]], %[[OUT]]
// CHECK:         memref.store %[[SUBGROUP]], %[[OUT]]
// CHECK:         memref.store %[[SIZE]], %[[OUT]]
// CHECK:         memref.store %[[COUNT]], %[[OUT]]
// CHECK:         memref.store %[[GLOBAL]], %[[OUT]]
module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    gpu.func @lanes(%out: memref<8xindex>) kernel {
      %lane = gpu.lane_id
      %subgroup = gpu.subgroup_id : index
      %size = gpu.subgroup_size : index
      %count = gpu.num_subgroups : index
      %global = gpu.global_id y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      memref.store %lane, %out[%c0] : memref<8xindex>
      memref.store %subgroup, %out[%c1] : memref<8xindex>
      memref.store %size, %out[%c2] : memref<8xindex>
      memref.store %count, %out[%c3] : memref<8xindex>
      memref.store %global, %out[%c4] : memref<8xindex>
      gpu.return
    }
  }
}

// -----

// What the emulator does not run is refused by name.
module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    gpu.func @wide(%a: memref<8xf64>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %v = memref.load %a[%c0] : memref<8xf64>
      // expected-error @+1 {{kernel wide: a shuffle of 'f64', which the CUDA emulator does not run (32-bit integers and floats only)}}
      %s, %ok = gpu.shuffle xor %v, %c1, %w : f64
      memref.store %s, %a[%c0] : memref<8xf64>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    gpu.func @print(%a: memref<8xf32>) kernel {
      // expected-error @+1 {{kernel print: `gpu.printf` is not run by the CUDA emulator yet}}
      gpu.printf "hello"
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    // 12289 floats (49156 bytes, 49168 with the padding): more than a block
    // has.
    // expected-error @+1 {{kernel big: 49168 bytes of workgroup memory exceed the 49152 a block has}}
    gpu.func @big(%a: memref<8xf32>) workgroup(%tile : memref<12289xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    // expected-error @+1 {{kernel deep: 16400 bytes of private memory a thread exceed the 16384 the CUDA emulator gives one}}
    gpu.func @deep(%a: memref<8xf32>) private(%scratch : memref<4100xf32, #gpu.address_space<private>>) kernel {
      gpu.return
    }
  }
}
