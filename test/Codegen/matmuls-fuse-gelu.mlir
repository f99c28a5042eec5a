// RUN: mix-opt %s --mix-matmuls-to-library-calls='overwrite-zeros fuse-bias fuse-gelu' | FileCheck %s
// RUN: mix-opt %s --mix-matmuls-to-library-calls='overwrite-zeros' | FileCheck %s --check-prefix=PLAIN

// Forward: a linear layer U = X W + b (the `_bias` form) followed by the
// GELU of U into H calls `_bias_gelu`, which writes H (as C, H's 2-d view)
// and U (last: cuBLASLt's GELU_AUX_BIAS epilogue's auxiliary output), and
// the GELU's op goes; U stays for its later readers. A write of U between
// the two keeps them apart.
//
// Backward: a product into zeros, dH = dY W, whose only reader is the GELU's
// backward step dU = dH * gelu'(U) (the body autodiff gives, recognized by
// what it computes, either operand order) writes dU itself: the
// `_set_dgelu` call takes dU's 2-d view as C and U's 2-d view last
// (cuBLASLt's DGELU epilogue), and the step and dH (its allocation, fill
// and deallocation) go. A body that is not the GELU's derivative, a
// second reader of dH, a write of U or a use of dU in between keep them
// apart.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row2 = affine_map<(d0, d1) -> (0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @forward
//       CHECK:   %[[U:.*]] = memref.alloc() : memref<16x192xf32>
//       CHECK:   %[[H:.*]] = memref.collapse_shape %arg3 {{\[\[}}0, 1], [2]] : memref<2x8x192xf32> into memref<16x192xf32>
//       CHECK:   %[[D:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[H]]
//       CHECK:   %[[BIAS:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg2
//       CHECK:   %[[X:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[U]]
//       CHECK:   call @mixrt_matmul_bias_gelu({{.*}}, %[[D]], {{.*}}, %[[BIAS]], {{.*}}, %[[X]], {{.*}})
//   CHECK-NOT:   linalg
//       CHECK:   memref.copy %[[U]], %arg4
// PLAIN-LABEL: func.func @forward
//       PLAIN:   linalg.generic
//       PLAIN:   call @mixrt_matmul(
//       PLAIN:   linalg.generic
func.func @forward(%x: memref<16x64xf32>, %w: memref<64x192xf32>, %b: memref<1x192xf32>, %h: memref<2x8x192xf32>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %u = memref.alloc() : memref<16x192xf32>
  linalg.generic {indexing_maps = [#row2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b : memref<1x192xf32>) outs(%u : memref<16x192xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
  }
  linalg.matmul ins(%x, %w : memref<16x64xf32>, memref<64x192xf32>) outs(%u : memref<16x192xf32>)
  %e = memref.expand_shape %u [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : memref<2x8x192xf32>) outs(%h : memref<2x8x192xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = arith.mulf %in, %in : f32
      %2 = arith.mulf %1, %in : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.addf %6, %cst_0 : f32
      %8 = arith.mulf %in, %cst_1 : f32
      %9 = arith.mulf %8, %7 : f32
      linalg.yield %9 : f32
  }
  memref.copy %u, %o : memref<16x192xf32> to memref<16x192xf32>
  memref.dealloc %u : memref<16x192xf32>
  return
}

// CHECK-LABEL: func.func @forward_u_written
//       CHECK:   call @mixrt_matmul_bias(
//       CHECK:   linalg.generic
func.func @forward_u_written(%x: memref<16x64xf32>, %w: memref<64x192xf32>, %b: memref<1x192xf32>, %h: memref<2x8x192xf32>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %u = memref.alloc() : memref<16x192xf32>
  linalg.generic {indexing_maps = [#row2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b : memref<1x192xf32>) outs(%u : memref<16x192xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
  }
  linalg.matmul ins(%x, %w : memref<16x64xf32>, memref<64x192xf32>) outs(%u : memref<16x192xf32>)
  %e = memref.expand_shape %u [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<16x192xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : memref<2x8x192xf32>) outs(%h : memref<2x8x192xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = arith.mulf %in, %in : f32
      %2 = arith.mulf %1, %in : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.addf %6, %cst_0 : f32
      %8 = arith.mulf %in, %cst_1 : f32
      %9 = arith.mulf %8, %7 : f32
      linalg.yield %9 : f32
  }
  memref.copy %u, %o : memref<16x192xf32> to memref<16x192xf32>
  memref.dealloc %u : memref<16x192xf32>
  return
}

// CHECK-LABEL: func.func @fused
//   CHECK-NOT:   memref.alloc
//   CHECK-DAG:   %[[U:.*]] = memref.collapse_shape %arg2 {{\[\[}}0, 1], [2]] : memref<2x8x192xf32> into memref<16x192xf32>
//   CHECK-DAG:   %[[DU:.*]] = memref.collapse_shape %arg3 {{\[\[}}0, 1], [2]] : memref<2x8x192xf32> into memref<16x192xf32>
//       CHECK:   %[[C:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[DU]]
//       CHECK:   %[[X:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[U]]
//       CHECK:   call @mixrt_matmul_set_dgelu({{.*}}, %[[C]], {{.*}}, %[[X]], {{.*}})
//   CHECK-NOT:   linalg
//   CHECK-NOT:   memref.dealloc
//       CHECK:   return
// PLAIN-LABEL: func.func @fused
//       PLAIN:   call @mixrt_matmul_set(
//       PLAIN:   linalg.generic
func.func @fused(%dy: memref<16x64xf32>, %w: memref<64x192xf32>, %u: memref<2x8x192xf32>, %du: memref<2x8x192xf32>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<16x192xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<16x192xf32>)
  linalg.matmul ins(%dy, %w : memref<16x64xf32>, memref<64x192xf32>) outs(%dh : memref<16x192xf32>)
  %e = memref.expand_shape %dh [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %u : memref<2x8x192xf32>, memref<2x8x192xf32>) outs(%du : memref<2x8x192xf32>) {
    ^bb0(%in: f32, %in_121: f32, %out: f32):
      %1 = arith.mulf %in_121, %in_121 : f32
      %2 = arith.mulf %1, %in_121 : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in_121, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.mulf %in_121, %cst_1 : f32
      %8 = arith.addf %6, %cst_0 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %6, %6 : f32
      %11 = arith.subf %cst_0, %10 : f32
      %12 = arith.mulf %in, %7 : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.mulf %13, %cst : f32
      %15 = arith.mulf %9, %cst_1 : f32
      %16 = arith.mulf %14, %cst_2 : f32
      %17 = arith.mulf %16, %1 : f32
      %18 = arith.addf %15, %14 : f32
      %19 = arith.mulf %16, %in_121 : f32
      %20 = arith.mulf %19, %in_121 : f32
      %21 = arith.addf %18, %17 : f32
      %22 = arith.addf %21, %20 : f32
      %23 = arith.addf %22, %20 : f32
      linalg.yield %23 : f32
  }
  memref.dealloc %dh : memref<16x192xf32>
  return
}

// CHECK-LABEL: func.func @swapped
//       CHECK:   call @mixrt_matmul_set_dgelu(
//   CHECK-NOT:   linalg.generic
func.func @swapped(%dy: memref<16x64xf32>, %w: memref<64x192xf32>, %u: memref<2x8x192xf32>, %du: memref<2x8x192xf32>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<16x192xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<16x192xf32>)
  linalg.matmul ins(%dy, %w : memref<16x64xf32>, memref<64x192xf32>) outs(%dh : memref<16x192xf32>)
  %e = memref.expand_shape %dh [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%u, %e : memref<2x8x192xf32>, memref<2x8x192xf32>) outs(%du : memref<2x8x192xf32>) {
    ^bb0(%in_121: f32, %in: f32, %out: f32):
      %1 = arith.mulf %in_121, %in_121 : f32
      %2 = arith.mulf %1, %in_121 : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in_121, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.mulf %in_121, %cst_1 : f32
      %8 = arith.addf %6, %cst_0 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %6, %6 : f32
      %11 = arith.subf %cst_0, %10 : f32
      %12 = arith.mulf %in, %7 : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.mulf %13, %cst : f32
      %15 = arith.mulf %9, %cst_1 : f32
      %16 = arith.mulf %14, %cst_2 : f32
      %17 = arith.mulf %16, %1 : f32
      %18 = arith.addf %15, %14 : f32
      %19 = arith.mulf %16, %in_121 : f32
      %20 = arith.mulf %19, %in_121 : f32
      %21 = arith.addf %18, %17 : f32
      %22 = arith.addf %21, %20 : f32
      %23 = arith.addf %22, %20 : f32
      linalg.yield %23 : f32
  }
  memref.dealloc %dh : memref<16x192xf32>
  return
}

