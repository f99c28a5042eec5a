// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-fuse-elementwise,canonicalize))' | FileCheck %s --check-prefixes=CHECK,COUNTED
// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-fuse-elementwise{shared-reads-once=true},canonicalize))' | FileCheck %s --check-prefixes=CHECK,SHARED

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// A small producer whose users are all elementwise is recomputed in each
// (the tanh appears twice, and no op computes it alone): never stored.
// CHECK-LABEL: func.func @recomputed
//       CHECK:   %[[A:.*]] = linalg.generic
//       CHECK:     math.tanh
//       CHECK:     arith.mulf
//       CHECK:   %[[B:.*]] = linalg.generic
//       CHECK:     math.tanh
//       CHECK:     arith.addf
//   CHECK-NOT:   linalg.generic
//       CHECK:   return %[[A]], %[[B]]
func.func @recomputed(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// One user is a reduction that reads each element once: the producer is
// recomputed in it and in the elementwise user, and stored nowhere (a
// norm's squares are summed as they are made).
// CHECK-LABEL: func.func @into_reduction
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 :
//       CHECK:     math.tanh
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x8xf32>)
//       CHECK:     math.tanh
//       CHECK:     arith.addf
//   CHECK-NOT:   linalg.generic
func.func @into_reduction(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %a, %s : tensor<4x8xf32>, tensor<4xf32>
}

// A reduction that reads each element several times (here once for every
// j) is not fused into: the producer is stored, and so it is not
// recomputed in the elementwise user either.
#ik = affine_map<(i, j, k) -> (i, k)>
#ij = affine_map<(i, j, k) -> (i, j)>
// CHECK-LABEL: func.func @stored
//       CHECK:   %[[T:.*]] = linalg.generic
//       CHECK:     math.tanh
//       CHECK:   linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
//   CHECK-NOT:     math.tanh
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[T]] : tensor<4x8xf32>)
func.func @stored(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x3xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = linalg.generic {indexing_maps = [#ik, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t : tensor<4x8xf32>) outs(%z : tensor<4x3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  return %a, %s : tensor<4x8xf32>, tensor<4x3xf32>
}

// A single-use producer fuses into its elementwise consumer, whatever its
// size.
// CHECK-LABEL: func.func @single_use
//       CHECK:   linalg.generic
//       CHECK:     math.exp
//       CHECK:     arith.mulf
//   CHECK-NOT:   linalg.generic
func.func @single_use(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// A producer is recomputed in a user only if the user then reads at most
// 2 whole operands: here each user would read 5 (x1, x2, x3, y1, y2), so
// the sum is stored once and read by both (the residual stream's users).
// CHECK-LABEL: func.func @bounded
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 :
//       CHECK:   linalg.generic {{.*}} ins(%[[S]], %arg3, %arg4 :
//       CHECK:     arith.mulf
//       CHECK:   linalg.generic {{.*}} ins(%[[S]], %arg3, %arg4 :
//       CHECK:     arith.subf
func.func @bounded(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>, %x3: tensor<4x8xf32>, %y1: tensor<4x8xf32>, %y2: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x1, %x2, %x3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %r0 = arith.addf %a, %b : f32
    %r = arith.addf %r0, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %y1, %y2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %r0 = arith.mulf %a, %b : f32
    %r = arith.mulf %r0, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %v = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %y1, %y2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %r0 = arith.subf %a, %b : f32
    %r = arith.subf %r0, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %u, %v : tensor<4x8xf32>, tensor<4x8xf32>
}

// A softmax's gradient over rows of 4: g = p * dp, then
// dl = (dp - sum_j g[i, j]) * p reads g at each of the row's positions.
// Counting operands, recomputing g there would make the consumer read 3
// whole operands (dp, p, and p and dp again): g is stored. With
// shared-reads-once the values both read count once (2): one op, g
// recomputed at each position.
// CHECK-LABEL:   func.func @softmax_grad
//    COUNTED:      %[[G:.*]] = linalg.generic
//    COUNTED:      linalg.generic {{.*}} ins(%arg1, %arg0, %[[G]], %[[G]], %[[G]], %[[G]] :
//     SHARED:      linalg.generic
// SHARED-NOT:      linalg.generic
//      CHECK:      return
func.func @softmax_grad(%p: tensor<2x4xf32>, %dp: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %dp : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %dl = linalg.generic {indexing_maps = [#id, #id, affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, 1)>, affine_map<(i, j) -> (i, 2)>, affine_map<(i, j) -> (i, 3)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dp, %p, %g, %g, %g, %g : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%d: f32, %q: f32, %g0: f32, %g1: f32, %g2: f32, %g3: f32, %out: f32):
    %s0 = arith.addf %g0, %g1 : f32
    %s1 = arith.addf %s0, %g2 : f32
    %s2 = arith.addf %s1, %g3 : f32
    %t = arith.subf %d, %s2 : f32
    %r = arith.mulf %t, %q : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %dl : tensor<2x4xf32>
}
