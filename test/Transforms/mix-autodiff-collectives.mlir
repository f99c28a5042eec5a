// RUN: mix-opt %s --mix-autodiff | FileCheck %s

// The stream-parallel collectives differentiate Megatron-style: the adjoint
// of mix.all_reduce passes through, that of mix.grad_all_reduce is summed
// over the ranks, and that of mix.rank_slice is padded back at this rank's
// share. The order matters: the gate's adjoint is padded first, then summed,
// so each rank contributes its own streams' part.

// CHECK-LABEL: func.func @grad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4xf32>, %[[K:.*]]: tensor<2x4xf32>)
// The forward computation comes first, unchanged.
// CHECK:         %[[G:.*]] = mix.grad_all_reduce %[[X]] : tensor<2x4xf32>
// CHECK:         %[[S:.*]] = mix.rank_slice %[[G]] dim 1 shards 2 : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK:         %[[P:.*]] = mix.mul %[[S]], %{{.*}}
// CHECK:         %[[U:.*]] = mix.all_reduce %[[P]] : tensor<2x2xf32>
// The backward pass: no reduction for the all_reduce's input...
// CHECK-NOT:     mix.all_reduce
// CHECK:         %[[DS:.*]] = mix.mul
// CHECK:         %[[PAD:.*]] = mix.rank_pad %[[DS]] dim 1 shards 2 : tensor<2x2xf32> -> tensor<2x4xf32>
// ...and one for the input of grad_all_reduce, after the pad.
// CHECK:         %[[DX:.*]] = mix.all_reduce %[[PAD]] : tensor<2x4xf32>
// CHECK:         return %{{.*}}, %[[DX]], %{{.*}} : tensor<f32>, tensor<2x4xf32>, tensor<2x4xf32>
func.func @forward(%x: tensor<2x4xf32>, %k: tensor<2x4xf32>) -> tensor<f32> {
  %g = mix.grad_all_reduce %x : tensor<2x4xf32>
  %s = mix.rank_slice %g dim 1 shards 2 : tensor<2x4xf32> -> tensor<2x2xf32>
  %ks = mix.rank_slice %k dim 1 shards 2 : tensor<2x4xf32> -> tensor<2x2xf32>
  %p = mix.mul %s, %ks : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %u = mix.all_reduce %p : tensor<2x2xf32>
  %l = mix.reduce_sum %u dims [0, 1] : tensor<2x2xf32> -> tensor<1x1xf32>
  %r = mix.reshape %l : tensor<1x1xf32> -> tensor<f32>
  return %r : tensor<f32>
}
