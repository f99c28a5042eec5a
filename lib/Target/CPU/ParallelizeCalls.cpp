//===- ParallelizeCalls.cpp - Threaded loop nests through the support code
//-===//
//
// A threadable loop nest was outlined as `f(t0, t1, args...)`, running the
// iterations [t0, t1) of its outer parallel loop (outlineLoopNests). Here,
// in the LLVM dialect, each call of one becomes
//
//   mix_parallel_for(&f, t0, t1, nargs, args)
//
// with the arguments (pointers and 64-bit integers) packed into a stack
// array of int64. The support code splits [t0, t1) into one contiguous
// range a thread of the OpenMP team oneDNN also uses, so the package's own
// loops and its matrix products share one pool of threads.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::mix;

static constexpr llvm::StringLiteral kParallelFor = MIX_PARALLEL_FOR_SYMBOL;

/// Whether \p f takes (i64 t0, i64 t1, then pointers and i64s).
static bool hasThreadableSignature(LLVM::LLVMFuncOp f) {
  LLVM::LLVMFunctionType type = f.getFunctionType();
  if (type.getNumParams() < 2 || type.getNumParams() - 2 > kMaxParallelArgs)
    return false;
  return llvm::all_of(type.getParams(), [](Type t) {
    return isa<LLVM::LLVMPointerType>(t) || t.isSignlessInteger(64);
  });
}

void mlir::mix::parallelizeOutlinedCalls(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<LLVM::CallOp> calls;
  module.walk([&](LLVM::CallOp call) {
    std::optional<StringRef> callee = call.getCallee();
    if (!callee)
      return;
    auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(*callee);
    if (f && f->hasAttr(kThreadedAttr) && hasThreadableSignature(f))
      calls.push_back(call);
  });
  if (calls.empty())
    return;
  auto parallelFor = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelFor);
  if (!parallelFor) {
    b.setInsertionPointToStart(module.getBody());
    parallelFor = LLVM::LLVMFuncOp::create(
        b, module.getLoc(), kParallelFor,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    {ptr, i64, i64, i64, ptr}));
  }
  for (LLVM::CallOp call : calls) {
    auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(*call.getCallee());
    Location loc = call.getLoc();
    ValueRange operands = call.getArgOperands();
    int64_t n = operands.size() - 2;
    // The array lives in the caller's entry block: the calls are in
    // straight-line glue, but an alloca elsewhere would grow the stack on
    // every pass through it if that ever changed.
    auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
    b.setInsertionPointToStart(&caller.getBody().front());
    Value count =
        LLVM::ConstantOp::create(b, loc, i64, std::max<int64_t>(n, 1));
    Value array = LLVM::AllocaOp::create(b, loc, ptr, i64, count);
    b.setInsertionPoint(call);
    for (int64_t i = 0; i < n; ++i) {
      Value v = operands[i + 2];
      if (isa<LLVM::LLVMPointerType>(v.getType()))
        v = LLVM::PtrToIntOp::create(b, loc, i64, v);
      Value slot = LLVM::GEPOp::create(b, loc, ptr, i64, array,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      LLVM::StoreOp::create(b, loc, v, slot);
    }
    Value fn = LLVM::AddressOfOp::create(b, loc, f);
    Value nargs = LLVM::ConstantOp::create(b, loc, i64, n);
    LLVM::CallOp::create(
        b, loc, parallelFor,
        ValueRange{fn, operands[0], operands[1], nargs, array});
    call.erase();
  }
}

namespace mlir::mix {
#define GEN_PASS_DEF_MIXPARALLELIZEOUTLINEDCALLSPASS
#include "mix/Target/CPU/Passes.h.inc"
} // namespace mlir::mix

namespace {
struct MixParallelizeOutlinedCallsPass
    : mlir::mix::impl::MixParallelizeOutlinedCallsPassBase<
          MixParallelizeOutlinedCallsPass> {
  void runOnOperation() override { parallelizeOutlinedCalls(getOperation()); }
};
} // namespace
