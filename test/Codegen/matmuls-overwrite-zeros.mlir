// RUN: mix-opt %s --mix-matmuls-to-library-calls=overwrite-zeros | FileCheck %s
// RUN: mix-opt %s --mix-matmuls-to-library-calls | FileCheck %s --check-prefix=ACC

// A product into an accumulator zero-filled just before (views and pure
// operations between are fine) computes C = A B: the `_set` call, and the
// fill goes. A fill of another value, or a write of the accumulator in
// between, keeps C += A B after the fill.
// CHECK-LABEL: func.func @products
//       CHECK:   call @mixrt_matmul_set(
//   CHECK-NOT:   linalg.fill
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%arg2
//       CHECK:   call @mixrt_matmul(
//       CHECK:   linalg.fill
//       CHECK:   memref.copy
//       CHECK:   call @mixrt_matmul(
//       CHECK:   call @mixrt_batch_matmul_set(
//   CHECK-NOT:   linalg.fill
//       CHECK:   return
// Without the option every product accumulates after its fill.
// ACC-COUNT-4: linalg.fill
// ACC-NOT: _set
func.func @products(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>,
                    %x: memref<2x4x8xf32>, %y: memref<2x8x16xf32>, %z: memref<2x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  %bt = memref.transpose %b (i, j) -> (i, j) : memref<8x16xf32> to memref<8x16xf32>
  linalg.matmul ins(%a, %bt : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.fill ins(%one : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  memref.copy %c, %c : memref<4x16xf32> to memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.fill ins(%zero : f32) outs(%z : memref<2x4x16xf32>)
  linalg.batch_matmul ins(%x, %y : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%z : memref<2x4x16xf32>)
  return
}

// Operations between the fill and its product that touch only other
// buffers of their own (allocations, other arguments; the gradient's fill
// made several kernels before its weight-gradient product) leave the fill
// the product's initializer. One that reaches the accumulator through
// another view of it, or a buffer whose origin cannot be told, does not.
// CHECK-LABEL: func.func @apart
//       CHECK:   linalg.generic
//       CHECK:   call @mixrt_matmul_set(
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%arg2
//       CHECK:   linalg.generic
//       CHECK:   call @mixrt_matmul(
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%arg2
//       CHECK:   call @opaque
//       CHECK:   linalg.generic
//       CHECK:   call @mixrt_matmul(
//       CHECK:   return
func.func private @opaque(memref<4x16xf32>) -> memref<4x16xf32>
func.func @apart(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>,
                 %other: memref<4x16xf32>, %unknown: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  // Other buffers: an argument and an allocation.
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%other : memref<4x16xf32>) outs(%tmp : memref<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  // The accumulator through a view of its own.
  %cv = memref.subview %c[0, 0] [2, 16] [1, 1] : memref<4x16xf32> to memref<2x16xf32, strided<[16, 1]>>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%cv : memref<2x16xf32, strided<[16, 1]>>) {
  ^bb0(%o: f32):
    linalg.yield %o : f32
  }
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  // A buffer of unknown origin (a call's result could be any buffer).
  %opaque = func.call @opaque(%unknown) : (memref<4x16xf32>) -> memref<4x16xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%opaque : memref<4x16xf32>) {
  ^bb0(%o: f32):
    linalg.yield %o : f32
  }
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  memref.dealloc %tmp : memref<4x16xf32>
  return
}
