// RUN: mix-opt %s -split-input-file -verify-diagnostics --mix-emulator-launchers | FileCheck %s

// mix-emulator-launchers: each emulated kernel gets the entry point the
// emulator calls a thread at a time, mixemu_launch_<kernel>(params, thread):
// argument i is read through params[i] (cuLaunchKernel's array of pointers
// to the values), then the twelve ids, the block's shared memory and the
// size of its dynamic part from the MixEmuThread; and the constants
// mixemu_nparams_<kernel>, mixemu_shared_bytes_<kernel> (static shared
// memory) and mixemu_flags_<kernel> (1: its threads wait for each other).

// CHECK:       llvm.mlir.global external constant @mixemu_nparams_scale(2 : i64)
// CHECK:       llvm.mlir.global external constant @mixemu_shared_bytes_scale(0 : i64)
// CHECK:       llvm.mlir.global external constant @mixemu_flags_scale(0 : i64)
// CHECK:       llvm.func @mixemu_launch_scale(%[[P:.*]]: !llvm.ptr, %[[T:.*]]: !llvm.ptr)
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[P]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[A0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[V0:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S1:.*]] = llvm.getelementptr %[[P]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[A1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[V1:.*]] = llvm.load %[[A1]] : !llvm.ptr -> f32
// CHECK:         %[[T0:.*]] = llvm.getelementptr %[[T]][0, 0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<12 x i64>, ptr, i64)>
// CHECK:         %[[ID0:.*]] = llvm.load %[[T0]] : !llvm.ptr -> i64
// CHECK-COUNT-10: llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:         %[[T11:.*]] = llvm.getelementptr %[[T]][0, 0, 11] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<12 x i64>, ptr, i64)>
// CHECK:         %[[ID11:.*]] = llvm.load %[[T11]] : !llvm.ptr -> i64
// CHECK:         %[[TS:.*]] = llvm.getelementptr %[[T]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<12 x i64>, ptr, i64)>
// CHECK:         %[[SHARED:.*]] = llvm.load %[[TS]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[TD:.*]] = llvm.getelementptr %[[T]][0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<12 x i64>, ptr, i64)>
// CHECK:         %[[DYN:.*]] = llvm.load %[[TD]] : !llvm.ptr -> i64
// CHECK:         llvm.call @__mixemu_scale(%[[V0]], %[[V1]], %[[ID0]], {{.*}}, %[[ID11]], %[[SHARED]], %[[DYN]])
// CHECK:         llvm.return
// CHECK-NOT:   mixemu_launch_helper
llvm.func @__mixemu_scale(%a: !llvm.ptr, %s: f32, %i0: i64, %i1: i64, %i2: i64, %i3: i64, %i4: i64, %i5: i64, %i6: i64, %i7: i64, %i8: i64, %i9: i64, %i10: i64, %i11: i64, %shared: !llvm.ptr, %dynamic: i64) attributes {mix.emulated_kernel = "scale"} {
  llvm.return
}
// A function that is no emulated kernel gets nothing.
llvm.func @helper(%a: !llvm.ptr) {
  llvm.return
}

// -----

// A kernel with workgroup memory and barriers, and one with shuffles: their
// static shared memory and the flag that runs their threads as fibers.
// CHECK-DAG: llvm.mlir.global external constant @mixemu_shared_bytes_reduce(512 : i64)
// CHECK-DAG: llvm.mlir.global external constant @mixemu_flags_reduce(1 : i64)
// CHECK-DAG: llvm.mlir.global external constant @mixemu_shared_bytes_warp(0 : i64)
// CHECK-DAG: llvm.mlir.global external constant @mixemu_flags_warp(1 : i64)
llvm.func @__mixemu_reduce(%i0: i64, %i1: i64, %i2: i64, %i3: i64, %i4: i64, %i5: i64, %i6: i64, %i7: i64, %i8: i64, %i9: i64, %i10: i64, %i11: i64, %shared: !llvm.ptr, %dynamic: i64) attributes {mix.emulated_kernel = "reduce", mix.shared_memory_bytes = 512 : i64, mix.uses_barrier} {
  llvm.return
}
llvm.func @__mixemu_warp(%i0: i64, %i1: i64, %i2: i64, %i3: i64, %i4: i64, %i5: i64, %i6: i64, %i7: i64, %i8: i64, %i9: i64, %i10: i64, %i11: i64, %shared: !llvm.ptr, %dynamic: i64) attributes {mix.emulated_kernel = "warp", mix.uses_shuffle} {
  llvm.return
}

// -----

// expected-error @+1 {{an emulated kernel ends with twelve i64 ids, the shared memory's pointer and the i64 size of its dynamic part}}
llvm.func @__mixemu_short(%a: !llvm.ptr) attributes {mix.emulated_kernel = "short"} {
  llvm.return
}

// -----

// The twelve ids without the shared memory (the ABI before it).
// expected-error @+1 {{an emulated kernel ends with twelve i64 ids, the shared memory's pointer and the i64 size of its dynamic part}}
llvm.func @__mixemu_old(%a: !llvm.ptr, %s: !llvm.ptr, %i0: i64, %i1: i64, %i2: i64, %i3: i64, %i4: i64, %i5: i64, %i6: i64, %i7: i64, %i8: i64, %i9: i64, %i10: i64, %i11: i64) attributes {mix.emulated_kernel = "old"} {
  llvm.return
}
