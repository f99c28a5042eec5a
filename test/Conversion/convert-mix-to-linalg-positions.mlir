// RUN: mix-opt %s --convert-mix-to-linalg | FileCheck %s
// RUN: mix-opt %s --convert-mix-to-linalg="positions-on-device=true" | FileCheck %s --check-prefix=DEVICE

// The ops at a run-time position (Positions.cpp), a 0-d i32. On the host
// (the default) the position is read once and becomes the offset of a view
// or of an insertion; with positions-on-device it is read only inside the
// loop nests, which become a device's kernels.

// A row of a table at the position.
// CHECK-LABEL: func.func @dynamic_slice
// CHECK-SAME:    (%[[X:.*]]: tensor<8x4xf32>, %[[POS:.*]]: tensor<i32>)
// CHECK-NEXT:    %[[P:.*]] = tensor.extract %[[POS]][] : tensor<i32>
// CHECK-NEXT:    %[[I:.*]] = arith.index_cast %[[P]] : i32 to index
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:    return %[[S]]
// On a device: gathered, result[i, j] = x[pos + i, j].
// DEVICE-LABEL: func.func @dynamic_slice
// DEVICE-SAME:    (%[[X:.*]]: tensor<8x4xf32>, %[[POS:.*]]: tensor<i32>)
// DEVICE:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf32>)
// DEVICE-NEXT:    ^bb0(%{{.*}}: f32):
// DEVICE-NEXT:      %[[I:.*]] = linalg.index 0 : index
// DEVICE-NEXT:      %[[J:.*]] = linalg.index 1 : index
// DEVICE-NEXT:      %[[P:.*]] = tensor.extract %[[POS]][] : tensor<i32>
// DEVICE-NEXT:      %[[PI:.*]] = arith.index_cast %[[P]] : i32 to index
// DEVICE-NEXT:      %[[ROW:.*]] = arith.addi %[[I]], %[[PI]] : index
// DEVICE-NEXT:      %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[J]]] : tensor<8x4xf32>
// DEVICE-NEXT:      linalg.yield %[[V]] : f32
func.func @dynamic_slice(%x: tensor<8x4xf32>, %pos: tensor<i32>) -> tensor<2x4xf32> {
  %y = mix.dynamic_slice %x[%pos] dim 0 : (tensor<8x4xf32>, tensor<i32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// The new keys written into a cache at the position: an insertion into the
// cache itself (in place once bufferized, where the cache may be written).
// CHECK-LABEL: func.func @dynamic_update_slice
// CHECK-SAME:    (%[[X:.*]]: tensor<2x2x8x4xf32>, %[[U:.*]]: tensor<2x2x1x4xf32>, %[[POS:.*]]: tensor<i32>)
// CHECK-NEXT:    %[[P:.*]] = tensor.extract %[[POS]][] : tensor<i32>
// CHECK-NEXT:    %[[I:.*]] = arith.index_cast %[[P]] : i32 to index
// CHECK-NEXT:    %[[R:.*]] = tensor.insert_slice %[[U]] into %[[X]][0, 0, %[[I]], 0] [2, 2, 1, 4] [1, 1, 1, 1] : tensor<2x2x1x4xf32> into tensor<2x2x8x4xf32>
// CHECK-NEXT:    return %[[R]]
// On a device: a select over the whole cache, written over it; element
// (b, h, s, c) takes the update's (b, h, s - pos, c) where 0 <= s - pos < 1
// (reading the update at 0 elsewhere, in range) and keeps its own value
// otherwise.
// DEVICE-LABEL: func.func @dynamic_update_slice
// DEVICE-SAME:    (%[[X:.*]]: tensor<2x2x8x4xf32>, %[[U:.*]]: tensor<2x2x1x4xf32>, %[[POS:.*]]: tensor<i32>)
// DEVICE-DAG:     %[[C0:.*]] = arith.constant 0 : index
// DEVICE-DAG:     %[[C1:.*]] = arith.constant 1 : index
// DEVICE:         %[[R:.*]] = linalg.generic {{.*}} outs(%[[X]] : tensor<2x2x8x4xf32>)
// DEVICE-NEXT:    ^bb0(%[[OLD:.*]]: f32):
// DEVICE-NEXT:      %[[B:.*]] = linalg.index 0 : index
// DEVICE-NEXT:      %[[H:.*]] = linalg.index 1 : index
// DEVICE-NEXT:      %[[S:.*]] = linalg.index 2 : index
// DEVICE-NEXT:      %[[C:.*]] = linalg.index 3 : index
// DEVICE-NEXT:      %[[P:.*]] = tensor.extract %[[POS]][] : tensor<i32>
// DEVICE-NEXT:      %[[PI:.*]] = arith.index_cast %[[P]] : i32 to index
// DEVICE-NEXT:      %[[REL:.*]] = arith.subi %[[S]], %[[PI]] : index
// DEVICE-NEXT:      %[[GE:.*]] = arith.cmpi sge, %[[REL]], %[[C0]] : index
// DEVICE-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[REL]], %[[C1]] : index
// DEVICE-NEXT:      %[[HIT:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// DEVICE-NEXT:      %[[AT:.*]] = arith.select %[[HIT]], %[[REL]], %[[C0]] : index
// DEVICE-NEXT:      %[[NEW:.*]] = tensor.extract %[[U]][%[[B]], %[[H]], %[[AT]], %[[C]]] : tensor<2x2x1x4xf32>
// DEVICE-NEXT:      %[[V:.*]] = arith.select %[[HIT]], %[[NEW]], %[[OLD]] : f32
// DEVICE-NEXT:      linalg.yield %[[V]] : f32
// DEVICE:         return %[[R]]
func.func @dynamic_update_slice(%x: tensor<2x2x8x4xf32>, %u: tensor<2x2x1x4xf32>, %pos: tensor<i32>) -> tensor<2x2x8x4xf32> {
  %y = mix.dynamic_update_slice %x, %u[%pos] dim 2 : (tensor<2x2x8x4xf32>, tensor<2x2x1x4xf32>, tensor<i32>) -> tensor<2x2x8x4xf32>
  return %y : tensor<2x2x8x4xf32>
}
