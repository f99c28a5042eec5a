//===- WarpMma.h - A warp's matrix products on the tensor cores -*- C++ -*-===//
//
// The hand-scheduled kernels' tensor-core products: `mma.sync.m16n8k8` with
// tf32 operands and float32 accumulators (`nvgpu.mma.sync`), one 16 x 8 x 8
// product a warp an instruction. Each lane holds a fixed share of each
// operand (the PTX ISA's fragments for m16n8k8 .tf32); with lane
// l = 4 g + t (g the lane's group of four, t its place in it):
//
//   A (16 x 8):     a[v] = A[g + 8 (v % 2)][t + 4 (v / 2)],  v < 4
//   B (8 x 8):      b[v] = B[t + 4 v][g],                    v < 2
//   C, D (16 x 8):  c[v] = C[g + 8 (v / 2)][2 t + v % 2],    v < 4
//
// The emulator executes the same instruction from the same statement of
// the fragments (EmulateMma.cpp, which checks it against MLIR's own).
// Private to lib/Target/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_TARGET_CUDA_WARPMMA_H
#define MIX_LIB_TARGET_CUDA_WARPMMA_H

#include "KernelEmitter.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>

namespace mlir {
namespace mix {

/// How a product's operands are rounded before the tensor cores read
/// them: to tf32 (10 mantissa bits, to nearest, ties away from zero, as
/// `cvt.rna.tf32.f32`), or to bf16 (7 bits, to nearest even), which the
/// tf32 instruction then multiplies exactly.
enum class OperandRounding { TF32, BF16 };

/// One lane's view of a warp's m16n8k8 products.
struct WarpMma {
  /// An accumulator fragment (C, D): 4 floats a lane.
  using Acc = std::array<Value, 4>;
  /// An A fragment: 4 floats a lane.
  using AFrag = std::array<Value, 4>;

  Emitter &e;
  OperandRounding rounding;
  /// The lane, its group of four and its place in the group (indices).
  Value lane, g, t;

  WarpMma(Emitter &e, OperandRounding rounding, Value lane)
      : e(e), rounding(rounding), lane(lane), g(e.divi(lane, e.idx(4))),
        t(e.remi(lane, e.idx(4))) {}

  /// Row and column, within a 16 x 8 tile, of element \p v of this lane's
  /// accumulator fragment.
  Value accRow(int v) { return e.addi(g, e.idx(8 * (v / 2))); }
  Value accCol(int v) { return e.addi(e.muli(t, e.idx(2)), e.idx(v % 2)); }
  /// Row and column, within a 16 x 8 tile, of element \p v of this lane's
  /// A fragment.
  Value aRow(int v) { return e.addi(g, e.idx(8 * (v % 2))); }
  Value aCol(int v) { return e.addi(t, e.idx(4 * (v / 2))); }
  /// Row (k) of element \p v of this lane's B fragment; its column is g.
  Value bRow(int v) { return e.addi(t, e.idx(4 * v)); }

  /// \p x rounded as the tensor cores' operands are.
  Value round(Value x) {
    OpBuilder &b = e.b;
    Value bits = arith::BitcastOp::create(b, e.loc, b.getI32Type(), x);
    Value rounded;
    if (rounding == OperandRounding::TF32) {
      // Half an ulp of tf32 added to the magnitude, then truncated.
      rounded = arith::AndIOp::create(
          b, e.loc, arith::AddIOp::create(b, e.loc, bits, e.i32(0x1000)),
          e.i32(static_cast<int32_t>(0xffffe000u)));
    } else {
      // To nearest even: 0x7fff plus the lowest kept bit, then truncated.
      Value lsb = arith::AndIOp::create(
          b, e.loc, arith::ShRUIOp::create(b, e.loc, bits, e.i32(16)),
          e.i32(1));
      Value biased = arith::AddIOp::create(
          b, e.loc, bits, arith::AddIOp::create(b, e.loc, lsb, e.i32(0x7fff)));
      rounded = arith::AndIOp::create(b, e.loc, biased,
                                      e.i32(static_cast<int32_t>(0xffff0000u)));
    }
    return arith::BitcastOp::create(b, e.loc, b.getF32Type(), rounded);
  }

  Acc zero() {
    Value z = e.f32(0.0);
    return {z, z, z, z};
  }

  /// D = A B + C on the tensor cores, A and B already rounded.
  Acc mma(const AFrag &a, std::array<Value, 2> bFrag, const Acc &c) {
    OpBuilder &b = e.b;
    Type f32 = b.getF32Type();
    Value va = vector::FromElementsOp::create(
        b, e.loc, VectorType::get({4, 1}, f32), ValueRange(a));
    Value vb = vector::FromElementsOp::create(
        b, e.loc, VectorType::get({2, 1}, f32), ValueRange(bFrag));
    Value vc = vector::FromElementsOp::create(
        b, e.loc, VectorType::get({2, 2}, f32), ValueRange(c));
    Value d = nvgpu::MmaSyncOp::create(b, e.loc, va, vb, vc, {16, 8, 8},
                                       /*tf32Enabled=*/true);
    Acc out;
    for (int v = 0; v < 4; ++v)
      out[v] = vector::ExtractOp::create(b, e.loc, d,
                                         ArrayRef<int64_t>{v / 2, v % 2});
    return out;
  }

  /// The A fragment of the 16 x 8 matrix an accumulator fragment holds,
  /// rounded (the probabilities of a tile of scores as the left operand of
  /// the next product): element v of lane 4g + t is the accumulator's
  /// (g + 8 (v % 2), t + 4 (v / 2)), which lane 4g + t/2 + 2 (v / 2) holds
  /// as its element 2 (v % 2) + t % 2.
  AFrag accAsA(const Acc &c) {
    Value odd = e.eq(e.remi(t, e.idx(2)), e.idx(1));
    Value base = e.addi(e.muli(g, e.idx(4)), e.divi(t, e.idx(2)));
    AFrag a;
    for (int v = 0; v < 4; ++v) {
      Value src = e.addi(base, e.idx(2 * (v / 2)));
      int i = v % 2;
      Value even = e.shuffleIdx(c[2 * i], src);
      Value oddValue = e.shuffleIdx(c[2 * i + 1], src);
      a[v] = round(e.select(odd, oddValue, even));
    }
    return a;
  }

  /// Combines \p x over the four lanes of this lane's group (those that
  /// hold the same rows of an accumulator).
  Value quadSum(Value x) {
    x = e.addf(x, e.shuffleXor(x, 1));
    return e.addf(x, e.shuffleXor(x, 2));
  }
  Value quadMax(Value x) {
    x = e.maxf(x, e.shuffleXor(x, 1));
    return e.maxf(x, e.shuffleXor(x, 2));
  }
};

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TARGET_CUDA_WARPMMA_H
