// RUN: mix-opt %s --convert-mix-to-linalg | FileCheck %s

// Reductions and broadcasts (Structured.cpp). A reduction is a
// linalg.generic over the *input's* iteration space: the reduced dims are
// `reduction` iterators and read index 0 of the kept-size-1 output; the
// output starts from the identity of the combining op (0 for a sum, -inf
// for a max). A reduction of at most 8 elements an output is unrolled
// instead: a parallel generic over the output that reads the input once
// for each reduced position and folds them in order. A broadcast is the
// same map as a reduction's output, on the input side of a parallel copy.

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[MID:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-DAG:   #[[OUTER:.*]] = affine_map<(d0, d1, d2) -> (0, d1, 0)>
// CHECK-DAG:   #[[AT1:.*]] = affine_map<(d0, d1, d2) -> (d0, 1, d2)>
// CHECK-DAG:   #[[AT2:.*]] = affine_map<(d0, d1, d2) -> (d0, 2, d2)>
// CHECK-DAG:   #[[P01:.*]] = affine_map<(d0, d1, d2) -> (0, d1, 1)>
// CHECK-DAG:   #[[P10:.*]] = affine_map<(d0, d1, d2) -> (1, d1, 0)>
// CHECK-DAG:   #[[P11:.*]] = affine_map<(d0, d1, d2) -> (1, d1, 1)>

// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME:    (%[[X:.*]]: tensor<2x9x4xf32>)
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x1x4xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<2x1x4xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[MID]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:        ins(%[[X]] : tensor<2x9x4xf32>) outs(%[[F]] : tensor<2x1x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[IN]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
func.func @reduce_sum(%x: tensor<2x9x4xf32>) -> tensor<2x1x4xf32> {
  %s = mix.reduce_sum %x dims [1] : tensor<2x9x4xf32> -> tensor<2x1x4xf32>
  return %s : tensor<2x1x4xf32>
}

// Two reduced dimensions, not adjacent; the max starts from -inf.
// CHECK-LABEL: func.func @reduce_max
// CHECK-SAME:    (%[[X:.*]]: tensor<3x3x4xf32>)
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<1x3x1xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[OUTER]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME:        ins(%[[X]] : tensor<3x3x4xf32>) outs(%[[F]] : tensor<1x3x1xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
func.func @reduce_max(%x: tensor<3x3x4xf32>) -> tensor<1x3x1xf32> {
  %s = mix.reduce_max %x dims [0, 2] : tensor<3x3x4xf32> -> tensor<1x3x1xf32>
  return %s : tensor<1x3x1xf32>
}

// Three elements an output: unrolled, the input read at each reduced
// index and the sum folded left to right, over no fill.
// CHECK-LABEL: func.func @reduce_sum_unrolled
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x1x4xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[MID]], #[[AT1]], #[[AT2]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[X]], %[[X]] : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%[[E]] : tensor<2x1x4xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[AB:.*]] = arith.addf %[[A]], %[[B]] fastmath<reassoc> : f32
// CHECK-NEXT:      %[[ABC:.*]] = arith.addf %[[AB]], %[[C]] fastmath<reassoc> : f32
// CHECK-NEXT:      linalg.yield %[[ABC]] : f32
// CHECK:         return %[[R]]
func.func @reduce_sum_unrolled(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %s = mix.reduce_sum %x dims [1] : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  return %s : tensor<2x1x4xf32>
}

// Two reduced dimensions of two elements each: their positions row-major.
// CHECK-LABEL: func.func @reduce_max_unrolled
// CHECK:         linalg.generic {indexing_maps = [#[[OUTER]], #[[P01]], #[[P10]], #[[P11]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %[[D:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[AB:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[ABC:.*]] = arith.maximumf %[[AB]], %[[C]] : f32
// CHECK-NEXT:      %[[ABCD:.*]] = arith.maximumf %[[ABC]], %[[D]] : f32
// CHECK-NEXT:      linalg.yield %[[ABCD]] : f32
func.func @reduce_max_unrolled(%x: tensor<2x3x2xf32>) -> tensor<1x3x1xf32> {
  %s = mix.reduce_max %x dims [0, 2] : tensor<2x3x2xf32> -> tensor<1x3x1xf32>
  return %s : tensor<1x3x1xf32>
}

// A broadcast reads the size-1 dimension at 0 and yields the input.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME:    (%[[X:.*]]: tensor<2x1x4xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[MID]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]] : tensor<2x1x4xf32>) outs(%[[E]] : tensor<2x3x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
func.func @broadcast(%x: tensor<2x1x4xf32>) -> tensor<2x3x4xf32> {
  %s = mix.broadcast %x : tensor<2x1x4xf32> -> tensor<2x3x4xf32>
  return %s : tensor<2x3x4xf32>
}
