// RUN: mix-opt %s --mix-matmuls-to-library-calls | FileCheck %s

// Each f32 product on memrefs becomes a call with its site number (the
// plain products of the module first, then the batched ones) and each
// operand's base buffer, offset, sizes and strides; a transposed view
// passes its strides as they are.
// CHECK-LABEL: func.func private @mixrt_batch_matmul_bf16(i64, memref<bf16>,
// CHECK-LABEL: func.func private @mixrt_batch_matmul(i64, memref<f32>, index, index, index, index, index, index, index, memref<f32>,
// CHECK-LABEL: func.func private @mixrt_matmul_bf16(i64, memref<bf16>,
// CHECK-LABEL: func.func private @mixrt_matmul(i64, memref<f32>, index, index, index, index, index, memref<f32>, index, index, index, index, index, memref<f32>, index, index, index, index, index)
// CHECK-LABEL: func.func @products
//  CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<16x8xf32>, %[[C:.*]]: memref<4x16xf32>,
//       CHECK:   %[[BT:.*]] = memref.transpose %[[B]]
//   CHECK-DAG:   %[[SITE0:.*]] = arith.constant 0 : i64
//   CHECK-DAG:   %[[BA:.*]], %[[OA:.*]], %[[SA:.*]]:2, %[[STA:.*]]:2 = memref.extract_strided_metadata %[[A]]
//   CHECK-DAG:   %[[BB:.*]], %[[OB:.*]], %[[SB:.*]]:2, %[[STB:.*]]:2 = memref.extract_strided_metadata %[[BT]]
//   CHECK-DAG:   %[[BC:.*]], %[[OC:.*]], %[[SC:.*]]:2, %[[STC:.*]]:2 = memref.extract_strided_metadata %[[C]]
//       CHECK:   call @mixrt_matmul(%[[SITE0]], %[[BA]], %[[OA]], %[[SA]]#0, %[[SA]]#1, %[[STA]]#0, %[[STA]]#1, %[[BB]], %[[OB]], %[[SB]]#0, %[[SB]]#1, %[[STB]]#0, %[[STB]]#1, %[[BC]],
//   CHECK-NOT:   linalg.matmul
//       CHECK:   %[[SITE2:.*]] = arith.constant 2 : i64
//       CHECK:   call @mixrt_batch_matmul(%[[SITE2]],
//   CHECK-NOT:   linalg.batch_matmul
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x2xf64>, memref<2x2xf64>)
func.func @products(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>,
                    %x: memref<2x4x8xf32>, %y: memref<2x8x16xf32>, %z: memref<2x4x16xf32>,
                    %d: memref<2x2xf64>) {
  %bt = memref.transpose %b (i, j) -> (j, i) : memref<16x8xf32> to memref<8x16xf32, strided<[1, 8]>>
  linalg.matmul ins(%a, %bt : memref<4x8xf32>, memref<8x16xf32, strided<[1, 8]>>) outs(%c : memref<4x16xf32>)
  linalg.batch_matmul ins(%x, %y : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%z : memref<2x4x16xf32>)
  // Not f32: left to the loop lowering.
  linalg.matmul ins(%d, %d : memref<2x2xf64>, memref<2x2xf64>) outs(%d : memref<2x2xf64>)
  return
}

// bf16 operands accumulating into f32 (mix-bf16-matmuls) call the _bf16
// entry points; bf16 into bf16 is left to the loops.
// CHECK-LABEL: func.func @bf16_products
//       CHECK:   %[[S1:.*]] = arith.constant 1 : i64
//       CHECK:   call @mixrt_matmul_bf16(%[[S1]], {{.*}}) : (i64, memref<bf16>, index, index, index, index, index, memref<bf16>, index, index, index, index, index, memref<f32>,
//       CHECK:   %[[S3:.*]] = arith.constant 3 : i64
//       CHECK:   call @mixrt_batch_matmul_bf16(%[[S3]],
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xbf16>, memref<8x4xbf16>) outs(%{{.*}} : memref<4x4xbf16>)
func.func @bf16_products(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xf32>,
                         %x: memref<2x4x8xbf16>, %y: memref<2x8x16xbf16>, %z: memref<2x4x16xf32>,
                         %e: memref<8x4xbf16>, %f: memref<4x4xbf16>) {
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>)
  linalg.batch_matmul ins(%x, %y : memref<2x4x8xbf16>, memref<2x8x16xbf16>) outs(%z : memref<2x4x16xf32>)
  linalg.matmul ins(%a, %e : memref<4x8xbf16>, memref<8x4xbf16>) outs(%f : memref<4x4xbf16>)
  return
}
