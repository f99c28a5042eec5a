// RUN: mix-opt %s --split-input-file --verify-diagnostics --mix-gradient-ready-points | FileCheck %s

// mix-gradient-ready-points: in @grad, after the last operation that may
// read or write each output (mix.entry_outputs: the last arguments), the
// support code is told the output is final (mix_gradient_ready on its
// base buffer), so that a data-parallel run averages it while the rest of
// the backward pass runs.

// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:[^:]*]]: memref<4x4xf32>, %{{.*}}: memref<4xi32>, %[[LOSS:[^:]*]]: memref<f32>, %[[DW:[^:]*]]: memref<4x4xf32>, %[[DB:[^:]*]]: memref<16xf32>, %[[DN:[^:]*]]: memref<4xf32>, %[[DI:[^:]*]]: memref<4xi32>)
// An output nothing touches is final from the start.
// CHECK-NEXT:    %[[BN:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[DN]]
// CHECK-NEXT:    call @mix_gradient_ready(%[[BN]]) : (memref<f32>) -> ()
// CHECK-NEXT:    %[[VIEW:.*]] = memref.expand_shape %[[DB]]
// CHECK:         memref.store %{{.*}}, %[[LOSS]][]
// CHECK-NEXT:    %[[BL:.*]], %{{.*}} = memref.extract_strided_metadata %[[LOSS]]
// CHECK-NEXT:    call @mix_gradient_ready(%[[BL]])
// The product writes the weight gradient, but a load reads it later.
// CHECK-NEXT:    call @product(%[[X]], %[[DW]])
// CHECK-NEXT:    memref.copy %[[X]], %[[VIEW]]
// A view made early counts where it is used.
// CHECK-NEXT:    %[[BB:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[DB]]
// CHECK-NEXT:    call @mix_gradient_ready(%[[BB]])
// CHECK-NEXT:    memref.load %[[DW]]
// CHECK-NEXT:    %[[BW:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[DW]]
// CHECK-NEXT:    call @mix_gradient_ready(%[[BW]])
// An output of another element type is left to the average after the call.
// CHECK-NOT:     extract_strided_metadata %[[DI]]
// CHECK:         return
module {
  func.func private @product(memref<4x4xf32>, memref<4x4xf32>)
  func.func @grad(%x: memref<4x4xf32>, %t: memref<4xi32>, %loss: memref<f32>,
                  %dw: memref<4x4xf32>, %db: memref<16xf32>, %dn: memref<4xf32>,
                  %di: memref<4xi32>) attributes {mix.entry_outputs = 5 : i64} {
    %view = memref.expand_shape %db [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    memref.store %zero, %loss[] : memref<f32>
    func.call @product(%x, %dw) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
    memref.copy %x, %view : memref<4x4xf32> to memref<4x4xf32>
    %v = memref.load %dw[%c0, %c0] : memref<4x4xf32>
    memref.store %v, %x[%c0, %c0] : memref<4x4xf32>
    return
  }
  // Other functions, and @grad without the mark, are left alone.
  // CHECK-LABEL: func.func @adamw
  // CHECK-NOT:     mix_gradient_ready
  // CHECK:         return
  // CHECK:       func.func private @mix_gradient_ready(memref<f32>)
  func.func @adamw(%p: memref<4xf32>, %out: memref<4xf32>) attributes {mix.entry_outputs = 1 : i64} {
    memref.copy %p, %out : memref<4xf32> to memref<4xf32>
    return
  }
}

// -----

// CHECK-LABEL: func.func @grad
// CHECK-NOT:     mix_gradient_ready
func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>) {
  memref.copy %x, %dx : memref<4xf32> to memref<4xf32>
  return
}

// -----

// expected-error @below {{mix.entry_outputs = 3 on a function of 2 arguments}}
func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>) attributes {mix.entry_outputs = 3 : i64} {
  return
}

// -----

// expected-error @below {{@mix_gradient_ready exists and is not the support code's}}
func.func private @mix_gradient_ready(memref<4xf32>)
func.func @grad(%x: memref<4xf32>, %dx: memref<4xf32>) attributes {mix.entry_outputs = 1 : i64} {
  return
}
