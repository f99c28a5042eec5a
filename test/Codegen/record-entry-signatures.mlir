// RUN: mix-opt %s --mix-record-entry-signatures | FileCheck %s

// mix-record-entry-signatures: each defined function, on buffers, carries
// its argument types (out-parameters included) as mix.entry_signature, which
// the LLVM lowering keeps and the entry-point packing and package writer
// read. Declarations (the runtime's functions) get none.

// CHECK-LABEL: func.func @step
// CHECK-SAME:    attributes {mix.entry_signature = [memref<2x3xf32>, memref<2x8xi32>, memref<f32>, memref<2x3xf32>]}
func.func @step(%w: memref<2x3xf32>, %tokens: memref<2x8xi32>, %loss: memref<f32>, %dw: memref<2x3xf32>) {
  memref.copy %w, %dw : memref<2x3xf32> to memref<2x3xf32>
  return
}

// A function of no arguments records the empty list.
// CHECK-LABEL: func.func @nothing
// CHECK-SAME:    attributes {mix.entry_signature = []}
func.func @nothing() {
  return
}

// CHECK:       func.func private @mixrt_helper(memref<4xf32>){{$}}
func.func private @mixrt_helper(memref<4xf32>)
