// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-record-entry-outputs))' | FileCheck %s

// mix-record-entry-outputs: before bufferization turns results into
// out-parameters (appended after the inputs), each defined function that
// returns results records how many, so that passes on buffers can tell its
// last arguments are outputs.

// CHECK-LABEL: func.func @grad
// CHECK-SAME:    attributes {mix.entry_outputs = 2 : i64}
func.func @grad(%w: tensor<2x3xf32>, %x: tensor<2xi32>) -> (tensor<f32>, tensor<2x3xf32>) {
  %zero = arith.constant dense<0.0> : tensor<f32>
  return %zero, %w : tensor<f32>, tensor<2x3xf32>
}

// A function without results, and a declaration, are left unmarked.
// CHECK-LABEL: func.func @nothing()
// CHECK-NOT:     mix.entry_outputs
// CHECK:         return
func.func @nothing() {
  return
}

// CHECK:       func.func private @helper(tensor<4xf32>) -> tensor<4xf32>{{$}}
func.func private @helper(tensor<4xf32>) -> tensor<4xf32>
