//===- EntryPoints.cpp - The entry points' one C signature ----------------===//
//
// mix-record-entry-signatures marks each function with its bufferized
// argument types; mix-pack-entry-points gives each marked function, once in
// the LLVM dialect, the signature every entry point has in the runtime:
// `void mix_<name>(void **args)`.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mixrt/PackageABI.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXRECORDENTRYSIGNATURESPASS
#define GEN_PASS_DEF_MIXPACKENTRYPOINTSPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

std::string mlir::mix::entryPointSymbol(llvm::StringRef name) {
  return (MIX_ENTRY_POINT_PREFIX + name).str();
}

FailureOr<SmallVector<MemRefType>> mlir::mix::getEntrySignature(Operation *fn) {
  auto types = fn->getAttrOfType<ArrayAttr>(kEntrySignatureAttr);
  if (!types)
    return failure();
  SmallVector<MemRefType> result;
  for (Attribute attr : types) {
    auto type = dyn_cast<TypeAttr>(attr);
    auto memref = type ? dyn_cast<MemRefType>(type.getValue()) : MemRefType();
    if (!memref)
      return failure();
    result.push_back(memref);
  }
  return result;
}

namespace {
struct MixRecordEntrySignaturesPass
    : mlir::mix::impl::MixRecordEntrySignaturesPassBase<
          MixRecordEntrySignaturesPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (func::FuncOp fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isDeclaration())
        continue;
      SmallVector<Attribute> types;
      for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
        auto memref = dyn_cast<MemRefType>(type);
        if (!memref || !memref.hasStaticShape() ||
            !memref.getLayout().isIdentity()) {
          fn.emitError() << "argument #" << i
                         << " is not a static, contiguous memref: " << type;
          return signalPassFailure();
        }
        types.push_back(TypeAttr::get(memref));
      }
      fn->setAttr(kEntrySignatureAttr, b.getArrayAttr(types));
    }
  }
};

/// Replaces \p callee by `llvm.func @mix_<name>(!llvm.ptr)` reading its
/// arguments from the array the pointer points to.
LogicalResult packEntryPoint(LLVM::LLVMFuncOp callee, ArrayAttr signature,
                             bool optnone) {
  MLIRContext *ctx = callee.getContext();
  Location loc = callee.getLoc();
  if (signature.size() != callee.getFunctionType().getNumParams())
    return callee.emitError()
           << "lowered signature has "
           << callee.getFunctionType().getNumParams() << " parameters, "
           << kEntrySignatureAttr << " " << signature.size();
  // At the end of the module, in the order they are packed.
  auto b = OpBuilder::atBlockEnd(callee->getBlock());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
  auto entry = LLVM::LLVMFuncOp::create(
      b, loc, entryPointSymbol(callee.getSymName()), type);
  // Straight-line glue around the outlined loop nests, tens of thousands of
  // instructions for a large model: optimising it buys nothing, and LLVM's
  // passes are superlinear in function size.
  if (optnone)
    entry.setPassthroughAttr(b.getArrayAttr(
        {b.getStringAttr("noinline"), b.getStringAttr("optnone")}));
  entry->setAttr(kEntrySignatureAttr, signature);
  entry.getBody().takeBody(callee.getBody());
  Block &block = entry.getBody().front();
  unsigned numArgs = block.getNumArguments();
  Value packed = block.addArgument(ptr, loc);
  // Loaded where used: loads hoisted to the top would be live across the
  // whole glue and keep the register allocator busy spilling them.
  for (unsigned i = 0; i < numArgs; ++i) {
    for (OpOperand &use :
         llvm::make_early_inc_range(block.getArgument(i).getUses())) {
      b.setInsertionPoint(use.getOwner());
      Value slot =
          LLVM::GEPOp::create(b, loc, ptr, ptr, packed,
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      use.set(LLVM::LoadOp::create(b, loc, ptr, slot));
    }
  }
  block.eraseArguments(0, numArgs);
  callee.erase();
  return success();
}

struct MixPackEntryPointsPass
    : mlir::mix::impl::MixPackEntryPointsPassBase<MixPackEntryPointsPass> {
  using MixPackEntryPointsPassBase::MixPackEntryPointsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The entry points asked for, in that order, then any other function
    // with a recorded signature, in module order.
    SmallVector<LLVM::LLVMFuncOp> functions;
    for (const std::string &name : entryPoints) {
      auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!fn || fn.isExternal() || !fn->hasAttr(kEntrySignatureAttr)) {
        module.emitError() << "no lowered entry point @" << name;
        return signalPassFailure();
      }
      functions.push_back(fn);
    }
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (fn->hasAttr(kEntrySignatureAttr) && !fn.isExternal() &&
          !llvm::is_contained(functions, fn) &&
          !llvm::is_contained(entryPoints, fn.getSymName()))
        functions.push_back(fn);
    for (LLVM::LLVMFuncOp fn : functions) {
      // A packed entry point keeps its signature; it is not packed again.
      ArrayRef<Type> params = fn.getFunctionType().getParams();
      if (params.size() == 1 && isa<LLVM::LLVMPointerType>(params[0]) &&
          fn.getSymName().starts_with(MIX_ENTRY_POINT_PREFIX))
        continue;
      auto signature = fn->getAttrOfType<ArrayAttr>(kEntrySignatureAttr);
      if (failed(packEntryPoint(fn, signature, optnone)))
        return signalPassFailure();
    }
  }
};
} // namespace
