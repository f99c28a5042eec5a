// RUN: mix-opt %s --mix-attention-calls | FileCheck %s

// The fused attention ops on buffers become calls of the support code's
// kernels: each buffer as (base, offset), then batch, sequence, heads, head
// width, prefix streams and prefix length. Without prefixes, qkv's buffer
// takes the prefixes' places (and dqkv's their gradients') with 0 streams
// of 0 keys.

// CHECK-LABEL: func.func private @mixrt_flash_attention_grad(memref<f32>, index, memref<f32>, index, memref<f32>, index, memref<f32>, index, memref<f32>, index, memref<f32>, index, memref<f32>, index, memref<f32>, index, memref<f32>, index, index, index, index, index, index, index)
// CHECK-LABEL: func.func private @mixrt_flash_attention(memref<f32>, index, memref<f32>, index, memref<f32>, index, memref<f32>, index, memref<f32>, index, index, index, index, index, index, index)

// CHECK-LABEL: func.func @fwd_plain
//  CHECK-SAME: (%[[QKV:[^:]*]]: memref<2x70x456xf32>, %[[OUT:[^:]*]]: memref<2x70x152xf32>, %[[LSE:[^:]*]]: memref<2x2x70xf32>)
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C70:.*]] = arith.constant 70 : index
//   CHECK-DAG:   %[[C76:.*]] = arith.constant 76 : index
//   CHECK-DAG:   %[[Q:.*]], %[[QO:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[QKV]]
//   CHECK-DAG:   %[[O:.*]], %[[OO:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[OUT]]
//   CHECK-DAG:   %[[L:.*]], %[[LO:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[LSE]]
//       CHECK:   call @mixrt_flash_attention(%[[Q]], %[[QO]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[O]], %[[OO]], %[[L]], %[[LO]], %[[C2]], %[[C70]], %[[C2]], %[[C76]], %[[C0]], %[[C0]])
//   CHECK-NOT:   mix.
func.func @fwd_plain(%qkv: memref<2x70x456xf32>, %out: memref<2x70x152xf32>,
                     %lse: memref<2x2x70xf32>) {
  mix.flash_attention_buffers %qkv into %out, %lse heads 2
      : memref<2x70x456xf32>, memref<2x70x152xf32>, memref<2x2x70xf32>
  return
}

// With prefixes: their buffers, and P = 2 streams of 70 keys.
// CHECK-LABEL: func.func @grad_prefix
//  CHECK-SAME: %[[PK:[^:]*]]: memref<2x2x70x16xf32>, %[[PV:[^:]*]]: memref<2x2x70x16xf32>
//  CHECK-SAME: %[[DPK:[^:]*]]: memref<2x2x70x16xf32>, %[[DPV:[^:]*]]: memref<2x2x70x16xf32>
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
//   CHECK-DAG:   %[[C40:.*]] = arith.constant 40 : index
//   CHECK-DAG:   %[[C70:.*]] = arith.constant 70 : index
//   CHECK-DAG:   %[[K:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[PK]]
//   CHECK-DAG:   %[[V:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[PV]]
//   CHECK-DAG:   %[[DK:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[DPK]]
//   CHECK-DAG:   %[[DV:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[DPV]]
//       CHECK:   call @mixrt_flash_attention_grad(%{{[^,]*}}, %{{[^,]*}}, %[[K]], %{{[^,]*}}, %[[V]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[DK]], %{{[^,]*}}, %[[DV]], %{{[^,]*}}, %[[C4]], %[[C40]], %[[C2]], %[[C16]], %[[C2]], %[[C70]])
func.func @grad_prefix(%qkv: memref<4x40x96xf32>, %pk: memref<2x2x70x16xf32>,
                       %pv: memref<2x2x70x16xf32>, %out: memref<4x40x32xf32>,
                       %lse: memref<4x2x40xf32>, %dout: memref<4x40x32xf32>,
                       %dqkv: memref<4x40x96xf32>,
                       %dpk: memref<2x2x70x16xf32>,
                       %dpv: memref<2x2x70x16xf32>) {
  mix.flash_attention_grad_buffers %qkv prefix(%pk, %pv), %out, %lse, %dout
      into %dqkv prefix(%dpk, %dpv) heads 2
      : memref<4x40x96xf32>, memref<2x2x70x16xf32>, memref<2x2x70x16xf32>,
        memref<4x40x32xf32>, memref<4x2x40xf32>, memref<4x40x32xf32>,
        memref<4x40x96xf32>, memref<2x2x70x16xf32>, memref<2x2x70x16xf32>
  return
}

// A view that is not contiguous (every other batch row) is copied into a
// buffer that is, before the call for what the kernel reads and after it
// for what it writes; a contiguous view passes its offset.
// CHECK-LABEL: func.func @strided
//       CHECK:   %[[QV:.*]] = memref.subview %{{.*}}[0, 0, 0] [2, 8, 24] [2, 1, 1]
//       CHECK:   %[[OV:.*]] = memref.subview %{{.*}}[1, 0, 0] [2, 8, 8] [1, 1, 1]
//       CHECK:   %[[QC:.*]] = memref.alloc() : memref<2x8x24xf32>
//       CHECK:   memref.copy %[[QV]], %[[QC]]
//       CHECK:   %[[QB:.*]], %[[QO:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[QC]]
//       CHECK:   %[[OB:.*]], %[[OO:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[OV]]
//       CHECK:   call @mixrt_flash_attention(%[[QB]], %[[QO]], {{.*}}, %[[OB]], %[[OO]],
//       CHECK:   memref.dealloc %[[QC]]
func.func @strided(%all: memref<4x8x24xf32>, %outs: memref<3x8x8xf32>,
                   %lse: memref<2x2x8xf32>) {
  %qkv = memref.subview %all[0, 0, 0] [2, 8, 24] [2, 1, 1]
      : memref<4x8x24xf32> to memref<2x8x24xf32, strided<[384, 24, 1]>>
  %out = memref.subview %outs[1, 0, 0] [2, 8, 8] [1, 1, 1]
      : memref<3x8x8xf32> to memref<2x8x8xf32, strided<[64, 8, 1], offset: 64>>
  mix.flash_attention_buffers %qkv into %out, %lse heads 2
      : memref<2x8x24xf32, strided<[384, 24, 1]>>,
        memref<2x8x8xf32, strided<[64, 8, 1], offset: 64>>,
        memref<2x2x8xf32>
  return
}
