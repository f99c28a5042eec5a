// RUN: mix-opt %s -split-input-file -canonicalize | FileCheck %s

// A softmax gate over one stream is exactly one.

// CHECK-LABEL: func @gate_one_stream
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<2x8x1xf32>
// CHECK-NOT: mix.gate
// CHECK: return %[[ONE]]
func.func @gate_one_stream(%x: tensor<2x8x16xf32>, %w: tensor<1x16xf32>, %b: tensor<1xf32>) -> tensor<2x8x1xf32> {
  %g = mix.gate simple softmax %x, %w, %b : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<1xf32>) -> tensor<2x8x1xf32>
  return %g : tensor<2x8x1xf32>
}

// -----

// A sigmoid gate over one stream is not.

// CHECK-LABEL: func @sigmoid_gate_one_stream
// CHECK: mix.gate simple sigmoid
func.func @sigmoid_gate_one_stream(%x: tensor<2x8x16xf32>, %w: tensor<1x16xf32>, %b: tensor<1xf32>) -> tensor<2x8x1xf32> {
  %g = mix.gate simple sigmoid %x, %w, %b : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<1xf32>) -> tensor<2x8x1xf32>
  return %g : tensor<2x8x1xf32>
}

// -----

// CHECK-LABEL: func @gate_two_streams
// CHECK: mix.gate simple softmax
func.func @gate_two_streams(%x: tensor<2x8x16xf32>, %w: tensor<2x16xf32>, %b: tensor<2xf32>) -> tensor<2x8x2xf32> {
  %g = mix.gate simple softmax %x, %w, %b : (tensor<2x8x16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x8x2xf32>
  return %g : tensor<2x8x2xf32>
}

// -----

// One stream with a normalised gate: a dynamic convolution is a linear layer.

// CHECK-LABEL: func @conv_one_stream
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %{{.*}}: tensor<1x16xf32>, %{{.*}}: tensor<1xf32>, %[[K:.*]]: tensor<1x32x16xf32>, %[[B:.*]]: tensor<1x32xf32>)
// CHECK-DAG: %[[K0:.*]] = tensor.collapse_shape %[[K]] {{\[}}[0, 1], [2]] : tensor<1x32x16xf32> into tensor<32x16xf32>
// CHECK-DAG: %[[B0:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1]] : tensor<1x32xf32> into tensor<32xf32>
// CHECK: %[[Y:.*]] = mix.linear %[[X]], %[[K0]], %[[B0]]
// CHECK-NOT: mix.dynamic_conv
// CHECK: return %[[Y]]
func.func @conv_one_stream(%x: tensor<2x8x16xf32>, %w: tensor<1x16xf32>, %wb: tensor<1xf32>, %k: tensor<1x32x16xf32>, %b: tensor<1x32xf32>) -> tensor<2x8x32xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<1xf32>) -> tensor<2x8x1xf32>
  %u = mix.dynamic_conv %x, %g kernels %k bias %b : (tensor<2x8x16xf32>, tensor<2x8x1xf32>, tensor<1x32x16xf32>, tensor<1x32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// The same for a stacked mixture with a shared bias.

// CHECK-LABEL: func @mixture_one_stream
// CHECK-SAME: %[[C:[^:]*]]: tensor<32xf32>)
// CHECK: mix.linear %{{.*}}, %{{.*}}, %[[C]]
// CHECK-NOT: mix.mixture
func.func @mixture_one_stream(%x: tensor<2x8x16xf32>, %w: tensor<1x16xf32>, %wb: tensor<1xf32>, %k: tensor<1x32x16xf32>, %c: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<1xf32>) -> tensor<2x8x1xf32>
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<2x8x16xf32>, tensor<2x8x1xf32>, tensor<1x32x16xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// One stream with a sigmoid gate scales the output: no fold.

// CHECK-LABEL: func @conv_one_stream_sigmoid
// CHECK: mix.dynamic_conv
func.func @conv_one_stream_sigmoid(%x: tensor<2x8x16xf32>, %w: tensor<1x16xf32>, %wb: tensor<1xf32>, %k: tensor<1x32x16xf32>) -> tensor<2x8x32xf32> {
  %g = mix.gate simple sigmoid %x, %w, %wb : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<1xf32>) -> tensor<2x8x1xf32>
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x8x16xf32>, tensor<2x8x1xf32>, tensor<1x32x16xf32>) -> tensor<2x8x32xf32>
  return %u : tensor<2x8x32xf32>
}

