// RUN: mix-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(gpu.module(generate-runtime-verification{verbose-level=0}),mix-emulate-kernels)' | FileCheck %s

// mix-emulate-kernels: each kernel becomes a host function that takes the
// kernel's arguments and then the twelve ids (thread id, block id, block
// size, grid size; x, y, z); a barrier becomes a call into the emulator;
// every memory access is checked, and a failed check calls mixemu_fail
// with the kernel's name. The gpu.module becomes a gpu.binary whose object
// is the emulator's marker, so the launch stays as it is.

// CHECK-LABEL: func.func @host
// CHECK:         gpu.launch_func @mix_kernels::@scale
// CHECK:       gpu.binary @mix_kernels [#gpu.object<#nvvm.target, bin = "MIXEMU01">]
// CHECK:       func.func @__mixemu_scale(%[[A:.*]]: memref<8xf32>, %[[N:.*]]: index, %[[TX:[^:]*]]: index, %{{.*}}: index, %{{.*}}: index, %[[BX:[^:]*]]: index, %{{.*}}: index, %{{.*}}: index, %[[DX:[^:]*]]: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
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
// CHECK:         call @mixemu_barrier() : () -> ()
// CHECK:         memref.store
// CHECK:         return
// CHECK-NOT:   gpu.thread_id
// CHECK:       func.func private @mixemu_barrier()
// CHECK:       func.func private @mixemu_fail(!llvm.ptr)
// CHECK:       llvm.mlir.global internal constant @__mixemu_message_0("kernel scale: out-of-bounds access; Location: loc(
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

// What the emulator does not run yet is refused by name.
module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    gpu.func @shuffle(%a: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %v = memref.load %a[%c0] : memref<8xf32>
      // expected-error @+1 {{kernel shuffle: `gpu.shuffle` is not run by the CUDA emulator yet}}
      %s, %ok = gpu.shuffle xor %v, %c1, %w : f32
      memref.store %s, %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @mix_kernels {
    // expected-error @+1 {{kernel tile uses workgroup or private memory, which the CUDA emulator does not run yet}}
    gpu.func @tile(%a: memref<8xf32>) workgroup(%tile : memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
