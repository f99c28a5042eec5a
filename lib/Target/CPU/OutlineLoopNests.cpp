//===- OutlineLoopNests.cpp - One function per top-level loop nest --------===//
//
// After linalg becomes loops, a model's functions hold thousands of loop
// nests; LLVM's loop analyses are superlinear in function size. Moving each
// top-level nest into its own function keeps compile time linear.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXOUTLINELOOPNESTSPASS
#include "mix/Target/CPU/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Outlined functions by their printed body: the layers of a model are the
/// same loop nests on different buffers, so most nests are outlined once
/// and called from every layer.
using FunctionsByBody = llvm::StringMap<func::FuncOp>;
} // namespace

static std::string printedBody(func::FuncOp fn) {
  std::string text;
  llvm::raw_string_ostream os(text);
  fn.getFunctionType().print(os);
  fn.getBody().front().walk([&](Operation *op) {
    if (op->getParentOp() == fn)
      op->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  });
  return text;
}

/// Whether \p v can be an argument under the bare-pointer calling
/// convention: a memref of static shape, strides and offset, or no memref.
static bool passesAsPointer(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type)
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.hasStaticShape() &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// Outlines `loop` into `@<name>` (or reuses an identical function),
/// replacing it by a call.
static void outline(scf::ForOp loop, StringRef name, OpBuilder &moduleBuilder,
                    FunctionsByBody &existing) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop->getRegions(), captured);
  for (Value v : loop->getOperands())
    captured.insert(v);

  // Constants are cloned in, and so are views whose layout is known only
  // at run time (a stream rank's slice at a computed offset): under the
  // bare-pointer calling convention a memref argument must have a static
  // layout, so such a view is rebuilt inside from what it is computed
  // from. Everything else becomes an argument.
  SmallVector<Value> args;
  SmallVector<Operation *> constants, views;
  llvm::SetVector<Value> work(captured.begin(), captured.end());
  for (size_t i = 0; i < work.size(); ++i) {
    Value v = work[i];
    Operation *def = v.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>()) {
      constants.push_back(def);
    } else if (def &&
               isa<memref::SubViewOp, memref::CollapseShapeOp,
                   memref::ExpandShapeOp, memref::CastOp>(def) &&
               !passesAsPointer(v)) {
      views.push_back(def);
      for (Value operand : def->getOperands())
        work.insert(operand);
    } else {
      args.push_back(v);
    }
  }
  // In program order, so each view follows what it is computed from.
  llvm::sort(views,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Type> argTypes;
  for (Value v : args)
    argTypes.push_back(v.getType());
  auto type = moduleBuilder.getFunctionType(argTypes, loop.getResultTypes());
  auto fn = func::FuncOp::create(moduleBuilder, loop.getLoc(), name, type);
  Block *body = fn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(args, body->getArguments()))
    map.map(v, arg);
  for (Operation *c : constants)
    b.clone(*c, map);
  for (Operation *view : views)
    b.clone(*view, map);
  Operation *clone = b.clone(*loop, map);
  func::ReturnOp::create(b, loop.getLoc(), clone->getResults());

  auto [it, inserted] = existing.try_emplace(printedBody(fn), fn);
  if (!inserted) {
    fn.erase();
    fn = it->second;
  }
  OpBuilder at(loop);
  auto call = func::CallOp::create(at, loop.getLoc(), fn, args);
  loop.replaceAllUsesWith(call.getResults());
  loop.erase();
}

void mlir::mix::outlineLoopNests(ModuleOp module) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
  FunctionsByBody existing;
  for (func::FuncOp f : funcs) {
    if (f.isDeclaration())
      continue;
    SmallVector<scf::ForOp> loops;
    for (Block &block : f.getBody())
      for (auto loop : block.getOps<scf::ForOp>())
        loops.push_back(loop);
    unsigned counter = 0;
    for (scf::ForOp loop : loops)
      outline(loop, (f.getSymName() + "_loop" + Twine(counter++)).str(),
              moduleBuilder, existing);
  }
}

namespace {
struct MixOutlineLoopNestsPass
    : mlir::mix::impl::MixOutlineLoopNestsPassBase<MixOutlineLoopNestsPass> {
  void runOnOperation() override { outlineLoopNests(getOperation()); }
};
} // namespace
