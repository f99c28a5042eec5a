// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-drop-parameter-attrs))' | FileCheck %s

// mix-drop-parameter-attrs: the parameters' names (mix.param) and shard
// counts (mix.stream_shards) leave the arguments (the manifest keeps them);
// any other argument attribute stays. It runs on each function by itself.

// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<2xi32> {mix.kept = 1 : i64})
// CHECK-NOT:     mix.param
// CHECK-NOT:     mix.stream_shards
func.func @forward(%w: tensor<4xf32> {mix.param = "h.0.ln.w"},
                   %k: tensor<2x4xf32> {mix.param = "h.0.k", mix.stream_shards = 2 : i64},
                   %tokens: tensor<2xi32> {mix.kept = 1 : i64}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// A declaration is a function too.
// CHECK-LABEL: func.func private @declared
// CHECK-SAME:    (tensor<4xf32>)
func.func private @declared(tensor<4xf32> {mix.param = "w"})
