//===- KernelEmitter.h - Writing kernels op by op ---------------*- C++ -*-===//
//
// The small builder the hand-scheduled kernels of the CUDA target (flash
// attention, cross-entropy) are written with: index and float arithmetic,
// loads and stores, barriers, counted loops carrying values, and guards,
// at one location. Private to lib/Target/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_TARGET_CUDA_KERNELEMITTER_H
#define MIX_LIB_TARGET_CUDA_KERNELEMITTER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
namespace mix {

/// The arithmetic the kernels are written in, at one location.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(static_cast<float>(v)));
  }
  Value negInf() {
    return arith::ConstantFloatOp::create(
        b, loc, b.getF32Type(),
        APFloat::getInf(APFloat::IEEEsingle(), /*Negative=*/true));
  }
  Value addi(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value subi(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value muli(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value divi(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value remi(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value mini(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value cmpi(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value lt(Value x, Value y) { return cmpi(arith::CmpIPredicate::ult, x, y); }
  Value le(Value x, Value y) { return cmpi(arith::CmpIPredicate::ule, x, y); }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value eq(Value x, Value y) { return cmpi(arith::CmpIPredicate::eq, x, y); }
  /// \p v (an integer) as an index.
  Value index(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value isNegInf(Value x) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                 negInf());
  }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  /// The value of lane \p lane (an index) of the warp (all 32 lanes
  /// active).
  Value shuffleIdx(Value v, Value lane) {
    Value l = arith::IndexCastOp::create(b, loc, b.getI32Type(), lane);
    return gpu::ShuffleOp::create(b, loc, v, l, i32(32), gpu::ShuffleMode::IDX)
        .getShuffleResult();
  }
  /// The value of lane `lane ^ offset` of the warp (all 32 lanes active).
  Value shuffleXor(Value v, int64_t offset) {
    Value o = i32(offset);
    return gpu::ShuffleOp::create(b, loc, v, o, i32(32), gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value subf(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value divf(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value maxf(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value fma(Value x, Value y, Value acc) { return addf(acc, mulf(x, y)); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value log(Value x) { return math::LogOp::create(b, loc, x); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// An element of \p m; a bf16 element widened to f32 (exact).
  Value load(Value m, ValueRange at) {
    Value v = memref::LoadOp::create(b, loc, m, at);
    if (v.getType().isBF16())
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return v;
  }
  /// Stores \p v in \p m; an f32 value in a bf16 buffer rounded to nearest
  /// even (mix-round-into-producers gives kernels bf16 outputs).
  void store(Value v, Value m, ValueRange at) {
    Type element = cast<MemRefType>(m.getType()).getElementType();
    if (element.isBF16() && v.getType().isF32())
      v = arith::TruncFOp::create(b, loc, element, v);
    memref::StoreOp::create(b, loc, v, m, at);
  }
  void barrier() { gpu::BarrierOp::create(b, loc); }

  /// \p buffer (statically shaped, contiguous) viewed with \p rank
  /// dimensions, 1 or 2: its elements in one, or its leading dimensions as
  /// rows and its last kept (a rank-0 buffer as one element, a rank-1
  /// buffer as one row).
  Value viewAs(Value buffer, int64_t rank) {
    auto type = cast<MemRefType>(buffer.getType());
    int64_t have = type.getRank();
    if (have == rank)
      return buffer;
    if (have < rank) {
      SmallVector<int64_t> shape(rank - have, 1);
      llvm::append_range(shape, type.getShape());
      SmallVector<ReassociationIndices> groups;
      if (have > 0)
        groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
      return memref::ExpandShapeOp::create(
          b, loc, MemRefType::get(shape, type.getElementType()), buffer,
          groups);
    }
    SmallVector<ReassociationIndices> groups{
        llvm::to_vector(llvm::seq<int64_t>(0, have - rank + 1))};
    for (int64_t d = have - rank + 1; d < have; ++d)
      groups.push_back({d});
    return memref::CollapseShapeOp::create(b, loc, buffer, groups);
  }

  /// The sum of \p v over the lanes of each warp, in every lane (all 32
  /// lanes active).
  Value warpSum(Value v) {
    for (int64_t offset = 16; offset >= 1; offset /= 2)
      v = addf(v, shuffleXor(v, offset));
    return v;
  }
  /// The sum of \p v over the block's \p threads threads (a multiple of
  /// 32, \p tid the thread's index), in every thread: the warps' sums meet
  /// in \p scratch, a workgroup buffer of a float a warp, and every thread
  /// adds them in the same order. Every thread of the block must call it.
  Value blockSum(Value v, Value tid, Value scratch, int64_t threads) {
    v = warpSum(v);
    when(eq(remi(tid, idx(32)), idx(0)),
         [&] { store(v, scratch, {divi(tid, idx(32))}); });
    barrier();
    return sum(threads / 32, f32(0.0),
               [&](Value w) { return load(scratch, {w}); });
  }

  /// `for (iv = lb; iv < ub; iv += step)` carrying \p inits through \p body,
  /// which returns the values to carry on; returns the final ones.
  SmallVector<Value>
  loop(Value lb, Value ub, Value step, ValueRange inits,
       llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto op = scf::ForOp::create(
        b, loc, lb, ub, step, inits,
        [&](OpBuilder &nested, Location, Value iv, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, body(iv, args));
        });
    return SmallVector<Value>(op.getResults());
  }
  /// `for (iv = 0; iv < n; ++iv)` with nothing carried.
  void each(int64_t n, llvm::function_ref<void(Value)> body) {
    loop(idx(0), idx(n), idx(1), {}, [&](Value iv, ValueRange) {
      body(iv);
      return SmallVector<Value>();
    });
  }
  /// `sum_{iv < n} term(iv)`, from \p init.
  Value sum(int64_t n, Value init, llvm::function_ref<Value(Value)> term) {
    return loop(idx(0), idx(n), idx(1), init, [&](Value iv, ValueRange acc) {
      return SmallVector<Value>{addf(acc[0], term(iv))};
    })[0];
  }
  /// `if (cond) body()`.
  void when(Value cond, llvm::function_ref<void()> body) {
    auto op = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.thenBlock());
    body();
  }
};

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TARGET_CUDA_KERNELEMITTER_H