// CHECK-LABEL: func.func @not_gelu
//       CHECK:   call @mixrt_matmul_set(
//       CHECK:   linalg.generic
func.func @not_gelu(%dy: memref<16x64xf32>, %w: memref<64x192xf32>, %u: memref<2x8x192xf32>, %du: memref<2x8x192xf32>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<16x192xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<16x192xf32>)
  linalg.matmul ins(%dy, %w : memref<16x64xf32>, memref<64x192xf32>) outs(%dh : memref<16x192xf32>)
  %e = memref.expand_shape %dh [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %u : memref<2x8x192xf32>, memref<2x8x192xf32>) outs(%du : memref<2x8x192xf32>) {
    ^bb0(%in: f32, %in_121: f32, %out: f32):
      %1 = arith.mulf %in_121, %in_121 : f32
      %2 = arith.mulf %1, %in_121 : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in_121, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.mulf %in_121, %cst_1 : f32
      %8 = arith.addf %6, %cst_0 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %6, %6 : f32
      %11 = arith.subf %cst_0, %10 : f32
      %12 = arith.mulf %in, %7 : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.mulf %13, %cst : f32
      %15 = arith.mulf %9, %cst_1 : f32
      %16 = arith.mulf %14, %cst_2 : f32
      %17 = arith.mulf %16, %1 : f32
      %18 = arith.addf %15, %14 : f32
      %19 = arith.mulf %16, %in_121 : f32
      %20 = arith.mulf %19, %in_121 : f32
      %21 = arith.addf %18, %17 : f32
      %22 = arith.addf %21, %20 : f32
      %23 = arith.addf %22, %20 : f32
      linalg.yield %22 : f32
  }
  memref.dealloc %dh : memref<16x192xf32>
  return
}

