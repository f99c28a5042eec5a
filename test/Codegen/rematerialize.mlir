// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-rematerialize))' | FileCheck %s
// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-rematerialize{elementwise=false}))' | FileCheck %s --check-prefix=KEEP

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>
#col = affine_map<(i, j) -> (0, j)>

// A broadcast product (an outer product writes 16 elements from 8) read by
// two products, one through a reshape: the second gets its own copy, made
// just before it with an empty of its own, so the first copy dies after
// the first product. The shared zero fill of the accumulators is made
// again for the second product too.
// CHECK-LABEL: func.func @outer
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} outs(%[[E]]
//       CHECK:   %[[Z:.*]] = linalg.fill {{.*}} -> tensor<4x4xf32>
//       CHECK:   %[[P:.*]] = linalg.matmul ins(%[[S]], %arg2 {{.*}} outs(%[[Z]]
//       CHECK:   %[[E2:.*]] = tensor.empty() : tensor<4x4xf32>
//       CHECK:   %[[S2:.*]] = linalg.generic {{.*}} outs(%[[E2]]
//       CHECK:   %[[F2:.*]] = tensor.collapse_shape %[[S2]]
//       CHECK:   %[[E3:.*]] = tensor.empty() : tensor<4x4xf32>
//       CHECK:   %[[Z2:.*]] = linalg.fill {{.*}} outs(%[[E3]]
//       CHECK:   linalg.generic {{.*}} ins(%[[P]], %[[F2]] : {{.*}} outs(%[[Z2]]
//   CHECK-NOT:   tensor.collapse_shape
// With elementwise=false (the cuda target) only the fill is made again:
// both products read the one broadcast product.
// KEEP-LABEL: func.func @outer
//       KEEP:   %[[S:.*]] = linalg.generic
//       KEEP:   %[[Z:.*]] = linalg.fill
//       KEEP:   %[[P:.*]] = linalg.matmul ins(%[[S]], %arg2 {{.*}} outs(%[[Z]]
//       KEEP:   %[[F:.*]] = tensor.collapse_shape %[[S]]
//       KEEP:   %[[Z2:.*]] = linalg.fill
//       KEEP:   linalg.generic {{.*}} ins(%[[P]], %[[F]] : {{.*}} outs(%[[Z2]]
// KEEP-LABEL: func.func @operand_dies
func.func @outer(%a: tensor<4x1xf32>, %b: tensor<1x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %s = linalg.generic {indexing_maps = [#row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x1xf32>, tensor<1x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.matmul ins(%s, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %flat = tensor.collapse_shape %s [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %q = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i * 4 + j)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %flat : tensor<4x4xf32>, tensor<16xf32>) outs(%z : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.addf %x, %y : f32
    %t = arith.addf %r, %out : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  return %q : tensor<4x4xf32>
}

// An elementwise op whose operand is dead by its second user writes no more
// than recomputing would keep alive: it is stored, computed once.
// CHECK-LABEL: func.func @operand_dies
//       CHECK:   math.exp
//   CHECK-NOT:   math.exp
func.func @operand_dies(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.matmul ins(%t, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q = linalg.matmul ins(%w, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %p, %q : tensor<4x4xf32>, tensor<4x4xf32>
}

// The same op on an operand that stays live (an argument) costs nothing
// to recompute: the second product gets its own copy.
// CHECK-LABEL: func.func @operand_lives
//       CHECK:   math.exp
//       CHECK:   linalg.matmul
//       CHECK:   math.exp
//       CHECK:   linalg.matmul
func.func @operand_lives(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.matmul ins(%t, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q = linalg.matmul ins(%w, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%x : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %p, %q : tensor<4x4xf32>, tensor<4x4xf32>
}

// A broadcast product read through one slice per user (a stream's part of
// the gate-scaled input): each copy computes only its slice, from slices
// of the operands (the broadcast operand keeps its unit dimension).
#g = affine_map<(t, k, i) -> (t, k, 0)>
#x = affine_map<(t, k, i) -> (t, 0, i)>
#o = affine_map<(t, k, i) -> (t, k, i)>
// CHECK-LABEL: func.func @streams
//       CHECK:   %[[G1:.*]] = tensor.extract_slice %arg0[0, 1, 0] [4, 1, 1]
//       CHECK:   %[[X1:.*]] = tensor.extract_slice %arg1[0, 0, 0] [4, 1, 8]
//       CHECK:   linalg.generic {{.*}} ins(%[[G1]], %[[X1]] : tensor<4x1x1xf32>, tensor<4x1x8xf32>) outs(%{{.*}} : tensor<4x1x8xf32>)
//       CHECK:   linalg.matmul
//       CHECK:   %[[G0:.*]] = tensor.extract_slice %arg0[0, 0, 0] [4, 1, 1]
//       CHECK:   linalg.generic {{.*}} ins(%[[G0]], %{{.*}} : tensor<4x1x1xf32>, tensor<4x1x8xf32>) outs(%{{.*}} : tensor<4x1x8xf32>)
//       CHECK:   linalg.matmul
//   CHECK-NOT:   tensor<4x2x8xf32>
func.func @streams(%g: tensor<4x2x1xf32>, %x: tensor<4x1x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x2x8xf32>
  %s = linalg.generic {indexing_maps = [#g, #x, #o], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g, %x : tensor<4x2x1xf32>, tensor<4x1x8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x2x8xf32>
  %s1 = tensor.extract_slice %s[0, 1, 0] [4, 1, 8] [1, 1, 1] : tensor<4x2x8xf32> to tensor<4x1x8xf32>
  %a1 = tensor.collapse_shape %s1 [[0, 1], [2]] : tensor<4x1x8xf32> into tensor<4x8xf32>
  %p = linalg.matmul ins(%a1, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s0 = tensor.extract_slice %s[0, 0, 0] [4, 1, 8] [1, 1, 1] : tensor<4x2x8xf32> to tensor<4x1x8xf32>
  %a0 = tensor.collapse_shape %s0 [[0, 1], [2]] : tensor<4x1x8xf32> into tensor<4x8xf32>
  %q = linalg.matmul ins(%a0, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%p : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p, %q : tensor<4x8xf32>, tensor<4x8xf32>
}

// A write of the value into its destination (AdamW's new moment into the
// old one) is not a computation: it gets no copy, so that bufferization can
// compute the value in place there, once.
// CHECK-LABEL: func.func @moment
//       CHECK:   %[[M:.*]] = linalg.generic
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %[[M]]
//       CHECK:   bufferization.materialize_in_destination %[[M]] in %arg0
//   CHECK-NOT:   linalg.generic
func.func @moment(%m: tensor<4x4xf32> {bufferization.writable = true}, %g: tensor<4x4xf32>, %p: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %step = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %new : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %written = bufferization.materialize_in_destination %new in %m : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %step : tensor<4x4xf32>
}
