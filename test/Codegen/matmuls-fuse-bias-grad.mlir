// RUN: mix-opt %s --mix-matmuls-to-library-calls='overwrite-zeros fuse-bias-grad' | FileCheck %s
// RUN: mix-opt %s --mix-matmuls-to-library-calls='overwrite-zeros' | FileCheck %s --check-prefix=PLAIN

// A weight gradient dW = dY^T H into zeros, where the column sums of dY (a
// bias gradient, into a zero-filled 1 x n vector) come before it, computes
// both: the `_set_bgrad` call takes the vector's base, offset, length and
// stride last (cuBLASLt's BGRADB epilogue sums A's rows as it reads them),
// and the sum and its fill go, whatever reads dY or touches other buffers
// in between. A write of dY in between, a read of the vector, a product
// whose A is not the summed matrix transposed, a sum that is not one, or
// an accumulating product keep them apart.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (0, j)>

// CHECK-LABEL: func.func @fused
//   CHECK-NOT:   linalg.generic
//   CHECK-NOT:   linalg.fill
//       CHECK:   call @mixrt_matmul(
//       CHECK:   %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg4
//       CHECK:   call @mixrt_matmul_set_bgrad({{.*}}, %[[BASE]], %[[OFF]], %[[SIZES]]#1, %[[STRIDES]]#1)
//   CHECK-NOT:   linalg
//       CHECK:   return
// PLAIN-LABEL: func.func @fused
//       PLAIN:   linalg.generic
//       PLAIN:   call @mixrt_matmul_set(
func.func @fused(%dy: memref<4x16xf32>, %h: memref<4x8xf32>, %w: memref<16x8xf32>,
                 %dw: memref<16x8xf32>, %db: memref<1x16xf32>, %dh: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<4x16xf32>) outs(%db : memref<1x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  // Reads dY: allowed between.
  linalg.matmul ins(%dy, %w : memref<4x16xf32>, memref<16x8xf32>) outs(%dh : memref<4x8xf32>)
  linalg.fill ins(%zero : f32) outs(%dw : memref<16x8xf32>)
  %dyt = memref.transpose %dy (i, j) -> (j, i) : memref<4x16xf32> to memref<16x4xf32, strided<[1, 16]>>
  linalg.matmul ins(%dyt, %h : memref<16x4xf32, strided<[1, 16]>>, memref<4x8xf32>) outs(%dw : memref<16x8xf32>)
  return
}

// CHECK-LABEL: func.func @kept
//   CHECK-NOT:   _bgrad
//       CHECK:   return
func.func @kept(%dy: memref<4x16xf32>, %h: memref<4x8xf32>, %dw: memref<16x8xf32>,
                %db: memref<1x16xf32>, %out: memref<1x16xf32>, %y: memref<16x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %dyt = memref.transpose %dy (i, j) -> (j, i) : memref<4x16xf32> to memref<16x4xf32, strided<[1, 16]>>
  // dY written in between.
  linalg.fill ins(%zero : f32) outs(%db : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<4x16xf32>) outs(%db : memref<1x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dy : memref<4x16xf32>)
  linalg.fill ins(%zero : f32) outs(%dw : memref<16x8xf32>)
  linalg.matmul ins(%dyt, %h : memref<16x4xf32, strided<[1, 16]>>, memref<4x8xf32>) outs(%dw : memref<16x8xf32>)
  // The vector read in between.
  linalg.fill ins(%zero : f32) outs(%db : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<4x16xf32>) outs(%db : memref<1x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  memref.copy %db, %out : memref<1x16xf32> to memref<1x16xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<16x8xf32>)
  linalg.matmul ins(%dyt, %h : memref<16x4xf32, strided<[1, 16]>>, memref<4x8xf32>) outs(%dw : memref<16x8xf32>)
  // A is not dY transposed (the same shape, another buffer).
  linalg.fill ins(%zero : f32) outs(%db : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<4x16xf32>) outs(%db : memref<1x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<16x8xf32>)
  linalg.matmul ins(%y, %h : memref<16x4xf32>, memref<4x8xf32>) outs(%dw : memref<16x8xf32>)
  // Not a sum (a maximum).
  linalg.fill ins(%zero : f32) outs(%db : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<4x16xf32>) outs(%db : memref<1x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.maximumf %in, %o : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%dw : memref<16x8xf32>)
  linalg.matmul ins(%dyt, %h : memref<16x4xf32, strided<[1, 16]>>, memref<4x8xf32>) outs(%dw : memref<16x8xf32>)
  // The product accumulates (no zero fill of dW).
  linalg.fill ins(%zero : f32) outs(%db : memref<1x16xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%dy : memref<4x16xf32>) outs(%db : memref<1x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%dyt, %h : memref<16x4xf32, strided<[1, 16]>>, memref<4x8xf32>) outs(%dw : memref<16x8xf32>)
  return
}
