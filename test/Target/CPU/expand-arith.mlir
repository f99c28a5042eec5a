// RUN: mix-opt %s --split-input-file --mix-expand-arith | FileCheck %s

// mix-expand-arith: the bf16 conversions and the ceil/floor divisions that
// convert-arith-to-llvm does not lower well become plain integer
// arithmetic; everything else is left alone.

// f32 -> bf16 rounds to nearest, ties to even, on the bits: add 0x7FFF
// plus the lowest kept bit (bit 16), keep the top 16 bits; a NaN becomes
// the quiet NaN 0x7FC0 (32704).
// CHECK-LABEL: func.func @truncf
// CHECK-SAME:    (%[[A:.*]]: f32)
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK-DAG:     %[[QNAN:.*]] = arith.constant 32704 : i16
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 32767 : i32
// CHECK:         %[[NAN:.*]] = arith.cmpf une, %[[A]], %[[A]] : f32
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[A]] : f32 to i32
// CHECK:         %[[HI:.*]] = arith.shrui %[[BITS]], %[[SIXTEEN]]
// CHECK:         %[[LSB:.*]] = arith.andi %[[HI]], %[[ONE]]
// CHECK:         %[[BIAS:.*]] = arith.addi %[[LSB]], %[[HALF]]
// CHECK:         %[[SUM:.*]] = arith.addi %[[BITS]], %[[BIAS]]
// CHECK:         %[[TOP:.*]] = arith.shrui %[[SUM]], %[[SIXTEEN]]
// CHECK:         %[[T16:.*]] = arith.trunci %[[TOP]] : i32 to i16
// CHECK:         %[[SEL:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[T16]] : i16
// CHECK:         %[[R:.*]] = arith.bitcast %[[SEL]] : i16 to bf16
// CHECK-NOT:     arith.truncf
// CHECK:         return %[[R]]
func.func @truncf(%a: f32) -> bf16 {
  %t = arith.truncf %a : f32 to bf16
  return %t : bf16
}

// -----

// bf16 -> f32 is exact: the bits shifted into the top half.
// CHECK-LABEL: func.func @extf
// CHECK-SAME:    (%[[A:.*]]: bf16)
// CHECK:         %[[B:.*]] = arith.bitcast %[[A]] : bf16 to i16
// CHECK:         %[[W:.*]] = arith.extui %[[B]] : i16 to i32
// CHECK:         %[[S:.*]] = arith.shli %[[W]], %{{.*}} : i32
// CHECK:         %[[R:.*]] = arith.bitcast %[[S]] : i32 to f32
// CHECK-NOT:     arith.extf
// CHECK:         return %[[R]]
func.func @extf(%a: bf16) -> f32 {
  %e = arith.extf %a : bf16 to f32
  return %e : f32
}

// -----

// ceil(i / j) is the truncating quotient, plus one when the division is
// inexact and the signs agree.
// CHECK-LABEL: func.func @ceildiv
// CHECK-SAME:    (%[[I:.*]]: i32, %[[J:.*]]: i32)
// CHECK:         %[[Q:.*]] = arith.divsi %[[I]], %[[J]] : i32
// CHECK:         %[[P:.*]] = arith.muli %[[Q]], %[[J]] : i32
// CHECK:         %[[INEXACT:.*]] = arith.cmpi ne, %[[I]], %[[P]] : i32
// CHECK:         %[[SAME:.*]] = arith.cmpi eq,
// CHECK:         %[[UP:.*]] = arith.andi %[[INEXACT]], %[[SAME]] : i1
// CHECK:         %[[Q1:.*]] = arith.addi %[[Q]], %{{.*}} : i32
// CHECK:         %[[R:.*]] = arith.select %[[UP]], %[[Q1]], %[[Q]] : i32
// CHECK-NOT:     arith.ceildivsi
// CHECK:         return %[[R]]
func.func @ceildiv(%i: i32, %j: i32) -> i32 {
  %c = arith.ceildivsi %i, %j : i32
  return %c : i32
}

// -----

// floor(i / j): minus one when inexact and the signs differ.
// CHECK-LABEL: func.func @floordiv
// CHECK:         %[[Q:.*]] = arith.divsi
// CHECK:         arith.cmpi ne,
// CHECK:         %[[DIFF:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i1
// CHECK:         %[[Q1:.*]] = arith.addi %[[Q]], %{{.*}} : i32
// CHECK:         arith.select %{{.*}}, %[[Q1]], %[[Q]] : i32
// CHECK-NOT:     arith.floordivsi
func.func @floordiv(%i: i32, %j: i32) -> i32 {
  %f = arith.floordivsi %i, %j : i32
  return %f : i32
}

// -----

// Must not fire: maximumf stays one op (LLVM vectorizes a reduction of
// llvm.maximum, not of compares and selects), as do plain f32 ops and an
// f32 -> f16 truncation.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    %[[M:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[H:.*]] = arith.truncf %[[M]] : f32 to f16
// CHECK-NEXT:    return %[[H]]
func.func @untouched(%a: f32, %b: f32) -> f16 {
  %m = arith.maximumf %a, %b : f32
  %h = arith.truncf %m : f32 to f16
  return %h : f16
}
