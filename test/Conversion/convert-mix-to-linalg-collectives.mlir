// RUN: mix-opt %s --convert-mix-to-linalg | FileCheck %s

// A rank's share is a slice at an offset computed from the rank the support
// code reports; the support code's functions are declared once.

// CHECK-DAG:   func.func private @mix_comm_rank() -> i64
// CHECK-DAG:   func.func private @mix_comm_all_reduce(memref<f32>, index, index)
// CHECK-LABEL: func.func @slice
// CHECK:         %[[R:.*]] = call @mix_comm_rank() : () -> i64
// CHECK:         %[[RI:.*]] = arith.index_cast %[[R]] : i64 to index
// CHECK:         %[[OFF:.*]] = arith.muli %[[RI]], %c2 : index
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, %[[OFF]]] [2, 8, 2] [1, 1, 1] : tensor<2x8x4xf32> to tensor<2x8x2xf32>
func.func @slice(%g: tensor<2x8x4xf32>) -> tensor<2x8x2xf32> {
  %s = mix.rank_slice %g dim 2 shards 2 : tensor<2x8x4xf32> -> tensor<2x8x2xf32>
  return %s : tensor<2x8x2xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK:         %[[R:.*]] = call @mix_comm_rank() : () -> i64
// CHECK:         %[[OFF:.*]] = arith.muli %{{.*}}, %c3 : index
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK:         tensor.insert_slice %{{.*}} into %[[Z]][%[[OFF]], 0] [3, 5] [1, 1] : tensor<3x5xf32> into tensor<12x5xf32>
func.func @pad(%d: tensor<3x5xf32>) -> tensor<12x5xf32> {
  %p = mix.rank_pad %d dim 0 shards 4 : tensor<3x5xf32> -> tensor<12x5xf32>
  return %p : tensor<12x5xf32>
}

// The identity whose gradient is reduced disappears; the sum over the
// ranks stays for the target's bufferization.
// CHECK-LABEL: func.func @reduce
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     grad_all_reduce
// CHECK:         %[[S:.*]] = mix.all_reduce %[[X]] : tensor<4xf32>
// CHECK:         return %[[S]]
func.func @reduce(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mix.grad_all_reduce %x : tensor<4xf32>
  %s = mix.all_reduce %y : tensor<4xf32>
  return %s : tensor<4xf32>
}
