// RUN: mix-opt %s --convert-mix-to-linalg | FileCheck %s

// Matrix products and transposes (Structured.cpp). A 2-d product is
// linalg.matmul into a zero-filled accumulator; a transposed operand is a
// linalg.transpose of its last two dimensions first (later turned back
// into a strided view for the library call); every batch dimension folds
// into the one batch dimension of linalg.batch_matmul, and the result is
// reshaped back. The causal-products mark (mix.triangle) is kept.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3x4xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         %[[C:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[F]] : tensor<2x4xf32>)
// CHECK:         return %[[C]]
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %c = mix.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// a^T b^T with its triangle mark: each operand transposed by [1, 0], in
// the operand order, and the mark on the linalg.matmul.
// CHECK-LABEL: func.func @matmul_transposed
// CHECK-SAME:    (%[[A:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<4x3xf32>)
// CHECK:         %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<3x2xf32>) outs(%{{.*}} : tensor<2x3xf32>) permutation = [1, 0]
// CHECK:         %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<3x4xf32>) permutation = [1, 0]
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK:         linalg.matmul {mix.triangle = array<i64: 2, 0>} ins(%[[AT]], %[[BT]] : tensor<2x3xf32>, tensor<3x4xf32>) outs(%[[F]] : tensor<2x4xf32>)
func.func @matmul_transposed(%a: tensor<3x2xf32>, %b: tensor<4x3xf32>) -> tensor<2x4xf32> {
  %c = mix.matmul %a, %b transpose_lhs transpose_rhs {mix.triangle = array<i64: 2, 0>} : (tensor<3x2xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// A (5, 6)-batched product with b transposed: only b's last two dims swap
// ([0, 1, 3, 2]); both operands and the accumulator go to a batch of 30,
// and the (30, 2, 4) result back to (5, 6, 2, 4).
// CHECK-LABEL: func.func @batch_matmul
// CHECK-SAME:    (%[[A:.*]]: tensor<5x6x2x3xf32>, %[[B:.*]]: tensor<5x6x4x3xf32>)
// CHECK:         %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<5x6x4x3xf32>) outs(%{{.*}} : tensor<5x6x3x4xf32>) permutation = [0, 1, 3, 2]
// CHECK:         %[[A1:.*]] = tensor.collapse_shape %[[A]]
// CHECK:         %[[A3:.*]] = tensor.expand_shape %[[A1]] {{.*}} into tensor<30x2x3xf32>
// CHECK:         %[[B1:.*]] = tensor.collapse_shape %[[BT]]
// CHECK:         %[[B3:.*]] = tensor.expand_shape %[[B1]] {{.*}} into tensor<30x3x4xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<30x2x4xf32>)
// CHECK:         %[[C:.*]] = linalg.batch_matmul ins(%[[A3]], %[[B3]] : tensor<30x2x3xf32>, tensor<30x3x4xf32>) outs(%[[F]] : tensor<30x2x4xf32>)
// CHECK:         %[[C1:.*]] = tensor.collapse_shape %[[C]]
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[C1]] {{.*}} into tensor<5x6x2x4xf32>
// CHECK:         return %[[R]]
func.func @batch_matmul(%a: tensor<5x6x2x3xf32>, %b: tensor<5x6x4x3xf32>) -> tensor<5x6x2x4xf32> {
  %c = mix.matmul %a, %b transpose_rhs : (tensor<5x6x2x3xf32>, tensor<5x6x4x3xf32>) -> tensor<5x6x2x4xf32>
  return %c : tensor<5x6x2x4xf32>
}

// mix.transpose is linalg.transpose with the same permutation.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<3x4x2xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E]] : tensor<3x4x2xf32>) permutation = [1, 2, 0]
// CHECK:         return %[[T]]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %s = mix.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  return %s : tensor<3x4x2xf32>
}
