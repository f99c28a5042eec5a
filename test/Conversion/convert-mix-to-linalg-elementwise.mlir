// RUN: mix-opt %s --convert-mix-to-linalg | FileCheck %s

// Elementwise mix ops (Elementwise.cpp) become all-parallel linalg.generic
// ops over the result, one scalar op in the body. A size-1 dimension of a
// broadcast operand is read at index 0 (a constant 0 in its map); the
// block arguments follow the operands in order, so lhs op rhs keeps its
// order in the body.

// CHECK-DAG:   #[[ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG:   #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG:   #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>

// CHECK-LABEL: func.func @add
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<1x3xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<1x3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
func.func @add(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %y = mix.add %a, %b : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// The broadcast operand on the left, a column (2, 1): its map drops d1.
// CHECK-LABEL: func.func @sub
// CHECK-SAME:    (%[[A:.*]]: tensor<2x1xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[COL]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<2x1xf32>, tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.subf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]]
func.func @sub(%a: tensor<2x1xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = mix.sub %a, %b : tensor<2x1xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mul
// CHECK:         linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]], #[[ID1]]], iterator_types = ["parallel"]}
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]]
func.func @mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = mix.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @div
// CHECK-SAME:    (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x1xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[ID2]], #[[COL]], #[[ID2]]]
// CHECK-SAME:        ins(%[[A]], %[[B]] :
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.divf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]]
func.func @div(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %y = mix.div %a, %b : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// max propagates NaN (maximumf, as torch.maximum does), not maxnumf.
// CHECK-LABEL: func.func @max
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.maximumf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]]
func.func @max(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = mix.max %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// The unary ops: one generic each, identity maps, the math/arith op.
// CHECK-LABEL: func.func @unary
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>)
// CHECK:         %[[E:.*]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[A]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[V]]
// CHECK:         %[[L:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V:.*]] = math.log %[[X]] : f32
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} ins(%[[L]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V:.*]] = arith.negf %[[X]] : f32
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[N]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V:.*]] = math.rsqrt %[[X]] : f32
// CHECK:         %[[Q:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V:.*]] = math.sqrt %[[X]] : f32
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V:.*]] = math.tanh %[[X]] : f32
// CHECK:         return %[[T]]
func.func @unary(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = mix.exp %a : tensor<4xf32>
  %l = mix.log %e : tensor<4xf32>
  %n = mix.neg %l : tensor<4xf32>
  %r = mix.rsqrt %n : tensor<4xf32>
  %q = mix.sqrt %r : tensor<4xf32>
  %t = mix.tanh %q : tensor<4xf32>
  return %t : tensor<4xf32>
}

// step(u) = u > 0 ? 1 : 0, strictly greater (step(0) = 0, which sends
// max's ties to its right-hand side) and ordered (NaN gives 0).
// CHECK-LABEL: func.func @step
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.cmpf ogt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.select %[[P]], %[[ONE]], %[[ZERO]] : f32
// CHECK-NEXT:      linalg.yield %[[S]]
func.func @step(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = mix.step %a : tensor<4xf32>
  return %y : tensor<4xf32>
}

// stop_gradient is the identity once autodiff is done: no op at all, the
// exp reads the argument.
// CHECK-LABEL: func.func @stop_gradient
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>)
// CHECK-NOT:     stop_gradient
// CHECK:         linalg.generic {{.*}} ins(%[[A]] : tensor<4xf32>)
func.func @stop_gradient(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = mix.stop_gradient %a : tensor<4xf32>
  %e = mix.exp %s : tensor<4xf32>
  return %e : tensor<4xf32>
}

// Must not fire: ops of other dialects are left as they are.
// CHECK-LABEL: func.func @not_mix
// CHECK-SAME:    (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: f32)
// CHECK-NEXT:    arith.constant 0 : index
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[A]], %[[A]] : tensor<4xf32>
// CHECK-NEXT:    %[[T:.*]] = math.exp %[[B]] : f32
// CHECK-NEXT:    %[[I:.*]] = tensor.insert %[[T]] into %[[S]][%{{.*}}] : tensor<4xf32>
// CHECK-NEXT:    return %[[I]]
func.func @not_mix(%a: tensor<4xf32>, %b: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %s = arith.addf %a, %a : tensor<4xf32>
  %t = math.exp %b : f32
  %i = tensor.insert %t into %s[%c0] : tensor<4xf32>
  return %i : tensor<4xf32>
}
