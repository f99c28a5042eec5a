// RUN: mix-opt %s --split-input-file --convert-mix-to-linalg | FileCheck %s

// Index-driven and sequential ops (Indexing.cpp). gather, take_along and
// put_along are parallel generics over the result that read the ids at
// the result's leading indices (d0, d1) and pick elements with
// tensor.extract / a compare; the causal mask is computed from
// linalg.index; scatter_add (ids may repeat) and cumsum (a running sum)
// are scf.for loops on tensors.

// gather: result[i, j, k] = table[ids[i, j], k].
// CHECK-DAG:   #[[LEAD:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG:   #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gather
// CHECK-SAME:    (%[[T:.*]]: tensor<10x4xf32>, %[[IDS:.*]]: tensor<2x3xi32>)
// CHECK:         linalg.generic {indexing_maps = [#[[LEAD]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[IDS]] : tensor<2x3xi32>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK-NEXT:    ^bb0(%[[ID:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT:      %[[K:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[T]][%[[ROW]], %[[K]]] : tensor<10x4xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
func.func @gather(%t: tensor<10x4xf32>, %ids: tensor<2x3xi32>) -> tensor<2x3x4xf32> {
  %y = mix.gather %t, %ids : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// take_along: result[i, j, 0] = x[i, j, ids[i, j]] (i64 ids too).
// CHECK-DAG:   #[[LEAD:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @take_along
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x5xf32>, %[[IDS:.*]]: tensor<2x3xi64>)
// CHECK:         linalg.generic {indexing_maps = [#[[LEAD]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[IDS]] : tensor<2x3xi64>) outs(%{{.*}} : tensor<2x3x1xf32>)
// CHECK-NEXT:    ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[C:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[I]], %[[J]], %[[C]]] : tensor<2x3x5xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
func.func @take_along(%x: tensor<2x3x5xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x1xf32> {
  %y = mix.take_along %x, %ids : (tensor<2x3x5xf32>, tensor<2x3xi64>) -> tensor<2x3x1xf32>
  return %y : tensor<2x3x1xf32>
}

// -----

// put_along: result[i, j, k] = k == ids[i, j] ? x[i, j, 0] : 0; x is
// read through its size-1 last dimension.
// CHECK-DAG:   #[[LEAD:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-DAG:   #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @put_along
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x1xf32>, %[[IDS:.*]]: tensor<2x3xi32>)
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         linalg.generic {indexing_maps = [#[[LEAD]], #[[ROW]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[IDS]], %[[X]] : tensor<2x3xi32>, tensor<2x3x1xf32>) outs(%{{.*}} : tensor<2x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[ID:.*]]: i32, %[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[C:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT:      %[[K:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[HIT:.*]] = arith.cmpi eq, %[[K]], %[[C]] : index
// CHECK-NEXT:      %[[V:.*]] = arith.select %[[HIT]], %[[IN]], %[[Z]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32
func.func @put_along(%x: tensor<2x3x1xf32>, %ids: tensor<2x3xi32>) -> tensor<2x3x5xf32> {
  %y = mix.put_along %x, %ids : (tensor<2x3x1xf32>, tensor<2x3xi32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// The causal mask with a prefix of 2, (S, P + S) = (3, 5): query i sees
// key j when j < P + i + 1 (prefix keys, and real keys up to its own
// position), 0 there and -inf elsewhere.
// CHECK-LABEL: func.func @causal_mask
// CHECK-DAG:     %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[P1:.*]] = arith.constant 3 : index
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<3x5xf32>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f32):
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[LIM:.*]] = arith.addi %[[I]], %[[P1]] : index
// CHECK-NEXT:      %[[VIS:.*]] = arith.cmpi slt, %[[J]], %[[LIM]] : index
// CHECK-NEXT:      %[[V:.*]] = arith.select %[[VIS]], %[[ZERO]], %[[NINF]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32
func.func @causal_mask() -> tensor<3x5xf32> {
  %m = mix.causal_mask prefix 2 : tensor<3x5xf32>
  return %m : tensor<3x5xf32>
}

// -----

// At a run-time position: query i is position pos + i, so key j is
// visible when j < P + i + 1 + pos; the keys past it (the cache's unwritten
// positions) are -inf. The position is read inside the loop nest (a
// device's kernel reads it there); with one query, i folds to 0.
// CHECK-LABEL: func.func @causal_mask_at
// CHECK-SAME:    (%[[POS:.*]]: tensor<i32>)
// CHECK-DAG:     %[[P1:.*]] = arith.constant 3 : index
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x10xf32>)
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[P:.*]] = tensor.extract %[[POS]][] : tensor<i32>
// CHECK-NEXT:      %[[AT:.*]] = arith.index_cast %[[P]] : i32 to index
// CHECK-NEXT:      %[[LIM:.*]] = arith.addi %[[AT]], %[[P1]] : index
// CHECK-NEXT:      %[[VIS:.*]] = arith.cmpi slt, %[[J]], %[[LIM]] : index
// CHECK-NEXT:      arith.select %[[VIS]]
func.func @causal_mask_at(%pos: tensor<i32>) -> tensor<1x10xf32> {
  %m = mix.causal_mask prefix 2 at %pos : tensor<1x10xf32>
  return %m : tensor<1x10xf32>
}

