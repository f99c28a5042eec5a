//===- WarpMma.h - A warp's matrix products on the tensor cores -*- C++ -*-===//
//
// The hand-scheduled kernels' tensor-core products, one 16 x 8 x k product
// a warp an instruction, float32 accumulators:
//
//   - tf32 operands: `mma.sync.m16n8k8` (`nvgpu.mma.sync`), k = 8;
//   - bf16 operands: `mma.sync.m16n8k16` (`nvvm.mma.sync`, two bf16 a
//     32-bit register), k = 16, twice tf32's rate. (nvgpu's lowering does
//     not take bf16 operands, so the instruction is NVVM's own.)
//
// Each lane holds a fixed share of each operand (the PTX ISA's fragments);
// with lane l = 4 g + t (g the lane's group of four, t its place in it):
//
//   m16n8k8 .tf32   A (16 x 8):  a[v] = A[g + 8 (v % 2)][t + 4 (v / 2)], v < 4
//                   B (8 x 8):   b[v] = B[t + 4 v][g],                    v < 2
//   m16n8k16 .bf16  A (16 x 16): a[v] = A[g + 8 (v / 2 % 2)]
//                                        [2 t + v % 2 + 8 (v / 4)],       v < 8
//                   B (16 x 8):  b[v] = B[2 t + v % 2 + 8 (v / 2)][g],    v < 4
//   both            C, D (16 x 8): c[v] = C[g + 8 (v / 2)][2 t + v % 2], v < 4
//
// With k16, an accumulator's elements are the A operand's at the same
// places (FlashAttention-2's register reuse): a tile of probabilities
// multiplies the next product without leaving the lane. The emulator
// executes the same instructions from its own statement of the fragments
// (EmulateMma.cpp, which checks it against MLIR's own).
// Private to lib/Target/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_TARGET_CUDA_WARPMMA_H
#define MIX_LIB_TARGET_CUDA_WARPMMA_H

#include "KernelEmitter.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>

namespace mlir {
namespace mix {

/// The tensor cores' operands: tf32 (10 mantissa bits, rounded to
/// nearest, ties away from zero, as `cvt.rna.tf32.f32`; m16n8k8), or bf16
/// (7 bits, to nearest even; m16n8k16).
enum class OperandRounding { TF32, BF16 };

/// One lane's view of a warp's products.
struct WarpMma {
  /// An accumulator fragment (C, D): 4 floats a lane.
  using Acc = std::array<Value, 4>;
  /// An A fragment: k / 2 floats a lane (4 or 8), already rounded.
  using AFrag = SmallVector<Value, 8>;
  /// A B fragment: k / 4 floats a lane (2 or 4), already rounded.
  using BFrag = SmallVector<Value, 4>;

  Emitter &e;
  OperandRounding rounding;
  /// The products' depth: 8 (tf32) or 16 (bf16).
  int64_t k;
  /// The lane, its group of four and its place in the group (indices).
  Value lane, g, t;

  WarpMma(Emitter &e, OperandRounding rounding, Value lane)
      : e(e), rounding(rounding), k(depth(rounding)), lane(lane),
        g(e.divi(lane, e.idx(4))), t(e.remi(lane, e.idx(4))) {}

  static int64_t depth(OperandRounding rounding) {
    return rounding == OperandRounding::TF32 ? 8 : 16;
  }
  bool bf16() const { return rounding == OperandRounding::BF16; }
  int aValues() const { return static_cast<int>(k / 2); }
  int bValues() const { return static_cast<int>(k / 4); }

  /// Row and column, within a 16 x 8 tile, of element \p v of this lane's
  /// accumulator fragment.
  Value accRow(int v) { return e.addi(g, e.idx(8 * (v / 2))); }
  Value accCol(int v) { return e.addi(e.muli(t, e.idx(2)), e.idx(v % 2)); }
  /// Row and column, within a 16 x k tile, of element \p v of this lane's
  /// A fragment.
  Value aRow(int v) {
    return e.addi(g, e.idx(8 * (bf16() ? v / 2 % 2 : v % 2)));
  }
  Value aCol(int v) {
    if (bf16())
      return e.addi(e.muli(t, e.idx(2)), e.idx(v % 2 + 8 * (v / 4)));
    return e.addi(t, e.idx(4 * (v / 2)));
  }
  /// Row (k) of element \p v of this lane's B fragment; its column is g.
  Value bRow(int v) {
    if (bf16())
      return e.addi(e.muli(t, e.idx(2)), e.idx(v % 2 + 8 * (v / 2)));
    return e.addi(t, e.idx(4 * v));
  }

