// RUN: mix-opt %s -split-input-file -verify-diagnostics --mix-emulator-launchers | FileCheck %s

// mix-emulator-launchers: each emulated kernel gets the entry point the
// emulator calls a thread at a time, mixemu_launch_<kernel>(params, ids):
// argument i is read through params[i] (cuLaunchKernel's array of pointers
// to the values), then the twelve ids; and mixemu_nparams_<kernel>.

// CHECK: llvm.mlir.global external constant @mixemu_nparams_scale(2 : i64)
// CHECK:       llvm.func @mixemu_launch_scale(%[[P:.*]]: !llvm.ptr, %[[IDS:.*]]: !llvm.ptr)
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[P]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[A0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[V0:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[S1:.*]] = llvm.getelementptr %[[P]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[A1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[V1:.*]] = llvm.load %[[A1]] : !llvm.ptr -> f32
// CHECK:         %[[T0:.*]] = llvm.getelementptr %[[IDS]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK:         %[[ID0:.*]] = llvm.load %[[T0]] : !llvm.ptr -> i64
// CHECK-COUNT-11: llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:         llvm.call @__mixemu_scale(%[[V0]], %[[V1]], %[[ID0]],
// CHECK:         llvm.return
// CHECK-NOT:   mixemu_launch_helper
llvm.func @__mixemu_scale(%a: !llvm.ptr, %s: f32, %i0: i64, %i1: i64, %i2: i64, %i3: i64, %i4: i64, %i5: i64, %i6: i64, %i7: i64, %i8: i64, %i9: i64, %i10: i64, %i11: i64) attributes {mix.emulated_kernel = "scale"} {
  llvm.return
}
// A function that is no emulated kernel gets nothing.
llvm.func @helper(%a: !llvm.ptr) {
  llvm.return
}

// -----

// expected-error @+1 {{an emulated kernel ends with twelve ids}}
llvm.func @__mixemu_short(%a: !llvm.ptr) attributes {mix.emulated_kernel = "short"} {
  llvm.return
}