// CHECK-LABEL: func.func @dh_read_again
//       CHECK:   call @mixrt_matmul_set(
//       CHECK:   linalg.generic
func.func @dh_read_again(%dy: memref<16x64xf32>, %w: memref<64x192xf32>, %u: memref<2x8x192xf32>, %du: memref<2x8x192xf32>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<16x192xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<16x192xf32>)
  linalg.matmul ins(%dy, %w : memref<16x64xf32>, memref<64x192xf32>) outs(%dh : memref<16x192xf32>)
  %e = memref.expand_shape %dh [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %u : memref<2x8x192xf32>, memref<2x8x192xf32>) outs(%du : memref<2x8x192xf32>) {
    ^bb0(%in: f32, %in_121: f32, %out: f32):
      %1 = arith.mulf %in_121, %in_121 : f32
      %2 = arith.mulf %1, %in_121 : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in_121, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.mulf %in_121, %cst_1 : f32
      %8 = arith.addf %6, %cst_0 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %6, %6 : f32
      %11 = arith.subf %cst_0, %10 : f32
      %12 = arith.mulf %in, %7 : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.mulf %13, %cst : f32
      %15 = arith.mulf %9, %cst_1 : f32
      %16 = arith.mulf %14, %cst_2 : f32
      %17 = arith.mulf %16, %1 : f32
      %18 = arith.addf %15, %14 : f32
      %19 = arith.mulf %16, %in_121 : f32
      %20 = arith.mulf %19, %in_121 : f32
      %21 = arith.addf %18, %17 : f32
      %22 = arith.addf %21, %20 : f32
      %23 = arith.addf %22, %20 : f32
      linalg.yield %23 : f32
  }
  memref.copy %dh, %o : memref<16x192xf32> to memref<16x192xf32>
  memref.dealloc %dh : memref<16x192xf32>
  return
}

// CHECK-LABEL: func.func @u_written
//       CHECK:   call @mixrt_matmul_set(
//       CHECK:   linalg.generic
func.func @u_written(%dy: memref<16x64xf32>, %w: memref<64x192xf32>, %u: memref<2x8x192xf32>, %du: memref<2x8x192xf32>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<16x192xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<16x192xf32>)
  linalg.matmul ins(%dy, %w : memref<16x64xf32>, memref<64x192xf32>) outs(%dh : memref<16x192xf32>)
  %e = memref.expand_shape %dh [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<2x8x192xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %u : memref<2x8x192xf32>, memref<2x8x192xf32>) outs(%du : memref<2x8x192xf32>) {
    ^bb0(%in: f32, %in_121: f32, %out: f32):
      %1 = arith.mulf %in_121, %in_121 : f32
      %2 = arith.mulf %1, %in_121 : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in_121, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.mulf %in_121, %cst_1 : f32
      %8 = arith.addf %6, %cst_0 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %6, %6 : f32
      %11 = arith.subf %cst_0, %10 : f32
      %12 = arith.mulf %in, %7 : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.mulf %13, %cst : f32
      %15 = arith.mulf %9, %cst_1 : f32
      %16 = arith.mulf %14, %cst_2 : f32
      %17 = arith.mulf %16, %1 : f32
      %18 = arith.addf %15, %14 : f32
      %19 = arith.mulf %16, %in_121 : f32
      %20 = arith.mulf %19, %in_121 : f32
      %21 = arith.addf %18, %17 : f32
      %22 = arith.addf %21, %20 : f32
      %23 = arith.addf %22, %20 : f32
      linalg.yield %23 : f32
  }
  memref.dealloc %dh : memref<16x192xf32>
  return
}

