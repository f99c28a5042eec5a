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

/// Outlines `loop` into `@<name>` (or reuses an identical function),
/// replacing it by a call.
static void outline(scf::ForOp loop, StringRef name, OpBuilder &moduleBuilder,
                    FunctionsByBody &existing) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop->getRegions(), captured);
  for (Value v : loop->getOperands())
    captured.insert(v);

  // Constants are cloned in; everything else becomes an argument.
  SmallVector<Value> args;
  SmallVector<Operation *> constants;
  for (Value v : captured) {
    Operation *def = v.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      constants.push_back(def);
    else
      args.push_back(v);
  }
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
