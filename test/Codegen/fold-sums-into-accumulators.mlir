// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-fold-sums-into-accumulators))' --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A linear layer's bias: the product accumulates into the broadcast bias.
// CHECK-LABEL: func.func @bias
//  CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[BIAS:.*]]: tensor<16xf32>)
//       CHECK:   %[[EMPTY:.*]] = tensor.empty() : tensor<4x16xf32>
//       CHECK:   %[[INIT:.*]] = linalg.generic
//  CHECK-SAME:       ins(%[[BIAS]] : tensor<16xf32>) outs(%[[EMPTY]] : tensor<4x16xf32>)
//  CHECK-NEXT:   ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
//  CHECK-NEXT:     linalg.yield %[[IN]] : f32
//       CHECK:   %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[INIT]] : tensor<4x16xf32>)
//   CHECK-NOT:   arith.addf
//       CHECK:   return %[[R]]
func.func @bias(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  %out = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%out : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A sum of gradient contributions, product second, batched: the other
// term has the product's shape, so the product accumulates into it as it
// is (no copy; bufferization reuses its buffer when nothing else reads it).
// CHECK-LABEL: func.func @sum_batched
//  CHECK-SAME: (%[[A:.*]]: tensor<2x4x8xf32>, %[[B:.*]]: tensor<2x8x16xf32>, %[[X:.*]]: tensor<2x4x16xf32>)
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[R:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[X]] : tensor<2x4x16xf32>)
//       CHECK:   return %[[R]]
func.func @sum_batched(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>, %x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %p = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%fill : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %p : tensor<2x4x16xf32>, tensor<2x4x16xf32>) outs(%empty : tensor<2x4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// Not folded: the product has another use, the product does not start from
// zero, or the body is not a plain add.
// CHECK-LABEL: func.func @not_folded
//       CHECK:   %[[P:.*]] = linalg.matmul {{.*}} outs(%{{.*}} : tensor<4x16xf32>)
//       CHECK:   linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<4x16xf32>, tensor<16xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[Q:.*]] = linalg.matmul {{.*}} outs(%{{.*}} : tensor<4x16xf32>)
//       CHECK:   linalg.generic {{.*}} ins(%[[Q]], %{{.*}} : tensor<4x16xf32>, tensor<16xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[S:.*]] = linalg.matmul {{.*}} outs(%{{.*}} : tensor<4x16xf32>)
//       CHECK:   linalg.generic {{.*}} ins(%[[S]], %{{.*}} : tensor<4x16xf32>, tensor<16xf32>)
//       CHECK:     arith.mulf
func.func @not_folded(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>, %c: tensor<4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %q = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %t = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  %u = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r, %p, %t, %u : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The other term depends on something computed after the product (the
// embedding's gradient, which the tied head's weight gradient is added
// to): folding would move the product to the sum and keep its operands
// alive until then, so the sum stays.
// CHECK-LABEL: func.func @other_after_product
//  CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[X:.*]]: tensor<4x16xf32>)
//       CHECK:   %[[FILL:.*]] = linalg.fill
//       CHECK:   %[[P:.*]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[FILL]] : tensor<4x16xf32>)
//       CHECK:   %[[Y:.*]] = call @opaque(%[[X]])
//       CHECK:   %[[R:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[Y]] : tensor<4x16xf32>, tensor<4x16xf32>)
//       CHECK:   arith.addf
//       CHECK:   return %[[R]]
func.func private @opaque(tensor<4x16xf32>) -> tensor<4x16xf32>
func.func @other_after_product(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = func.call @opaque(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// The other term is made after the product from what was there before it
// (a bias broadcast after its product): it could have come first, so the
// product accumulates into it.
// CHECK-LABEL: func.func @broadcast_after_product
//  CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[BIAS:.*]]: tensor<16xf32>)
//       CHECK:   %[[Y:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<16xf32>)
//       CHECK:   %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[Y]] : tensor<4x16xf32>)
//   CHECK-NOT:   arith.addf
//       CHECK:   return %[[R]]
func.func @broadcast_after_product(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%u: f32, %o: f32):
    linalg.yield %u : f32
  } -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The other term is a scatter-add into zeros of rows computed after the
// product (the tied embedding's gradient, at the end of the backward pass
// that the head's weight gradient begins): the scatter starts from the
// product instead, the product stays where it is, and the sum goes.
// CHECK-LABEL: func.func @scatter_after_product
//  CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[IDS:.*]]: tensor<3xindex>, %[[ROWS:.*]]: tensor<3x16xf32>)
//       CHECK:   %[[P:.*]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}})
//       CHECK:   call @rows
//       CHECK:   %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[P]])
//   CHECK-NOT:   linalg.generic
//       CHECK:   return %[[R]]
func.func private @rows(tensor<3x16xf32>) -> tensor<3x16xf32>
func.func @scatter_after_product(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %ids: tensor<3xindex>, %rows: tensor<3x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  %later = func.call @rows(%rows) : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %fill) -> (tensor<4x16xf32>) {
    %row = tensor.extract %ids[%i] : tensor<3xindex>
    %t = scf.for %j = %c0 to %c16 step %c1 iter_args(%acc2 = %acc) -> (tensor<4x16xf32>) {
      %v = tensor.extract %later[%i, %j] : tensor<3x16xf32>
      %old = tensor.extract %acc2[%row, %j] : tensor<4x16xf32>
      %new = arith.addf %old, %v : f32
      %w = tensor.insert %new into %acc2[%row, %j] : tensor<4x16xf32>
      scf.yield %w : tensor<4x16xf32>
    }
    scf.yield %t : tensor<4x16xf32>
  }
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %s : tensor<4x16xf32>, tensor<4x16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %x = arith.addf %u, %v : f32
    linalg.yield %x : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A loop that does more than add to its tensor (here it overwrites) is
// not a scatter-add: the sum stays.
// CHECK-LABEL: func.func @overwriting_loop_after_product
//       CHECK:   linalg.matmul
//       CHECK:   scf.for
//       CHECK:   linalg.generic
//       CHECK:   arith.addf
func.func private @rows(tensor<3x16xf32>) -> tensor<3x16xf32>
func.func @overwriting_loop_after_product(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %ids: tensor<3xindex>, %rows: tensor<3x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  %later = func.call @rows(%rows) : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %fill) -> (tensor<4x16xf32>) {
    %row = tensor.extract %ids[%i] : tensor<3xindex>
    %v = tensor.extract %later[%i, %c0] : tensor<3x16xf32>
    %w = tensor.insert %v into %acc[%row, %c0] : tensor<4x16xf32>
    scf.yield %w : tensor<4x16xf32>
  }
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %s : tensor<4x16xf32>, tensor<4x16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %x = arith.addf %u, %v : f32
    linalg.yield %x : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
