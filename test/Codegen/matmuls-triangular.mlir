// RUN: mix-opt %s --mix-matmuls-to-library-calls="overwrite-zeros triangular" | FileCheck %s
// RUN: mix-opt %s --mix-matmuls-to-library-calls | FileCheck %s --check-prefix=PLAIN

// A product marked mix.triangle (mix-causal-products) calls the _tri form,
// its kind and diagonal the last two arguments; after a zero fill, the
// _tri_set form. Without the option the mark is ignored.
//       CHECK: func.func private @mixrt_batch_matmul_tri_set({{.*}}, i64, i64)
// CHECK-LABEL: func.func @triangles
//       CHECK:   %[[K:.*]] = arith.constant 2 : i64
//       CHECK:   %[[P:.*]] = arith.constant 16 : i64
//       CHECK:   call @mixrt_batch_matmul_tri_set({{.*}}, %[[K]], %[[P]]) :
//   CHECK-NOT:   linalg.fill
//       CHECK:   call @mixrt_batch_matmul_tri({{.*}}, %{{.*}}, %{{.*}}) :
//       CHECK:   call @mixrt_matmul(
// PLAIN-NOT: _tri
func.func @triangles(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>,
                     %x: memref<4x8xf32>, %y: memref<8x16xf32>, %z: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4x16xf32>)
  linalg.batch_matmul {mix.triangle = array<i64: 2, 16>} ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  linalg.batch_matmul {mix.triangle = array<i64: 0, 0>} ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  linalg.matmul ins(%x, %y : memref<4x8xf32>, memref<8x16xf32>) outs(%z : memref<4x16xf32>)
  return
}
