// RUN: mix-opt %s --mix-matmuls-to-library-calls --split-input-file -verify-diagnostics

// A product's support function is declared once, privately; a symbol of
// its name that is something else (here a function of another type) is an
// error, not a call of the wrong function.
// expected-error @below {{@mixrt_matmul exists and is not the support code's}}
func.func private @mixrt_matmul(i32)

func.func @product(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// expected-error @below {{@mixrt_matmul exists and is not the support code's}}
memref.global "private" constant @mixrt_matmul : memref<f32> = dense<0.0>

func.func @product(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}
