// RUN: mix-opt %s | mix-opt | FileCheck %s

// The fused ops (MixFusedOps.td) print and parse back, on tensors and on
// buffers.

// CHECK-LABEL: func.func @tensors
// CHECK: %{{.*}}, %{{.*}} = mix.flash_attention %{{.*}} prefix(%{{.*}}, %{{.*}}) heads 2 : (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) -> (tensor<4x8x8xf32>, tensor<4x2x8xf32>)
// CHECK: %{{.*}}, %{{.*}}:2 = mix.flash_attention_grad %{{.*}} prefix(%{{.*}}, %{{.*}}), %{{.*}}, %{{.*}}, %{{.*}} heads 2
func.func @tensors(%qkv: tensor<4x8x24xf32>, %pk: tensor<2x2x3x4xf32>,
                   %pv: tensor<2x2x3x4xf32>, %do: tensor<4x8x8xf32>)
    -> (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) {
  %o, %lse = mix.flash_attention %qkv prefix(%pk, %pv) heads 2 : (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) -> (tensor<4x8x8xf32>, tensor<4x2x8xf32>)
  %g:3 = mix.flash_attention_grad %qkv prefix(%pk, %pv), %o, %lse, %do heads 2 : (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<4x8x8xf32>, tensor<4x2x8xf32>, tensor<4x8x8xf32>) -> (tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>)
  return %g#0, %g#1, %g#2 : tensor<4x8x24xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>
}

// CHECK-LABEL: func.func @buffers
// CHECK: mix.flash_attention_buffers %{{.*}} into %{{.*}}, %{{.*}} heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>
// CHECK: mix.flash_attention_grad_buffers %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>, memref<2x8x8xf32>, memref<2x8x24xf32>
func.func @buffers(%qkv: memref<2x8x24xf32>, %o: memref<2x8x8xf32>,
                   %lse: memref<2x2x8xf32>, %do: memref<2x8x8xf32>,
                   %dqkv: memref<2x8x24xf32>) {
  mix.flash_attention_buffers %qkv into %o, %lse heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>
  mix.flash_attention_grad_buffers %qkv, %o, %lse, %do into %dqkv heads 2 : memref<2x8x24xf32>, memref<2x8x8xf32>, memref<2x2x8xf32>, memref<2x8x8xf32>, memref<2x8x24xf32>
  return
}

// CHECK-LABEL: func.func @cross_entropy
// CHECK: %{{.*}}, %[[LSE:.*]] = mix.fused_cross_entropy %{{.*}}, %{{.*}} : (tensor<2x8x256xf32>, tensor<2x8xi64>) -> (tensor<f32>, tensor<2x8xf32>)
// CHECK: mix.fused_cross_entropy_grad %{{.*}}, %{{.*}}, %[[LSE]], %{{.*}} : (tensor<2x8x256xf32>, tensor<2x8xi64>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x8x256xf32>
// CHECK: mix.fused_cross_entropy_grad %{{.*}}, %{{.*}}, %[[LSE]] scale 5.000000e-01 : (tensor<2x8x256xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<2x8x256xf32>
// CHECK: mix.fused_cross_entropy_buffers %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} : memref<2x8x256xf32>, memref<2x8xi32>, memref<f32>, memref<2x8xf32>
// CHECK: mix.fused_cross_entropy_grad_buffers %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} : memref<2x8x256xf32>, memref<2x8xi32>, memref<2x8xf32>, memref<f32>, memref<2x8x256xf32>
func.func @cross_entropy(%l: tensor<2x8x256xf32>, %t: tensor<2x8xi64>,
                         %d: tensor<f32>, %lb: memref<2x8x256xf32>,
                         %tb: memref<2x8xi32>, %ceb: memref<f32>,
                         %lseb: memref<2x8xf32>, %db: memref<2x8x256xf32>)
    -> tensor<2x8x256xf32> {
  %ce, %lse = mix.fused_cross_entropy %l, %t : (tensor<2x8x256xf32>, tensor<2x8xi64>) -> (tensor<f32>, tensor<2x8xf32>)
  %g = mix.fused_cross_entropy_grad %l, %t, %lse, %d : (tensor<2x8x256xf32>, tensor<2x8xi64>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x8x256xf32>
  %g2 = mix.fused_cross_entropy_grad %l, %t, %lse scale 5.000000e-01 : (tensor<2x8x256xf32>, tensor<2x8xi64>, tensor<2x8xf32>) -> tensor<2x8x256xf32>
  mix.fused_cross_entropy_buffers %lb, %tb into %ceb, %lseb : memref<2x8x256xf32>, memref<2x8xi32>, memref<f32>, memref<2x8xf32>
  mix.fused_cross_entropy_grad_buffers %lb, %tb, %lseb, %ceb into %db : memref<2x8x256xf32>, memref<2x8xi32>, memref<2x8xf32>, memref<f32>, memref<2x8x256xf32>
  return %g : tensor<2x8x256xf32>
}
