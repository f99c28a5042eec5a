//===- EmulateMma.cpp - The tensor cores' warp products, lane by lane -----===//
//
// For the CUDA emulator: each `nvgpu.mma.sync` (m16n8k8, tf32 operands,
// float32 accumulators) and `nvvm.mma.sync` (m16n8k16, bf16 operands two a
// 32-bit register, float32 accumulators), in a kernel become a host
// function, becomes a call of the emulator's mixemu_mma_m16n8k8_tf32 or
// mixemu_mma_m16n8k16_bf16 with the lane's fragments
// (runtime/emulator/Fibers.c: the lanes exchange their A and B registers
// once all 32 are there, as a shuffle completes, and each adds the
// products its accumulator elements need, reading the operands' bits as
// the tensor cores do).
//
// The fragments (which lane holds which element) are written here in
// closed form, the emulator's formulas, and checked each time the pass
// runs against MLIR's own statement of them
// (nvgpu::getLaneIdAndValueIdToOperandCoord), which upstream's lowering of
// vector contractions to mma.sync relies on: the kernels (WarpMma.h) and
// the emulation share no code.
//
//===----------------------------------------------------------------------===//

#include "EmulateMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Utils/MMAUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {
constexpr int64_t kLanes = 32;

/// Where element `value` of lane `lane`'s fragment lies in its matrix, by
/// the closed forms the emulation uses (runtime/emulator/Fibers.c): A (16 x
/// k) and C (16 x 8) as (row, column), B (k x 8) as (k, n); k is 8 (tf32)
/// or 16 (bf16, element `value` in half `value % 2` of register
/// `value / 2`).
std::pair<int64_t, int64_t> fragmentCoord(nvgpu::MatMulOperandRole role,
                                          int64_t k, int64_t lane,
                                          int64_t value) {
  int64_t g = lane / 4, t = lane % 4;
  switch (role) {
  case nvgpu::MatMulOperandRole::A:
    if (k == 16)
      return {g + 8 * (value / 2 % 2), 2 * t + value % 2 + 8 * (value / 4)};
    return {g + 8 * (value % 2), t + 4 * (value / 2)};
  case nvgpu::MatMulOperandRole::B:
    if (k == 16)
      return {2 * t + value % 2 + 8 * (value / 2), g};
    return {t + 4 * value, g};
  case nvgpu::MatMulOperandRole::C:
    return {g + 8 * (value / 2), 2 * t + value % 2};
  }
  llvm_unreachable("an operand role");
}

} // namespace

/// Checks fragmentCoord against MLIR's fragments for m16n8k8 tf32 and
/// m16n8k16 with 16-bit operands (MLIR states them for f16; bf16's are the
/// same), whose B MLIR states as (n, k).
LogicalResult mlir::mix::checkMmaFragments(Operation *at) {
  MLIRContext *ctx = at->getContext();
  OpBuilder b(ctx);
  Type f32 = Float32Type::get(ctx), f16 = Float16Type::get(ctx);
  struct Case {
    nvgpu::MatMulOperandRole role;
    Type element;
    int64_t k, rows, cols, values;
    bool transposed;
  } cases[] = {{nvgpu::MatMulOperandRole::A, f32, 8, 16, 8, 4, false},
               {nvgpu::MatMulOperandRole::B, f32, 8, 8, 8, 2, true},
               {nvgpu::MatMulOperandRole::C, f32, 8, 16, 8, 4, false},
               {nvgpu::MatMulOperandRole::A, f16, 16, 16, 16, 8, false},
               {nvgpu::MatMulOperandRole::B, f16, 16, 8, 16, 4, true}};
  for (const Case &c : cases) {
    nvgpu::WarpMatrixInfo info{VectorType::get({c.rows, c.cols}, c.element),
                               c.role};
    FailureOr<AffineMap> map =
        nvgpu::getLaneIdAndValueIdToOperandCoord(b, at->getLoc(), info);
    if (failed(map))
      return at->emitError("the mma.sync fragments of MLIR are unknown");
    for (int64_t lane = 0; lane < kLanes; ++lane)
      for (int64_t v = 0; v < c.values; ++v) {
        SmallVector<int64_t> coord = map->compose({lane, v});
        if (c.transposed)
          std::swap(coord[0], coord[1]);
        auto [row, col] = fragmentCoord(c.role, c.k, lane, v);
        if (coord[0] != row || coord[1] != col)
          return at->emitError()
                 << "the CUDA emulator's mma.sync fragments disagree with "
                    "MLIR's (k "
                 << c.k << ", operand " << static_cast<int>(c.role) << ", lane "
                 << lane << ", element " << v << ")";
      }
  }
  return success();
}

