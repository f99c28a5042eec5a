// RUN: mix-opt %s --mix-matmuls-to-library-calls=fuse-bias | FileCheck %s
// RUN: mix-opt %s --mix-matmuls-to-library-calls | FileCheck %s --check-prefix=PLAIN

// A 2-d product into an accumulator just filled with a row vector in every
// row (a linear layer's bias: 1 x n or n, read at (0, j) or (j)) computes
// C = A B + bias: the `_bias` call takes the vector's base, offset, length
// and stride, and the broadcast goes. A broadcast along the other
// dimension, one that computes something, or a write of the accumulator in
// between keeps the broadcast and C += A B.
#row = affine_map<(i, j) -> (0, j)>
#vec = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i, 0)>
#id = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @biases
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg3
//       CHECK:   call @mixrt_matmul_bias({{.*}}, %[[BASE]], %[[OFF]], %[[SIZES]]#1, %[[STRIDES]]#1)
//   CHECK-NOT:   linalg.generic
//       CHECK:   call @mixrt_matmul_bias(
//       CHECK:   linalg.generic
//       CHECK:   call @mixrt_matmul(
//       CHECK:   linalg.generic
//       CHECK:   arith.addf
//       CHECK:   call @mixrt_matmul(
//       CHECK:   linalg.generic
//       CHECK:   memref.copy
//       CHECK:   call @mixrt_matmul(
//       CHECK:   return
// PLAIN-NOT: _bias
// PLAIN-COUNT-5: call @mixrt_matmul(
func.func @biases(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>,
                  %bias: memref<1x16xf32>, %v: memref<16xf32>, %w: memref<4x1xf32>) {
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<1x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %bt = memref.transpose %b (i, j) -> (i, j) : memref<8x16xf32> to memref<8x16xf32>
  linalg.matmul ins(%a, %bt : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#vec, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v : memref<16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<4x1xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<1x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<1x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.copy %c, %c : memref<4x16xf32> to memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}
