// RUN: mix-opt %s --split-input-file --mix-autodiff | FileCheck %s

// The vector-Jacobian products of reductions, broadcasts, matrix products
// and transposes. Each @forward returns sum(y) of the op's result y, so the
// adjoint of y is the seed broadcast to y's shape (DY); @grad returns the
// loss and then the gradient of each argument, in argument order. The
// shapes are all different (m = 2, k = 3, n = 4, batch 5) so that a missing
// or extra transpose changes a type that the CHECK lines spell out.

// s = reduce_sum(x) over dim 1 keeps it as size 1: dx is ds broadcast back
// along that dimension.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[DS:.*]] = mix.broadcast %{{.*}} : tensor<1x1x1xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.broadcast %[[DS]] : tensor<2x1x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3x4xf32>) -> tensor<f32> {
  %r = mix.reduce_sum %x dims [1] : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %s = mix.reduce_sum %r dims [0, 1, 2] : tensor<2x1x4xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = broadcast(x) from (1, 3, 1): dx sums g over exactly the broadcast
// dimensions 0 and 2, keeping them (not over dimension 1).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3x1xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1x1xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.reduce_sum %[[DY]] dims [0, 2] : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<1x3x1xf32>) -> tensor<f32> {
  %y = mix.broadcast %x : tensor<1x3x1xf32> -> tensor<2x3x4xf32>
  %s = mix.reduce_sum %y dims [0, 1, 2] : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// C = A B, A (2, 3), B (3, 4): dA = dC B^T, dB = A^T dC.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3x4xf32>)
// CHECK:         %[[DC:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK-DAG:     %[[DA:.*]] = mix.matmul %[[DC]], %[[B]] transpose_rhs : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
// CHECK-DAG:     %[[DB:.*]] = mix.matmul %[[A]], %[[DC]] transpose_lhs : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK:         return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<f32> {
  %c = mix.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %s = mix.reduce_sum %c dims [0, 1] : tensor<2x4xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// C = a b^T with b (4, 3): dA = dC b, and b's adjoint is dB^T = dC^T a.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<4x3xf32>)
// CHECK:         %[[DC:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK-DAG:     %[[DA:.*]] = mix.matmul %[[DC]], %[[B]] : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-DAG:     %[[DB:.*]] = mix.matmul %[[DC]], %[[A]] transpose_lhs : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK:         return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<f32> {
  %c = mix.matmul %a, %b transpose_rhs : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %s = mix.reduce_sum %c dims [0, 1] : tensor<2x4xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// C = a^T b with a (3, 2): a's adjoint is dA^T = (dC B^T)^T = b dC^T, and
// dB = A^T dC = a dC.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<3x4xf32>)
// CHECK:         %[[DC:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK-DAG:     %[[DA:.*]] = mix.matmul %[[B]], %[[DC]] transpose_rhs : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
// CHECK-DAG:     %[[DB:.*]] = mix.matmul %[[A]], %[[DC]] : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK:         return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<f32> {
  %c = mix.matmul %a, %b transpose_lhs : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %s = mix.reduce_sum %c dims [0, 1] : tensor<2x4xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// C = a^T b^T with a (3, 2), b (4, 3): a's adjoint is (dC b)^T = b^T dC^T
// and b's is (a dC)^T = dC^T a^T.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<4x3xf32>)
// CHECK:         %[[DC:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK-DAG:     %[[DA:.*]] = mix.matmul %[[B]], %[[DC]] transpose_lhs transpose_rhs : (tensor<4x3xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
// CHECK-DAG:     %[[DB:.*]] = mix.matmul %[[DC]], %[[A]] transpose_lhs transpose_rhs : (tensor<2x4xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
// CHECK:         return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<3x2xf32>, %b: tensor<4x3xf32>) -> tensor<f32> {
  %c = mix.matmul %a, %b transpose_lhs transpose_rhs : (tensor<3x2xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %s = mix.reduce_sum %c dims [0, 1] : tensor<2x4xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A batched product: the same rule per batch entry, the batch dimension
// carried through both adjoint products.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[A:.*]]: tensor<5x2x3xf32>, %[[B:.*]]: tensor<5x3x4xf32>)
// CHECK:         %[[DC:.*]] = mix.broadcast %{{.*}} : tensor<1x1x1xf32> -> tensor<5x2x4xf32>
// CHECK-DAG:     %[[DA:.*]] = mix.matmul %[[DC]], %[[B]] transpose_rhs : (tensor<5x2x4xf32>, tensor<5x3x4xf32>) -> tensor<5x2x3xf32>
// CHECK-DAG:     %[[DB:.*]] = mix.matmul %[[A]], %[[DC]] transpose_lhs : (tensor<5x2x3xf32>, tensor<5x2x4xf32>) -> tensor<5x3x4xf32>
// CHECK:         return %{{.*}}, %[[DA]], %[[DB]]
func.func @forward(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<f32> {
  %c = mix.matmul %a, %b : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  %s = mix.reduce_sum %c dims [0, 1, 2] : tensor<5x2x4xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A product of a value with itself, x^T x: both adjoint products land on x
// and are summed.
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[DC:.*]] = mix.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<3x3xf32>
// CHECK-DAG:     %[[D1:.*]] = mix.matmul %[[X]], %[[DC]] transpose_rhs : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
// CHECK-DAG:     %[[D2:.*]] = mix.matmul %[[X]], %[[DC]] : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[DX:.*]] = mix.add %[[D1]], %[[D2]]
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %c = mix.matmul %x, %x transpose_lhs : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %s = mix.reduce_sum %c dims [0, 1] : tensor<3x3xf32> -> tensor<1x1xf32>
  %l = mix.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// y = transpose(x) by [1, 2, 0]: dx transposes g by the *inverse*
// permutation [2, 0, 1] (a 3-cycle, so the permutation is not its own
// inverse and using it again would be wrong).
// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[DY:.*]] = mix.broadcast %{{.*}} : tensor<1x1x1xf32> -> tensor<3x4x2xf32>
// CHECK-NEXT:    %[[DX:.*]] = mix.transpose %[[DY]] [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]]
func.func @forward(%x: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = mix.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %s = mix.reduce_sum %y dims [0, 1, 2] : tensor<3x4x2xf32> -> tensor<1x1x1xf32>
  %l = mix.reshape %s : tensor<1x1x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