  /// \p x rounded as the tensor cores' operands are (a float holding the
  /// operand's value).
  Value round(Value x) {
    OpBuilder &b = e.b;
    Value bits = arith::BitcastOp::create(b, e.loc, b.getI32Type(), x);
    Value rounded;
    if (!bf16()) {
      // Half an ulp of tf32 added to the magnitude, then truncated.
      rounded = e.andi(arith::AddIOp::create(b, e.loc, bits, e.i32(0x1000)),
                       e.i32(static_cast<int32_t>(0xffffe000u)));
    } else {
      // To nearest even: 0x7fff plus the lowest kept bit, then truncated.
      Value lsb =
          e.andi(arith::ShRUIOp::create(b, e.loc, bits, e.i32(16)), e.i32(1));
      Value biased = arith::AddIOp::create(
          b, e.loc, bits, arith::AddIOp::create(b, e.loc, lsb, e.i32(0x7fff)));
      rounded = e.andi(biased, e.i32(static_cast<int32_t>(0xffff0000u)));
    }
    return arith::BitcastOp::create(b, e.loc, b.getF32Type(), rounded);
  }

  Acc zero() {
    Value z = e.f32(0.0);
    return {z, z, z, z};
  }

  /// D = A B + C on the tensor cores, A and B already rounded.
  Acc mma(ArrayRef<Value> a, ArrayRef<Value> bFrag, const Acc &c) {
    assert(static_cast<int>(a.size()) == aValues() &&
           static_cast<int>(bFrag.size()) == bValues() && "fragment sizes");
    return bf16() ? mmaBF16(a, bFrag, c) : mmaTF32(a, bFrag, c);
  }

  /// The A fragment of the 16 x k matrix that k / 8 accumulator fragments
  /// hold side by side (\p accs: columns [0, 8), [8, 16)), rounded: the
  /// probabilities of a tile of scores as the left operand of the next
  /// product.
  AFrag accAsA(ArrayRef<Acc> accs) {
    assert(static_cast<int64_t>(accs.size()) == k / 8 && "k / 8 tiles");
    AFrag a;
    if (bf16()) {
      // Element v is accumulator v / 4's element v % 4, in this lane.
      for (int v = 0; v < 8; ++v)
        a.push_back(round(accs[v / 4][v % 4]));
      return a;
    }
    // Element v of lane 4g + t is the accumulator's (g + 8 (v % 2),
    // t + 4 (v / 2)), which lane 4g + t/2 + 2 (v / 2) holds as its element
    // 2 (v % 2) + t % 2.
    const Acc &c = accs[0];
    Value odd = e.eq(e.remi(t, e.idx(2)), e.idx(1));
    Value base = e.addi(e.muli(g, e.idx(4)), e.divi(t, e.idx(2)));
    for (int v = 0; v < 4; ++v) {
      Value src = e.addi(base, e.idx(2 * (v / 2)));
      int i = v % 2;
      Value even = e.shuffleIdx(c[2 * i], src);
      Value oddValue = e.shuffleIdx(c[2 * i + 1], src);
      a.push_back(round(e.select(odd, oddValue, even)));
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

private:
  Acc mmaTF32(ArrayRef<Value> a, ArrayRef<Value> bFrag, const Acc &c) {
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

  /// Two bf16-valued floats as one register: \p lo in the low half.
  Value pack(Value lo, Value hi) {
    OpBuilder &b = e.b;
    Type i32 = b.getI32Type();
    Value loBits = arith::BitcastOp::create(b, e.loc, i32, lo);
    Value hiBits = arith::BitcastOp::create(b, e.loc, i32, hi);
    return arith::OrIOp::create(
        b, e.loc, arith::ShRUIOp::create(b, e.loc, loBits, e.i32(16)),
        e.andi(hiBits, e.i32(static_cast<int32_t>(0xffff0000u))));
  }

  Acc mmaBF16(ArrayRef<Value> a, ArrayRef<Value> bFrag, const Acc &c) {
    OpBuilder &b = e.b;
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    SmallVector<Value, 4> ra, rb;
    for (size_t v = 0; v < a.size(); v += 2)
      ra.push_back(pack(a[v], a[v + 1]));
    for (size_t v = 0; v < bFrag.size(); v += 2)
      rb.push_back(pack(bFrag[v], bFrag[v + 1]));
    auto result = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, e.loc, result, ra, rb, ValueRange(c), {16, 8, 16},
        /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    Acc out;
    for (int v = 0; v < 4; ++v)
      out[v] = LLVM::ExtractValueOp::create(b, e.loc, d, v);
    return out;
  }
};

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TARGET_CUDA_WARPMMA_H
