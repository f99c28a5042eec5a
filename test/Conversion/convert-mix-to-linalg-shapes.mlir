// RUN: mix-opt %s --convert-mix-to-linalg | FileCheck %s

// Layout ops (Shapes.cpp) become tensor ops: a reshape goes through one
// flat dimension (collapse, then expand), or through rank 0 when every
// dimension is 1; slices are extract_slice, pads an insert_slice into
// zeros, and a concatenation (or a tree of them along one dimension) one
// insert_slice of each part, at the running offset, into one tensor.

// CHECK-LABEL: func.func @reshape
// CHECK-SAME:    (%[[X:.*]]: tensor<2x6xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<2x6xf32> into tensor<12xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK-NEXT:    return %[[E]]
func.func @reshape(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %y = mix.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// (1, 1) -> () and (1, 1) -> (1, 1, 1): through rank 0, with empty
// reassociations.
// CHECK-LABEL: func.func @reshape_ones
// CHECK-SAME:    (%[[X:.*]]: tensor<1x1xf32>)
// CHECK-NEXT:    %[[S:.*]] = tensor.collapse_shape %[[X]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK-NEXT:    %[[S2:.*]] = tensor.collapse_shape %[[X]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[S2]] [] output_shape [1, 1, 1] : tensor<f32> into tensor<1x1x1xf32>
// CHECK-NEXT:    return %[[S]], %[[E]]
func.func @reshape_ones(%x: tensor<1x1xf32>) -> (tensor<f32>, tensor<1x1x1xf32>) {
  %y = mix.reshape %x : tensor<1x1xf32> -> tensor<f32>
  %z = mix.reshape %x : tensor<1x1xf32> -> tensor<1x1x1xf32>
  return %y, %z : tensor<f32>, tensor<1x1x1xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[X]][0, 3] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
// CHECK-NEXT:    return %[[S]]
func.func @slice(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %y = mix.slice %x dim 1 offset 3 : tensor<2x8xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<5x3xf32>)
// CHECK-NEXT:    %[[P:.*]] = tensor.insert_slice %[[X]] into %[[F]][1, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<5x3xf32>
// CHECK-NEXT:    return %[[P]]
func.func @pad(%x: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %y = mix.pad %x dim 0 offset 1 : tensor<2x3xf32> -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}

// No fill for a concatenation: its parts cover the result.
// CHECK-LABEL: func.func @concat
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK-NEXT:    %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK-NEXT:    %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 5] [1, 1]
// CHECK-NEXT:    return %[[I1]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %y = mix.concat %a, %b dim 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// A concatenation of a concatenation along the same dimension: one tensor,
// three insertions at offsets 0, 1, 1 + 2 (no intermediate (3, 3) tensor).
// CHECK-LABEL: func.func @concat_tree
// CHECK-SAME:    (%[[A:.*]]: tensor<1x3xf32>, %[[B:.*]]: tensor<2x3xf32>, %[[C:.*]]: tensor<4x3xf32>)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<7x3xf32>
// CHECK-NEXT:    %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [1, 3] [1, 1]
// CHECK-NEXT:    %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][1, 0] [2, 3] [1, 1]
// CHECK-NEXT:    %[[I2:.*]] = tensor.insert_slice %[[C]] into %[[I1]][3, 0] [4, 3] [1, 1]
// CHECK-NEXT:    return %[[I2]]
func.func @concat_tree(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>, %c: tensor<4x3xf32>) -> tensor<7x3xf32> {
  %ab = mix.concat %a, %b dim 0 : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %y = mix.concat %ab, %c dim 0 : (tensor<3x3xf32>, tensor<4x3xf32>) -> tensor<7x3xf32>
  return %y : tensor<7x3xf32>
}

// Must not flatten: the inner concatenation is along another dimension
// (and used twice), so it is a tensor of its own, inserted whole twice.
// CHECK-LABEL: func.func @concat_other_dim
// CHECK-SAME:    (%[[A:.*]]: tensor<1x3xf32>, %[[B:.*]]: tensor<1x3xf32>)
// CHECK-NEXT:    %[[E0:.*]] = tensor.empty() : tensor<1x6xf32>
// CHECK-NEXT:    %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E0]][0, 0] [1, 3] [1, 1]
// CHECK-NEXT:    %[[AB:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [1, 3] [1, 1]
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<2x6xf32>
// CHECK-NEXT:    %[[I1:.*]] = tensor.insert_slice %[[AB]] into %[[E1]][0, 0] [1, 6] [1, 1]
// CHECK-NEXT:    %[[I2:.*]] = tensor.insert_slice %[[AB]] into %[[I1]][1, 0] [1, 6] [1, 1]
// CHECK-NEXT:    return %[[I2]]
func.func @concat_other_dim(%a: tensor<1x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x6xf32> {
  %ab = mix.concat %a, %b dim 1 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x6xf32>
  %y = mix.concat %ab, %ab dim 0 : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}
