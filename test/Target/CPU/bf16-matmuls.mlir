// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-bf16-matmuls,canonicalize))' | FileCheck %s

// Every f32 product takes its operands rounded to bf16 (one elementwise
// truncf each) and accumulates into its f32 init. A value feeding several
// products is rounded once; an operand made by a transpose or a reshape is
// rounded before it, and the chain is replayed on bf16.
// CHECK-LABEL: func.func @linear
//  CHECK-SAME: (%[[X:[^:]*]]: tensor<8x64xf32>, %[[W:[^:]*]]: tensor<32x64xf32>, %[[G:[^:]*]]: tensor<8x32xf32>)
//   CHECK-DAG:   %[[WB:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<32x64xf32>) outs(%{{.*}} : tensor<32x64xbf16>)
//   CHECK-DAG:   %[[XB:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64xbf16>)
//   CHECK-DAG:   %[[GB:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<8x32xf32>) outs(%{{.*}} : tensor<8x32xbf16>)
//   CHECK-DAG:   %[[WT:.*]] = linalg.transpose ins(%[[WB]] : tensor<32x64xbf16>) {{.*}} permutation = [1, 0]
//   CHECK-DAG:   %[[Y:.*]] = linalg.matmul ins(%[[XB]], %[[WT]] : tensor<8x64xbf16>, tensor<64x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
//   CHECK-DAG:   %[[DX:.*]] = linalg.matmul ins(%[[GB]], %[[WB]] : tensor<8x32xbf16>, tensor<32x64xbf16>) outs(%{{.*}} : tensor<8x64xf32>)
//   CHECK-NOT:   linalg.transpose ins(%[[W]]
//       CHECK:   return %[[Y]], %[[DX]]
func.func @linear(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %g: tensor<8x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%e0 : tensor<64x32xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<8x64xf32>, tensor<64x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %dx = linalg.matmul ins(%g, %w : tensor<8x32xf32>, tensor<32x64xf32>) outs(%f2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y, %dx : tensor<8x32xf32>, tensor<8x64xf32>
}

// A batched product of collapsed operands: rounded before the collapse.
// CHECK-LABEL: func.func @batched
//       CHECK:   %[[AB:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x4x5xbf16>)
//  CHECK-NEXT:   ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
//  CHECK-NEXT:     %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
//  CHECK-NEXT:     linalg.yield %[[T]] : bf16
//       CHECK:   %[[AC:.*]] = tensor.collapse_shape %[[AB]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x4x5xbf16> into tensor<6x4x5xbf16>
//       CHECK:   linalg.batch_matmul ins(%[[AC]], %{{.*}} : tensor<6x4x5xbf16>, tensor<6x5x7xbf16>) outs(%{{.*}} : tensor<6x4x7xf32>)
func.func @batched(%a: tensor<2x3x4x5xf32>, %b: tensor<6x5x7xf32>, %c: tensor<6x4x7xf32>) -> tensor<6x4x7xf32> {
  %ac = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %p = linalg.batch_matmul ins(%ac, %b : tensor<6x4x5xf32>, tensor<6x5x7xf32>) outs(%c : tensor<6x4x7xf32>) -> tensor<6x4x7xf32>
  return %p : tensor<6x4x7xf32>
}

// Products of other types, and other ops, are left alone.
// CHECK-LABEL: func.func @others
//   CHECK-NOT:   bf16
//       CHECK:   return
func.func @others(%a: tensor<4x4xf64>, %b: tensor<4x4xf32>) -> (tensor<4x4xf64>, tensor<4x4xf32>) {
  %p = linalg.matmul ins(%a, %a : tensor<4x4xf64>, tensor<4x4xf64>) outs(%a : tensor<4x4xf64>) -> tensor<4x4xf64>
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%b : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  return %p, %t : tensor<4x4xf64>, tensor<4x4xf32>
}
