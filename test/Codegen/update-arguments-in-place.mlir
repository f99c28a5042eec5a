// RUN: mix-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(mix-update-arguments-in-place))' | FileCheck %s
// RUN: mix-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(mix-update-arguments-in-place),eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize)' | FileCheck %s --check-prefix=BUF

// AdamW's shape: m' = m + g and p' = p - m' replace m and p. The results
// marked mix.updates become materializations into their arguments and
// leave the results; those arguments are writable, the others read-only.

#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @update
// CHECK-SAME:    (%[[P:.*]]: tensor<8xf32> {bufferization.writable = true},
// CHECK-SAME:     %[[G:.*]]: tensor<8xf32> {bufferization.writable = false},
// CHECK-SAME:     %[[M:.*]]: tensor<8xf32> {bufferization.writable = true})
// CHECK-SAME:    -> (tensor<f32> {mix.kept})
// CHECK:         %[[M2:.*]] = linalg.generic
// CHECK:         %[[P2:.*]] = linalg.generic
// CHECK:         bufferization.materialize_in_destination %[[P2]] in %[[P]]
// CHECK:         bufferization.materialize_in_destination %[[M2]] in %[[M]]
// CHECK:         return %{{.*}} : tensor<f32>

// Bufferized, both are computed in the argument's buffer: no allocation,
// no copy, and p' reads the m' just written over m.
// BUF-LABEL: func.func @update
// BUF-SAME:    (%[[P:.*]]: memref<8xf32>, %[[G:.*]]: memref<8xf32>, %[[M:.*]]: memref<8xf32>)
// BUF-NOT:     memref.alloc() {{.*}} : memref<8xf32>
// BUF:         linalg.generic {{.*}} ins(%[[M]], %[[G]] : {{.*}}) outs(%[[M]] : memref<8xf32>)
// BUF:         linalg.generic {{.*}} ins(%[[P]], %[[M]] : {{.*}}) outs(%[[P]] : memref<8xf32>)
// BUF-NOT:     memref.copy
// BUF:         return
func.func @update(%p: tensor<8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>)
    -> (tensor<8xf32> {mix.updates = 0 : i64}, tensor<f32> {mix.kept},
        tensor<8xf32> {mix.updates = 2 : i64}) {
  %e = tensor.empty() : tensor<8xf32>
  %m2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%m, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %p2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%p, %m2 : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %n = tensor.empty() : tensor<f32>
  return %p2, %n, %m2 : tensor<8xf32>, tensor<f32>, tensor<8xf32>
}

// -----

// An argument's old value read after the new one is made: bufferization
// copies the new value into the argument at the end instead of computing it
// there.
#map = affine_map<(d0) -> (d0)>
// BUF-LABEL: func.func @old_value_read_later
// BUF-SAME:    (%[[X:.*]]: memref<8xf32>
// BUF:         %[[NEW:.*]] = memref.alloc
// BUF:         linalg.generic {{.*}} ins(%[[X]] : {{.*}}) outs(%[[NEW]] : memref<8xf32>)
// BUF:         linalg.generic {{.*}} ins(%[[X]], %[[NEW]] : {{.*}})
// BUF:         memref.copy %[[NEW]], %[[X]]
func.func @old_value_read_later(%x: tensor<8xf32>)
    -> (tensor<8xf32> {mix.updates = 0 : i64}, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %z = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %y, %z : tensor<8xf32>, tensor<8xf32>
}

// -----

// expected-error @below {{result #0: mix.updates must be the index of an argument, got 3 : i64}}
func.func @out_of_range(%x: tensor<8xf32>) -> (tensor<8xf32> {mix.updates = 3 : i64}) {
  return %x : tensor<8xf32>
}

// -----