// -----

// Routing weights from a function argument are not known to be one.

// CHECK-LABEL: func @conv_one_stream_unknown_gate
// CHECK: mix.dynamic_conv
func.func @conv_one_stream_unknown_gate(%x: tensor<2x16xf32>, %g: tensor<2x1xf32>, %k: tensor<1x32x16xf32>) -> tensor<2x32xf32> {
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<2x16xf32>, tensor<2x1xf32>, tensor<1x32x16xf32>) -> tensor<2x32xf32>
  return %u : tensor<2x32xf32>
}

// -----

// CHECK-LABEL: func @replicate_one_stream
// CHECK-NEXT: return %arg0
func.func @replicate_one_stream(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %r = mix.replicate_streams %x streams 1 : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

// The sum of zero-pads of adjacent ranges (the adjoint of slicing q, k and v
// out of one projection) is their concatenation: no zero-filled full-size
// tensor a part.

// CHECK-LABEL: func @adjacent_pads
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x3x4xf32>, %[[K:.*]]: tensor<2x3x4xf32>, %[[V:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT:   mix.pad
// CHECK:       %[[KV:.*]] = mix.concat %[[K]], %[[V]] dim 2 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
// CHECK:       %[[QKV:.*]] = mix.concat %[[Q]], %[[KV]] dim 2 : (tensor<2x3x4xf32>, tensor<2x3x8xf32>) -> tensor<2x3x12xf32>
// CHECK-NOT:   mix.add
// CHECK:       return %[[QKV]]
func.func @adjacent_pads(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x4xf32>) -> tensor<2x3x12xf32> {
  %pv = mix.pad %v dim 2 offset 8 : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %pk = mix.pad %k dim 2 offset 4 : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %s = mix.add %pv, %pk : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  %pq = mix.pad %q dim 2 offset 0 : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %r = mix.add %s, %pq : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  return %r : tensor<2x3x12xf32>
}

// -----

// Two adjacent parts that do not fill the dimension: a pad of their
// concatenation.

// CHECK-LABEL: func @partial_pads
// CHECK:       %[[C:.*]] = mix.concat %arg0, %arg1 dim 1 : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
// CHECK:       %[[P:.*]] = mix.pad %[[C]] dim 1 offset 1 : tensor<2x5xf32> -> tensor<2x8xf32>
// CHECK:       return %[[P]]
func.func @partial_pads(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x8xf32> {
  %pa = mix.pad %a dim 1 offset 1 : tensor<2x3xf32> -> tensor<2x8xf32>
  %pb = mix.pad %b dim 1 offset 4 : tensor<2x2xf32> -> tensor<2x8xf32>
  %r = mix.add %pb, %pa : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// Ranges with a gap between them, or overlapping, stay a sum.

// CHECK-LABEL: func @gap_or_overlap
// CHECK-NOT:   mix.concat
// CHECK:       mix.add
// CHECK:       mix.add
// CHECK-NOT:   mix.concat
func.func @gap_or_overlap(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %pa = mix.pad %a dim 1 offset 0 : tensor<2x3xf32> -> tensor<2x8xf32>
  %pb = mix.pad %b dim 1 offset 4 : tensor<2x2xf32> -> tensor<2x8xf32>
  %gap = mix.add %pa, %pb : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %pa2 = mix.pad %a dim 1 offset 0 : tensor<2x3xf32> -> tensor<2x8xf32>
  %pc = mix.pad %b dim 1 offset 2 : tensor<2x2xf32> -> tensor<2x8xf32>
  %overlap = mix.add %pa2, %pc : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %gap, %overlap : tensor<2x8xf32>, tensor<2x8xf32>
}
