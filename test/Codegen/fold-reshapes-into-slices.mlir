// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-fold-reshapes-into-slices))' | FileCheck %s

// A stream's result put in its slot through a reshape that only adds a
// unit dimension is inserted directly (a rank-reducing insertion), so
// that its producer can write into the slot in place.
// CHECK-LABEL: func.func @slot
//  CHECK-SAME: (%[[X:.*]]: tensor<4x16x64xf32>, %[[ACC:.*]]: tensor<4x16x4x64xf32>)
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   %[[R:.*]] = tensor.insert_slice %[[X]] into %[[ACC]][0, 0, 2, 0] [4, 16, 1, 64] [1, 1, 1, 1] : tensor<4x16x64xf32> into tensor<4x16x4x64xf32>
//       CHECK:   return %[[R]]
func.func @slot(%x: tensor<4x16x64xf32>, %acc: tensor<4x16x4x64xf32>) -> tensor<4x16x4x64xf32> {
  %e = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [4, 16, 1, 64] : tensor<4x16x64xf32> into tensor<4x16x1x64xf32>
  %r = tensor.insert_slice %e into %acc[0, 0, 2, 0] [4, 16, 1, 64] [1, 1, 1, 1] : tensor<4x16x1x64xf32> into tensor<4x16x4x64xf32>
  return %r : tensor<4x16x4x64xf32>
}

// An expansion that splits a dimension stays.
// CHECK-LABEL: func.func @split
//       CHECK:   tensor.expand_shape
//       CHECK:   tensor.insert_slice
func.func @split(%x: tensor<4x64xf32>, %acc: tensor<8x2x64xf32>) -> tensor<8x2x64xf32> {
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 2, 64] : tensor<4x64xf32> into tensor<2x2x64xf32>
  %r = tensor.insert_slice %e into %acc[0, 0, 0] [2, 2, 64] [1, 1, 1] : tensor<2x2x64xf32> into tensor<8x2x64xf32>
  return %r : tensor<8x2x64xf32>
}