// expected-error @below {{result #0 updates argument #0, which is not a tensor of the result's type}}
func.func @wrong_type(%x: tensor<4xf32>) -> (tensor<8xf32> {mix.updates = 0 : i64}) {
  %e = tensor.empty() : tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// expected-error @below {{argument #0 is updated by two results}}
func.func @twice(%x: tensor<8xf32>) -> (tensor<8xf32> {mix.updates = 0 : i64}, tensor<8xf32> {mix.updates = 0 : i64}) {
  return %x, %x : tensor<8xf32>, tensor<8xf32>
}

// -----

// Functions without marked results keep their arguments as they are.
// CHECK-LABEL: func.func @untouched
// CHECK-SAME:    (%{{.*}}: tensor<8xf32>) -> tensor<8xf32>
func.func @untouched(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// The multi-tensor AdamW step updates its parameters and moments in place:
// bufferized, it reads and writes the arguments' buffers, with no
// allocation and no copy; the gradients and hyperparameters stay read-only.
// CHECK-LABEL: func.func @multi_tensor_adamw
// CHECK:         %[[U:.*]]:3 = mix.multi_tensor_adamw
// CHECK:         bufferization.materialize_in_destination %[[U]]#0
// BUF-LABEL: func.func @multi_tensor_adamw
// BUF-SAME:    (%[[P:.*]]: memref<8xf32>, %[[G:.*]]: memref<8xf32>, %[[M:.*]]: memref<8xf32>, %[[V:.*]]: memref<8xf32>, %[[H:.*]]: memref<3xf32>, %[[C:.*]]: memref<f32>)
// BUF-NOT:     memref.alloc
// BUF-NOT:     memref.copy
// BUF:         mix.multi_tensor_adamw_buffers params(%[[P]] : memref<8xf32>) grads(%[[G]] : memref<8xf32>) m(%[[M]] : memref<8xf32>) v(%[[V]] : memref<8xf32>) hyper %[[H]] : memref<3xf32> clip %[[C]] : memref<f32>
// BUF-NOT:     memref.copy
// BUF:         return
func.func @multi_tensor_adamw(%p: tensor<8xf32>, %g: tensor<8xf32>,
                              %m: tensor<8xf32>, %v: tensor<8xf32>,
                              %h: tensor<3xf32>, %c: tensor<f32>)
    -> (tensor<8xf32> {mix.updates = 0 : i64},
        tensor<8xf32> {mix.updates = 2 : i64},
        tensor<8xf32> {mix.updates = 3 : i64}) {
  %u:3 = mix.multi_tensor_adamw params(%p) grads(%g) m(%m) v(%v) hyper %h clip %c {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %u#0, %u#1, %u#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A parameter's old value read after the step: one-shot analysis updates a
// copy, and that copy is what lands in the parameter's buffer.
// BUF-LABEL: func.func @adamw_old_value_read
// BUF-SAME:    (%[[P:[a-z0-9_]+]]: memref<8xf32>
// BUF:         %[[NEW:.*]] = memref.alloc
// BUF:         memref.copy %[[P]], %[[NEW]]
// BUF:         mix.multi_tensor_adamw_buffers params(%[[NEW]] : memref<8xf32>)
// BUF:         memref.copy %[[NEW]], %[[P]]
func.func @adamw_old_value_read(%p: tensor<8xf32>, %g: tensor<8xf32>,
                                %m: tensor<8xf32>, %v: tensor<8xf32>,
                                %h: tensor<3xf32>, %c: tensor<f32>)
    -> (tensor<8xf32> {mix.updates = 0 : i64},
        tensor<8xf32> {mix.updates = 2 : i64},
        tensor<8xf32> {mix.updates = 3 : i64},
        tensor<f32> {mix.kept}) {
  %u:3 = mix.multi_tensor_adamw params(%p) grads(%g) m(%m) v(%v) hyper %h clip %c {beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, decay = array<i1: false>, epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  %e = tensor.empty() : tensor<f32>
  %s = linalg.reduce ins(%p : tensor<8xf32>) outs(%e : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %t = arith.addf %a, %acc : f32
      linalg.yield %t : f32
    }
  return %u#0, %u#1, %u#2, %s : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>
}
