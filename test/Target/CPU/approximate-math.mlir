// RUN: mix-opt %s --split-input-file --mix-approximate-math | FileCheck %s

// mix-approximate-math: exp, log and tanh become inline polynomial
// arithmetic (math.fma chains LLVM vectorizes with the loop); every other
// math op is left for the libm or LLVM lowering. approximate-math.test
// checks the effect on a whole package.

// exp(x) = 2^k exp(r): k = floor(x log2(e) + 1/2), with log2(e) =
// 1.44269502; r = x - k ln 2 with ln 2 split in two (Cody-Waite:
// 0.693359375 - 2.12194442e-4 = 0.693147...); exp(r) from its Taylor
// coefficients (1/2, 1/6, ...); 2^k built from the exponent bits (k + 127,
// shifted by the 23 mantissa bits).
// CHECK-LABEL: func.func @exp
// CHECK-DAG:     arith.constant 1.44269502 : f32
// CHECK-DAG:     arith.constant -0.693359375 : f32
// CHECK-DAG:     arith.constant 2.12194442E-4 : f32
// CHECK-DAG:     arith.constant 0.166666657 : f32
// CHECK-DAG:     arith.constant 127 : i32
// CHECK-DAG:     arith.constant 23 : i32
// CHECK:         math.floor
// CHECK:         math.fma
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT:     math.exp
// CHECK:         return
func.func @exp(%x: f32) -> f32 {
  %y = math.exp %x : f32
  return %y : f32
}

// -----

// log(x) = e ln 2 + log(m) on the mantissa m, with ln 2 = 0.693147182.
// CHECK-LABEL: func.func @log
// CHECK:         arith.constant 0.693147182 : f32
// CHECK:         math.fma
// CHECK-NOT:     math.log
// CHECK:         return
func.func @log(%x: f32) -> f32 {
  %y = math.log %x : f32
  return %y : f32
}

// -----

// tanh as a rational polynomial: no math.tanh is left.
// CHECK-LABEL: func.func @tanh
// CHECK:         math.fma
// CHECK:         arith.divf
// CHECK-NOT:     math.tanh
// CHECK:         return
func.func @tanh(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  return %y : f32
}

// -----

// On vectors the constants are broadcast (the pass loads the vector
// dialect for that: a vector operand crashed it before).
// CHECK-LABEL: func.func @exp_vector
// CHECK:         math.fma %{{.*}} : vector<8xf32>
// CHECK-NOT:     math.exp
// CHECK:         return
func.func @exp_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %y = math.exp %x : vector<8xf32>
  return %y : vector<8xf32>
}

// -----

// Must not fire: square roots and the other math ops stay as they are.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    %[[S:.*]] = math.sqrt %{{.*}} : f32
// CHECK-NEXT:    %[[R:.*]] = math.rsqrt %[[S]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.erf %[[R]] : f32
// CHECK-NEXT:    return %[[E]]
func.func @untouched(%x: f32) -> f32 {
  %s = math.sqrt %x : f32
  %r = math.rsqrt %s : f32
  %e = math.erf %r : f32
  return %e : f32
}
