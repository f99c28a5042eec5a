// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-head-products))' | FileCheck %s

// The attention's batched products read and write the (B, S, h, dh)
// layout in place: the head transposes fold into a linalg.contract's
// indexing maps over (b0, b1, m, n, k).

// Scores: both operands collapses of head transposes (Q, and K^T); the
// result only expanded. The triangle mark travels.
// CHECK-DAG:   #[[QMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK-DAG:   #[[KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
// CHECK-DAG:   #[[CMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[PMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG:   #[[VMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d1, d3)>
// CHECK-DAG:   #[[OMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
// CHECK-DAG:   #[[PTMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2)>
// CHECK-DAG:   #[[GMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-LABEL: func.func @scores
//  CHECK-SAME:   (%[[Q:.*]]: tensor<2x5x3x4xf32>, %[[K:.*]]: tensor<2x5x3x4xf32>)
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 5, 5]
//       CHECK:   %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x3x5x5xf32>)
//       CHECK:   %[[S:.*]] = linalg.contract indexing_maps = [#[[QMAP]], #[[KMAP]], #[[CMAP]]] {mix.triangle = array<i64: 2, 0>} ins(%[[Q]], %[[K]] : tensor<2x5x3x4xf32>, tensor<2x5x3x4xf32>) outs(%[[Z]] : tensor<2x3x5x5xf32>)
//   CHECK-NOT:   linalg.batch_matmul
//       CHECK:   return %[[S]]
func.func @scores(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>) -> tensor<2x3x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x3x5x4xf32>
  %qt = linalg.transpose ins(%q : tensor<2x5x3x4xf32>) outs(%e0 : tensor<2x3x5x4xf32>) permutation = [0, 2, 1, 3]
  %e1 = tensor.empty() : tensor<2x3x4x5xf32>
  %kt = linalg.transpose ins(%k : tensor<2x5x3x4xf32>) outs(%e1 : tensor<2x3x4x5xf32>) permutation = [0, 2, 3, 1]
  %a = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<2x3x5x4xf32> into tensor<6x5x4xf32>
  %b = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %e2 = tensor.empty() : tensor<6x5x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %s = linalg.batch_matmul {mix.triangle = array<i64: 2, 0>} ins(%a, %b : tensor<6x5x4xf32>, tensor<6x4x5xf32>) outs(%z : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %r = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 3, 5, 5] : tensor<6x5x5xf32> into tensor<2x3x5x5xf32>
  return %r : tensor<2x3x5x5xf32>
}

// The output: P V written straight into the (B, S, h, dh) layout the
// transpose back made; P, not transposed, is expanded.
// CHECK-LABEL: func.func @output
//  CHECK-SAME:   (%[[P:.*]]: tensor<6x5x5xf32>, %[[V:.*]]: tensor<2x5x3x4xf32>)
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[P4:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 5, 5]
//       CHECK:   %[[Y:.*]] = tensor.empty() : tensor<2x5x3x4xf32>
//       CHECK:   %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[Y]] : tensor<2x5x3x4xf32>)
//       CHECK:   %[[O:.*]] = linalg.contract indexing_maps = [#[[PMAP]], #[[VMAP]], #[[OMAP]]] ins(%[[P4]], %[[V]] : {{.*}}) outs(%[[Z]] : tensor<2x5x3x4xf32>)
//   CHECK-NOT:   linalg.transpose
//       CHECK:   return %[[O]]
func.func @output(%p: tensor<6x5x5xf32>, %v: tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x3x5x4xf32>
  %vt = linalg.transpose ins(%v : tensor<2x5x3x4xf32>) outs(%e0 : tensor<2x3x5x4xf32>) permutation = [0, 2, 1, 3]
  %b = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<2x3x5x4xf32> into tensor<6x5x4xf32>
  %e1 = tensor.empty() : tensor<6x5x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
  %o = linalg.batch_matmul ins(%p, %b : tensor<6x5x5xf32>, tensor<6x5x4xf32>) outs(%z : tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
  %x = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 3, 5, 4] : tensor<6x5x4xf32> into tensor<2x3x5x4xf32>
  %e2 = tensor.empty() : tensor<2x5x3x4xf32>
  %y = linalg.transpose ins(%x : tensor<2x3x5x4xf32>) outs(%e2 : tensor<2x5x3x4xf32>) permutation = [0, 2, 1, 3]
  return %y : tensor<2x5x3x4xf32>
}

// P^T (the transpose of the last two dimensions) for dV, into an
// accumulator that is not a fill: the input folds, the output transpose
// stays. The transposed P has a second user and stays too.
// CHECK-LABEL: func.func @accumulate
//  CHECK-SAME:   (%[[P:.*]]: tensor<2x3x5x5xf32>, %[[G:.*]]: tensor<6x5x4xf32>, %[[ACC:.*]]: tensor<6x5x4xf32>)
//       CHECK:   %[[PT:.*]] = linalg.transpose ins(%[[P]] : tensor<2x3x5x5xf32>)
//       CHECK:   %[[G4:.*]] = tensor.expand_shape %[[G]]
//       CHECK:   %[[A4:.*]] = tensor.expand_shape %[[ACC]]
//       CHECK:   %[[O:.*]] = linalg.contract indexing_maps = [#[[PTMAP]], #[[GMAP]], #[[CMAP]]] ins(%[[P]], %[[G4]] : {{.*}}) outs(%[[A4]] : tensor<2x3x5x4xf32>)
//       CHECK:   %[[Y:.*]] = linalg.transpose ins(%[[O]] : tensor<2x3x5x4xf32>)
//       CHECK:   return %[[Y]], %[[PT]]
func.func @accumulate(%p: tensor<2x3x5x5xf32>, %g: tensor<6x5x4xf32>, %acc: tensor<6x5x4xf32>) -> (tensor<2x5x3x4xf32>, tensor<2x3x5x5xf32>) {
  %e0 = tensor.empty() : tensor<2x3x5x5xf32>
  %pt = linalg.transpose ins(%p : tensor<2x3x5x5xf32>) outs(%e0 : tensor<2x3x5x5xf32>) permutation = [0, 1, 3, 2]
  %a = tensor.collapse_shape %pt [[0, 1], [2], [3]] : tensor<2x3x5x5xf32> into tensor<6x5x5xf32>
  %o = linalg.batch_matmul ins(%a, %g : tensor<6x5x5xf32>, tensor<6x5x4xf32>) outs(%acc : tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
  %x = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 3, 5, 4] : tensor<6x5x4xf32> into tensor<2x3x5x4xf32>
  %e2 = tensor.empty() : tensor<2x5x3x4xf32>
  %y = linalg.transpose ins(%x : tensor<2x3x5x4xf32>) outs(%e2 : tensor<2x5x3x4xf32>) permutation = [0, 2, 1, 3]
  return %y, %pt : tensor<2x5x3x4xf32>, tensor<2x3x5x5xf32>
}

// Left alone: no transpose to fold (plain batched operands, a result used
// as it is).
// CHECK-LABEL: func.func @plain
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   linalg.batch_matmul
//   CHECK-NOT:   linalg.contract
func.func @plain(%a: tensor<6x5x4xf32>, %b: tensor<6x4x5xf32>, %c: tensor<6x5x5xf32>) -> tensor<6x5x5xf32> {
  %s = linalg.batch_matmul ins(%a, %b : tensor<6x5x4xf32>, tensor<6x4x5xf32>) outs(%c : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  return %s : tensor<6x5x5xf32>
}