// CHECK-LABEL: func.func @du_read
//       CHECK:   call @mixrt_matmul_set(
//       CHECK:   linalg.generic
func.func @du_read(%dy: memref<16x64xf32>, %w: memref<64x192xf32>, %u: memref<2x8x192xf32>, %du: memref<2x8x192xf32>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<16x192xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<16x192xf32>)
  linalg.matmul ins(%dy, %w : memref<16x64xf32>, memref<64x192xf32>) outs(%dh : memref<16x192xf32>)
  %e = memref.expand_shape %dh [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  %c = memref.collapse_shape %du [[0, 1], [2]] : memref<2x8x192xf32> into memref<16x192xf32>
  memref.copy %c, %o : memref<16x192xf32> to memref<16x192xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %u : memref<2x8x192xf32>, memref<2x8x192xf32>) outs(%du : memref<2x8x192xf32>) {
    ^bb0(%in: f32, %in_121: f32, %out: f32):
      %1 = arith.mulf %in_121, %in_121 : f32
      %2 = arith.mulf %1, %in_121 : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in_121, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.mulf %in_121, %cst_1 : f32
      %8 = arith.addf %6, %cst_0 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %6, %6 : f32
      %11 = arith.subf %cst_0, %10 : f32
      %12 = arith.mulf %in, %7 : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.mulf %13, %cst : f32
      %15 = arith.mulf %9, %cst_1 : f32
      %16 = arith.mulf %14, %cst_2 : f32
      %17 = arith.mulf %16, %1 : f32
      %18 = arith.addf %15, %14 : f32
      %19 = arith.mulf %16, %in_121 : f32
      %20 = arith.mulf %19, %in_121 : f32
      %21 = arith.addf %18, %17 : f32
      %22 = arith.addf %21, %20 : f32
      %23 = arith.addf %22, %20 : f32
      linalg.yield %23 : f32
  }
  memref.dealloc %dh : memref<16x192xf32>
  return
}

