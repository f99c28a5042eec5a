// RUN: mix-opt %s --mix-matmuls-to-library-calls="overwrite-zeros triangular" | FileCheck %s

// A linalg.contract with two batch dimensions (mix-head-products) calls
// mixrt_batch2_matmul: each operand is viewed in the order (b0, b1, rows,
// columns), through memref.transpose where its indexing map permutes
// them, and passed with four sizes and four strides. After a zero fill,
// the _set form; a triangle mark, the _tri form.

// CHECK: func.func private @mixrt_batch2_matmul(i64, memref<f32>, index, index, index, index, index, index, index, index, index, memref<f32>, index, index, index, index, index, index, index, index, index, memref<f32>, index, index, index, index, index, index, index, index, index)
// CHECK: func.func private @mixrt_batch2_matmul_tri_set({{.*}}, i64, i64)

// CHECK-LABEL: func.func @scores
//  CHECK-SAME:   (%[[Q:.*]]: memref<2x5x3x4xf32>, %[[K:.*]]: memref<2x5x3x4xf32>, %[[S:.*]]: memref<2x3x5x5xf32>)
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[QV:.*]] = memref.transpose %[[Q]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x5x3x4xf32> to memref<2x3x5x4xf32, strided<[60, 4, 12, 1]>>
//       CHECK:   %[[KV:.*]] = memref.transpose %[[K]] (d0, d1, d2, d3) -> (d0, d2, d3, d1) : memref<2x5x3x4xf32> to memref<2x3x4x5xf32, strided<[60, 4, 1, 12]>>
//       CHECK:   memref.extract_strided_metadata %[[QV]]
//       CHECK:   memref.extract_strided_metadata %[[KV]]
//       CHECK:   memref.extract_strided_metadata %[[S]]
//       CHECK:   call @mixrt_batch2_matmul_tri_set(
//   CHECK-NOT:   linalg.contract
func.func @scores(%q: memref<2x5x3x4xf32>, %k: memref<2x5x3x4xf32>, %s: memref<2x3x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<2x3x5x5xf32>)
  linalg.contract indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, m, b1, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, n, b1, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>]
    {mix.triangle = array<i64: 2, 0>}
    ins(%q, %k : memref<2x5x3x4xf32>, memref<2x5x3x4xf32>) outs(%s : memref<2x3x5x5xf32>)
  return
}

// The output in the (B, S, h, dh) layout, accumulating: no view is needed
// for operands already in order.
// CHECK-LABEL: func.func @output
//  CHECK-SAME:   (%[[P:.*]]: memref<2x3x5x5xf32>, %[[V:.*]]: memref<2x5x3x4xf32>, %[[O:.*]]: memref<2x5x3x4xf32>)
//       CHECK:   %[[VV:.*]] = memref.transpose %[[V]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
//       CHECK:   %[[OV:.*]] = memref.transpose %[[O]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
//       CHECK:   memref.extract_strided_metadata %[[P]]
//       CHECK:   memref.extract_strided_metadata %[[VV]]
//       CHECK:   memref.extract_strided_metadata %[[OV]]
//       CHECK:   call @mixrt_batch2_matmul(
func.func @output(%p: memref<2x3x5x5xf32>, %v: memref<2x5x3x4xf32>, %o: memref<2x5x3x4xf32>) {
  linalg.contract indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, k, b1, n)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, m, b1, n)>]
    ins(%p, %v : memref<2x3x5x5xf32>, memref<2x5x3x4xf32>) outs(%o : memref<2x5x3x4xf32>)
  return
}

// Left alone: a contraction that is not a product with two batch
// dimensions (one batch dimension broadcast on B).
// CHECK-LABEL: func.func @other
//       CHECK:   linalg.contract
//   CHECK-NOT:   memref.transpose
func.func @other(%a: memref<2x3x5x4xf32>, %b: memref<3x4x6xf32>, %c: memref<2x3x5x6xf32>) {
  linalg.contract indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b1, k, n)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>]
    ins(%a, %b : memref<2x3x5x4xf32>, memref<3x4x6xf32>) outs(%c : memref<2x3x5x6xf32>)
  return
}