// -----

// scatter_add: the ids flattened to the T = 6 tokens and the updates to
// (T, d); for each token t and column j, out[ids[t], j] += updates[t, j],
// into zeros, in order (repeated ids accumulate).
// CHECK-LABEL: func.func @scatter_add
// CHECK-SAME:    (%[[U:.*]]: tensor<2x3x4xf32>, %[[IDS:.*]]: tensor<2x3xi32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[IDF:.*]] = tensor.collapse_shape %[[IDS]] {{\[\[}}0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK-DAG:     %[[UF:.*]] = tensor.expand_shape %{{.*}} into tensor<6x4xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<10x4xf32>)
// CHECK-NEXT:    %[[R:.*]] = scf.for %[[T:.*]] = %[[C0]] to %[[C6]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[Z]]) -> (tensor<10x4xf32>) {
// CHECK-NEXT:      %[[ID:.*]] = tensor.extract %[[IDF]][%[[T]]] : tensor<6xi32>
// CHECK-NEXT:      %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT:      %{{.*}} = scf.for %[[J:.*]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[A:.*]] = %[[ACC]]) -> (tensor<10x4xf32>) {
// CHECK-NEXT:        %[[UV:.*]] = tensor.extract %[[UF]][%[[T]], %[[J]]] : tensor<6x4xf32>
// CHECK-NEXT:        %[[OV:.*]] = tensor.extract %[[A]][%[[ROW]], %[[J]]] : tensor<10x4xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[OV]], %[[UV]] : f32
// CHECK-NEXT:        %[[N:.*]] = tensor.insert %[[S]] into %[[A]][%[[ROW]], %[[J]]] : tensor<10x4xf32>
// CHECK-NEXT:        scf.yield %[[N]] : tensor<10x4xf32>
// CHECK:         return %[[R]]
func.func @scatter_add(%u: tensor<2x3x4xf32>, %ids: tensor<2x3xi32>) -> tensor<10x4xf32> {
  %y = mix.scatter_add %u, %ids : (tensor<2x3x4xf32>, tensor<2x3xi32>) -> tensor<10x4xf32>
  return %y : tensor<10x4xf32>
}

// -----

// cumsum along dim 1 of (2, 3): a loop over the 3 positions carrying the
// result and the running (2, 1) sum; position s's slice is added to the
// running sum, which is written at s.
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x1xf32>)
// CHECK-NEXT:    %[[R:.*]]:2 = scf.for %[[S:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[OUT:.*]] = %{{.*}}, %[[ACCUM:.*]] = %[[Z]]) -> (tensor<2x3xf32>, tensor<2x1xf32>) {
// CHECK-NEXT:      %[[CUR:.*]] = tensor.extract_slice %[[X]][0, %[[S]]] [2, 1] [1, 1] : tensor<2x3xf32> to tensor<2x1xf32>
// CHECK:           %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[ACCUM]], %[[CUR]] : tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK:             arith.addf
// CHECK:           %[[W:.*]] = tensor.insert_slice %[[NEXT]] into %[[OUT]][0, %[[S]]] [2, 1] [1, 1] : tensor<2x1xf32> into tensor<2x3xf32>
// CHECK-NEXT:      scf.yield %[[W]], %[[NEXT]] : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:         return %[[R]]#0
func.func @cumsum(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = mix.cumsum %x dim 1 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// The reverse (suffix) sum along dim 0 of (3, 2) visits positions
// 2, 1, 0: the position is (n - 1) - s, read and written alike.
// CHECK-LABEL: func.func @cumsum_reverse
// CHECK-SAME:    (%[[X:.*]]: tensor<3x2xf32>)
// CHECK-DAG:     %[[LAST:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         scf.for %[[S:.*]] = %{{.*}} to %[[C3]] step %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK-NEXT:      %[[POS:.*]] = arith.subi %[[LAST]], %[[S]] : index
// CHECK-NEXT:      tensor.extract_slice %[[X]][%[[POS]], 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<1x2xf32>
// CHECK:           tensor.insert_slice %{{.*}} into %[[OUT]][%[[POS]], 0] [1, 2] [1, 1]
func.func @cumsum_reverse(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %y = mix.cumsum %x dim 0 reverse : tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