// --precision bf16 (mix-round-into-producers leaves the GELU writing H
// rounded, and its backward step dU): the product writes H in bf16, and
// cuBLASLt gives the auxiliary matrix and the bias D's type. The bias row
// (a function argument) is rounded at the function's start; U's value
// goes to a bf16 allocation of its own, which its later readers (through
// the same reshapes, before the product) widen, freed after the last; the
// f32 U goes.
// CHECK-LABEL: func.func @forward_rounded
//       CHECK:   %[[B16:.*]] = memref.alloc() : memref<192xbf16>
//       CHECK:   linalg.generic {{.*}} ins(%arg2 : memref<192xf32>) outs(%[[B16]] : memref<192xbf16>)
//       CHECK:     arith.truncf
//   CHECK-NOT:   memref<16x192xf32>
//       CHECK:   %[[H:.*]] = memref.collapse_shape %arg3
//       CHECK:   %[[U16:.*]] = memref.alloc() : memref<16x192xbf16>
//       CHECK:   %[[V:.*]] = memref.expand_shape %[[U16]] {{\[\[}}0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xbf16> into memref<2x8x192xbf16>
//       CHECK:   %[[D:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[H]]
//       CHECK:   %[[BIAS:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[B16]]
//       CHECK:   %[[X:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[U16]]
//       CHECK:   call @mixrt_matmul_bias_gelu_bf16_to_bf16({{.*}}, %[[D]], {{.*}}, %[[BIAS]], {{.*}}, %[[X]], {{.*}}) : (i64, memref<bf16>, {{.*}}, memref<bf16>, {{.*}}, memref<bf16>, {{.*}}, memref<bf16>, {{.*}}, memref<bf16>, index, index, index, index, index) -> ()
//       CHECK:   memref.dealloc %[[B16]]
//       CHECK:   linalg.generic {{.*}} ins(%[[V]] : memref<2x8x192xbf16>) outs(%arg4 : memref<2x8x192xf32>)
//  CHECK-NEXT:   ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
//  CHECK-NEXT:     %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
//  CHECK-NEXT:     arith.addf %[[WIDE]], %[[WIDE]]
//       CHECK:   memref.dealloc %[[U16]]
//   CHECK-NOT:   memref<16x192xf32>
//       CHECK:   return
// PLAIN-LABEL: func.func @forward_rounded
//       PLAIN:   call @mixrt_matmul_bf16(
//       PLAIN:   linalg.generic
func.func @forward_rounded(%x: memref<16x64xbf16>, %w: memref<64x192xbf16>, %b: memref<192xf32>, %h: memref<2x8x192xbf16>, %o: memref<2x8x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %b2 = memref.expand_shape %b [[0, 1]] output_shape [1, 192] : memref<192xf32> into memref<1x192xf32>
  %u = memref.alloc() : memref<16x192xf32>
  linalg.generic {indexing_maps = [#row2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b2 : memref<1x192xf32>) outs(%u : memref<16x192xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
  }
  linalg.matmul ins(%x, %w : memref<16x64xbf16>, memref<64x192xbf16>) outs(%u : memref<16x192xf32>)
  %e = memref.expand_shape %u [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : memref<2x8x192xf32>) outs(%h : memref<2x8x192xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %1 = arith.mulf %in, %in : f32
      %2 = arith.mulf %1, %in : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.addf %6, %cst_0 : f32
      %8 = arith.mulf %in, %cst_1 : f32
      %9 = arith.mulf %8, %7 : f32
      %10 = arith.truncf %9 : f32 to bf16
      linalg.yield %10 : bf16
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : memref<2x8x192xf32>) outs(%o : memref<2x8x192xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = arith.addf %in, %in : f32
      linalg.yield %1 : f32
  }
  memref.dealloc %u : memref<16x192xf32>
  return
}

// A reader of U that is not elementwise (a copy) keeps the GELU apart.
// CHECK-LABEL: func.func @forward_rounded_u_copied
//       CHECK:   call @mixrt_matmul_bias_bf16(
//       CHECK:   linalg.generic
func.func @forward_rounded_u_copied(%x: memref<16x64xbf16>, %w: memref<64x192xbf16>, %b: memref<192xf32>, %h: memref<2x8x192xbf16>, %o: memref<16x192xf32>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %b2 = memref.expand_shape %b [[0, 1]] output_shape [1, 192] : memref<192xf32> into memref<1x192xf32>
  %u = memref.alloc() : memref<16x192xf32>
  linalg.generic {indexing_maps = [#row2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b2 : memref<1x192xf32>) outs(%u : memref<16x192xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
  }
  linalg.matmul ins(%x, %w : memref<16x64xbf16>, memref<64x192xbf16>) outs(%u : memref<16x192xf32>)
  %e = memref.expand_shape %u [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : memref<2x8x192xf32>) outs(%h : memref<2x8x192xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %1 = arith.mulf %in, %in : f32
      %2 = arith.mulf %1, %in : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.addf %6, %cst_0 : f32
      %8 = arith.mulf %in, %cst_1 : f32
      %9 = arith.mulf %8, %7 : f32
      %10 = arith.truncf %9 : f32 to bf16
      linalg.yield %10 : bf16
  }
  memref.copy %u, %o : memref<16x192xf32> to memref<16x192xf32>
  memref.dealloc %u : memref<16x192xf32>
  return
}

// The backward step from a bf16 U into a bf16 dU: the product writes dU
// rounded (DGELU with a bf16 D), U its auxiliary input.
// CHECK-LABEL: func.func @backward_rounded
//   CHECK-DAG:   %[[U:.*]] = memref.collapse_shape %arg2 {{\[\[}}0, 1], [2]] : memref<2x8x192xbf16> into memref<16x192xbf16>
//   CHECK-DAG:   %[[DU:.*]] = memref.collapse_shape %arg3 {{\[\[}}0, 1], [2]] : memref<2x8x192xbf16> into memref<16x192xbf16>
//       CHECK:   %[[C:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[DU]]
//       CHECK:   %[[X:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[U]]
//       CHECK:   call @mixrt_matmul_set_dgelu_bf16_to_bf16({{.*}}, %[[C]], {{.*}}, %[[X]], {{.*}})
//   CHECK-NOT:   linalg
//   CHECK-NOT:   memref.alloc
//       CHECK:   return
func.func @backward_rounded(%dy: memref<16x64xbf16>, %w: memref<64x192xbf16>, %u: memref<2x8x192xbf16>, %du: memref<2x8x192xbf16>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<16x192xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<16x192xf32>)
  linalg.matmul ins(%dy, %w : memref<16x64xbf16>, memref<64x192xbf16>) outs(%dh : memref<16x192xf32>)
  %e = memref.expand_shape %dh [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %u : memref<2x8x192xf32>, memref<2x8x192xbf16>) outs(%du : memref<2x8x192xbf16>) {
    ^bb0(%in: f32, %in_121: bf16, %out: bf16):
      %wu = arith.extf %in_121 : bf16 to f32
      %1 = arith.mulf %wu, %wu : f32
      %2 = arith.mulf %1, %wu : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %wu, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.mulf %wu, %cst_1 : f32
      %8 = arith.addf %6, %cst_0 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %6, %6 : f32
      %11 = arith.subf %cst_0, %10 : f32
      %12 = arith.mulf %in, %7 : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.mulf %13, %cst : f32
      %15 = arith.mulf %9, %cst_1 : f32
      %16 = arith.mulf %14, %cst_2 : f32
      %17 = arith.mulf %16, %1 : f32
      %18 = arith.addf %15, %14 : f32
      %19 = arith.mulf %16, %wu : f32
      %20 = arith.mulf %19, %wu : f32
      %21 = arith.addf %18, %17 : f32
      %22 = arith.addf %21, %20 : f32
      %23 = arith.addf %22, %20 : f32
      %24 = arith.truncf %23 : f32 to bf16
      linalg.yield %24 : bf16
  }
  memref.dealloc %dh : memref<16x192xf32>
  return
}

// An f32 U cannot be the auxiliary input of a product writing bf16.
// CHECK-LABEL: func.func @backward_rounded_f32_u
//       CHECK:   call @mixrt_matmul_set_bf16(
//       CHECK:   linalg.generic
func.func @backward_rounded_f32_u(%dy: memref<16x64xbf16>, %w: memref<64x192xbf16>, %u: memref<2x8x192xf32>, %du: memref<2x8x192xbf16>) {
  %cst = arith.constant 0.797884583 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 5.000000e-01 : f32
  %cst_2 = arith.constant 4.471500e-02 : f32
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<16x192xf32>
  linalg.fill ins(%zero : f32) outs(%dh : memref<16x192xf32>)
  linalg.matmul ins(%dy, %w : memref<16x64xbf16>, memref<64x192xbf16>) outs(%dh : memref<16x192xf32>)
  %e = memref.expand_shape %dh [[0, 1], [2]] output_shape [2, 8, 192] : memref<16x192xf32> into memref<2x8x192xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %u : memref<2x8x192xf32>, memref<2x8x192xf32>) outs(%du : memref<2x8x192xbf16>) {
    ^bb0(%in: f32, %in_121: f32, %out: bf16):
      %1 = arith.mulf %in_121, %in_121 : f32
      %2 = arith.mulf %1, %in_121 : f32
      %3 = arith.mulf %2, %cst_2 : f32
      %4 = arith.addf %in_121, %3 : f32
      %5 = arith.mulf %4, %cst : f32
      %6 = math.tanh %5 : f32
      %7 = arith.mulf %in_121, %cst_1 : f32
      %8 = arith.addf %6, %cst_0 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %6, %6 : f32
      %11 = arith.subf %cst_0, %10 : f32
      %12 = arith.mulf %in, %7 : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.mulf %13, %cst : f32
      %15 = arith.mulf %9, %cst_1 : f32
      %16 = arith.mulf %14, %cst_2 : f32
      %17 = arith.mulf %16, %1 : f32
      %18 = arith.addf %15, %14 : f32
      %19 = arith.mulf %16, %in_121 : f32
      %20 = arith.mulf %19, %in_121 : f32
      %21 = arith.addf %18, %17 : f32
      %22 = arith.addf %21, %20 : f32
      %23 = arith.addf %22, %20 : f32
      %24 = arith.truncf %23 : f32 to bf16
      linalg.yield %24 : bf16
  }
  memref.dealloc %dh : memref<16x192xf32>
  return
}