namespace {
/// The elements of a fragment operand: those its vector was built from,
/// its constants, else extracted.
SmallVector<Value> elementsOf(OpBuilder &b, Location loc, Value vector) {
  if (auto from = vector.getDefiningOp<vector::FromElementsOp>())
    return SmallVector<Value>(from.getElements());
  auto type = cast<VectorType>(vector.getType());
  SmallVector<Value> out;
  DenseElementsAttr constant;
  if (matchPattern(vector, m_Constant(&constant))) {
    for (APFloat x : constant.getValues<APFloat>())
      out.push_back(arith::ConstantFloatOp::create(
          b, loc, cast<FloatType>(type.getElementType()), x));
    return out;
  }
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t cols = type.getShape()[1];
    out.push_back(vector::ExtractOp::create(
        b, loc, vector, ArrayRef<int64_t>{i / cols, i % cols}));
  }
  return out;
}

} // namespace

LogicalResult mlir::mix::emulateMma(nvgpu::MmaSyncOp mma,
                                    const MmaExchange &x) {
  SmallVector<int64_t> shape = llvm::to_vector(mma.getMmaShapeAsArray());
  Type f32 = Float32Type::get(mma.getContext());
  auto isF32 = [&](Value v) {
    return cast<VectorType>(v.getType()).getElementType() == f32;
  };
  if (shape != SmallVector<int64_t>{16, 8, 8} || !mma.getTf32Enabled() ||
      !isF32(mma.getMatrixA()) || !isF32(mma.getMatrixC()))
    return mma.emitError("the CUDA emulator runs mma.sync m16n8k8 with tf32 "
                         "operands and float32 accumulators only");
  OpBuilder b(mma);
  Location loc = mma.getLoc();
  auto store = [&](ArrayRef<Value> values, Value buffer) {
    for (auto [i, v] : llvm::enumerate(values))
      memref::StoreOp::create(
          b, loc, v, buffer,
          ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
  };
  store(elementsOf(b, loc, mma.getMatrixA()), x.a);
  store(elementsOf(b, loc, mma.getMatrixB()), x.b);
  store(elementsOf(b, loc, mma.getMatrixC()), x.cd);
  func::CallOp::create(b, loc, x.mmaTF32, ValueRange{x.site, x.a, x.b, x.cd});
  SmallVector<Value> d;
  for (int64_t v = 0; v < 4; ++v)
    d.push_back(memref::LoadOp::create(
        b, loc, x.cd, ValueRange{arith::ConstantIndexOp::create(b, loc, v)}));
  // The result's extractions take the elements (and are left, dead, for
  // eraseDeadFragments); anything else gets the vector.
  for (OpOperand &use : llvm::make_early_inc_range(mma->getUses())) {
    auto extract = dyn_cast<vector::ExtractOp>(use.getOwner());
    if (!extract)
      continue;
    SmallVector<OpFoldResult> pos = extract.getMixedPosition();
    if (pos.size() != 2)
      continue;
    std::optional<int64_t> r = getConstantIntValue(pos[0]);
    std::optional<int64_t> col = getConstantIntValue(pos[1]);
    if (!r || !col)
      continue;
    extract.getResult().replaceAllUsesWith(d[*r * 2 + *col]);
  }
  Value rest =
      vector::FromElementsOp::create(b, loc, mma.getResult().getType(), d);
  mma.getResult().replaceAllUsesExcept(rest, rest.getDefiningOp());
  mma->erase();
  return success();
}

LogicalResult mlir::mix::emulateMma(NVVM::MmaOp mma, const MmaExchange &x) {
  MLIRContext *ctx = mma.getContext();
  Type f32 = Float32Type::get(ctx), i32 = IntegerType::get(ctx, 32);
  NVVM::MMAShapeAttr shape = mma.getShape();
  auto all = [](ValueRange values, Type type) {
    return llvm::all_of(values, [&](Value v) { return v.getType() == type; });
  };
  if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 ||
      mma.getMultiplicandAPtxType() != NVVM::MMATypes::bf16 ||
      mma.getMultiplicandBPtxType() != NVVM::MMATypes::bf16 ||
      mma.getLayoutA() != NVVM::MMALayout::row ||
      mma.getLayoutB() != NVVM::MMALayout::col ||
      mma.getOperandA().size() != 4 || !all(mma.getOperandA(), i32) ||
      mma.getOperandB().size() != 2 || !all(mma.getOperandB(), i32) ||
      mma.getOperandC().size() != 4 || !all(mma.getOperandC(), f32))
    return mma.emitError("the CUDA emulator runs nvvm.mma.sync m16n8k16 with "
                         "bf16 operands (row-major A, column-major B) and "
                         "float32 accumulators only");
  OpBuilder b(mma);
  Location loc = mma.getLoc();
  auto store = [&](ValueRange values, Value buffer) {
    for (auto [i, v] : llvm::enumerate(values)) {
      Value bits = v.getType() == f32
                       ? v
                       : arith::BitcastOp::create(b, loc, f32, v).getResult();
      memref::StoreOp::create(
          b, loc, bits, buffer,
          ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
    }
  };
  store(mma.getOperandA(), x.a);
  store(mma.getOperandB(), x.b);
  store(mma.getOperandC(), x.cd);
  func::CallOp::create(b, loc, x.mmaBF16, ValueRange{x.site, x.a, x.b, x.cd});
  // Read back at once: the next product overwrites the buffer.
  SmallVector<Value> d;
  for (int64_t v = 0; v < 4; ++v)
    d.push_back(memref::LoadOp::create(
        b, loc, x.cd, ValueRange{arith::ConstantIndexOp::create(b, loc, v)}));
  for (Operation *user : llvm::make_early_inc_range(mma->getUsers())) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!extract || extract.getPosition().size() != 1 ||
        extract.getPosition()[0] >= 4)
      return user->emitError("the CUDA emulator takes a bf16 mma.sync's "
                             "result only element by element");
    extract.getResult().replaceAllUsesWith(d[extract.getPosition()[0]]);
  }
  // The product and its extractions are left, dead, for
  // eraseDeadFragments (the caller walks a list of the kernel's ops).
  return success();
}

LogicalResult mlir::mix::eraseDeadFragments(Operation *root) {
  // Users before their operands: a dead extraction frees its vector.
  auto isFragment = [](Operation *op) {
    if (isa<vector::VectorDialect>(op->getDialect()) ||
        llvm::any_of(op->getResultTypes(), llvm::IsaPred<VectorType>) ||
        isa<NVVM::MmaOp>(op))
      return true;
    auto extract = dyn_cast<LLVM::ExtractValueOp>(op);
    return extract && extract.getContainer().getDefiningOp<NVVM::MmaOp>();
  };
  SmallVector<Operation *> fragmentOps;
  root->walk([&](Operation *op) {
    if (isFragment(op))
      fragmentOps.push_back(op);
  });
  for (Operation *op : llvm::reverse(fragmentOps))
    if (op->use_empty())
      op->erase();
  WalkResult left = root->walk([&](Operation *op) {
    if (isFragment(op)) {
      op->emitError("the CUDA emulator runs no vector op but the fragments "
                    "of mma.sync");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(left.wasInterrupted());
}
