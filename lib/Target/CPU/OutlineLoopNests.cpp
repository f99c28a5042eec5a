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
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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

/// The iterations of a nest, as far as its loops' bounds are constants
/// (a loop with other bounds counts once).
static int64_t staticWork(Operation *nest) {
  int64_t work = 1;
  auto trips = [](Value lb, Value ub, Value step) -> int64_t {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0 || *u <= *l)
      return 1;
    return (*u - *l + *s - 1) / *s;
  };
  nest->walk([&](Operation *op) {
    if (auto f = dyn_cast<scf::ForOp>(op))
      work *= trips(f.getLowerBound(), f.getUpperBound(), f.getStep());
    if (auto p = dyn_cast<scf::ParallelOp>(op))
      for (auto [l, u, st] :
           llvm::zip(p.getLowerBound(), p.getUpperBound(), p.getStep()))
        work *= trips(l, u, st);
  });
  return work;
}

/// Whether `loop` is worth running on several threads, and can be: a
/// parallel loop without reductions whose outer dimension has constant
/// bounds and at least two iterations, doing enough work to pay for waking
/// the other threads, and taking only pointers and integers (what
/// `mix_parallel_for` passes on).
static bool isThreadable(scf::ParallelOp loop, ArrayRef<Value> args) {
  if (loop.getNumResults() != 0 || args.size() > kMaxParallelArgs)
    return false;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[0]),
                         ub = getConstantIntValue(loop.getUpperBound()[0]),
                         step = getConstantIntValue(loop.getStep()[0]);
  if (!lb || !ub || !step || *step <= 0 || (*ub - *lb + *step - 1) / *step < 2)
    return false;
  if (staticWork(loop) < kMinParallelWork)
    return false;
  return llvm::all_of(args, [](Value v) {
    return isa<MemRefType, IndexType>(v.getType()) ||
           v.getType().isSignlessInteger(64);
  });
}

/// Makes the outlined copy `loop` of a threadable nest run iterations
/// [t0, t1) of its outer dimension, counted from 0: the outer induction
/// variable becomes lb + t * step.
static void restrictToRange(scf::ParallelOp loop, Value t0, Value t1) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  unsigned dims = loop.getNumLoops();
  Value lb = loop.getLowerBound()[0], step = loop.getStep()[0];
  loop->setOperand(0, t0);
  loop->setOperand(dims, t1);
  loop->setOperand(2 * dims, arith::ConstantIndexOp::create(b, loc, 1));
  Value t = loop.getInductionVars()[0];
  b.setInsertionPointToStart(loop.getBody());
  auto scaled = arith::MulIOp::create(b, loc, t, step);
  Value i = arith::AddIOp::create(b, loc, lb, scaled);
  t.replaceAllUsesExcept(i, scaled);
}

/// Outlines `loop` (an scf.for or scf.parallel) into `@<name>` (or reuses
/// an identical function), replacing it by a call. With \p threadRanges, a
/// threadable parallel nest takes the range of its outer iterations first
/// and is marked kThreadedAttr.
static void outline(Operation *loop, StringRef name, OpBuilder &moduleBuilder,
                    FunctionsByBody &existing, bool threadRanges) {
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
  auto parallel = dyn_cast<scf::ParallelOp>(loop);
  bool threadable = threadRanges && parallel && isThreadable(parallel, args);
  Location loc = loop->getLoc();
  SmallVector<Type> argTypes;
  if (threadable)
    argTypes.append(2, moduleBuilder.getIndexType());
  for (Value v : args)
    argTypes.push_back(v.getType());
  auto type = moduleBuilder.getFunctionType(argTypes, loop->getResultTypes());
  auto fn = func::FuncOp::create(moduleBuilder, loc, name, type);
  Block *body = fn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  IRMapping map;
  for (auto [v, arg] :
       llvm::zip(args, body->getArguments().drop_front(threadable ? 2 : 0)))
    map.map(v, arg);
  for (Operation *c : constants)
    b.clone(*c, map);
  for (Operation *view : views)
    b.clone(*view, map);
  Operation *clone = b.clone(*loop, map);
  if (threadable)
    restrictToRange(cast<scf::ParallelOp>(clone), body->getArgument(0),
                    body->getArgument(1));
  func::ReturnOp::create(b, loc, clone->getResults());

  auto [it, inserted] = existing.try_emplace(printedBody(fn), fn);
  if (!inserted) {
    fn.erase();
    fn = it->second;
  }
  OpBuilder at(loop);
  SmallVector<Value> operands;
  if (threadable) {
    std::optional<int64_t> lb =
                               getConstantIntValue(parallel.getLowerBound()[0]),
                           ub =
                               getConstantIntValue(parallel.getUpperBound()[0]),
                           step = getConstantIntValue(parallel.getStep()[0]);
    operands.push_back(arith::ConstantIndexOp::create(at, loc, 0));
    operands.push_back(arith::ConstantIndexOp::create(
        at, loc, (*ub - *lb + *step - 1) / *step));
    fn->setAttr(kThreadedAttr, at.getUnitAttr());
  }
  operands.append(args.begin(), args.end());
  auto call = func::CallOp::create(at, loc, fn, operands);
  loop->replaceAllUsesWith(call.getResults());
  loop->erase();
}

void mlir::mix::outlineLoopNests(ModuleOp module, bool threadRanges) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
  FunctionsByBody existing;
  for (func::FuncOp f : funcs) {
    if (f.isDeclaration())
      continue;
    SmallVector<Operation *> loops;
    for (Block &block : f.getBody())
      for (Operation &op : block)
        if (isa<scf::ForOp, scf::ParallelOp>(op))
          loops.push_back(&op);
    unsigned counter = 0;
    for (Operation *loop : loops)
      outline(loop, (f.getSymName() + "_loop" + Twine(counter++)).str(),
              moduleBuilder, existing, threadRanges);
  }
}

namespace {
struct MixOutlineLoopNestsPass
    : mlir::mix::impl::MixOutlineLoopNestsPassBase<MixOutlineLoopNestsPass> {
  using Base::Base;
  void runOnOperation() override {
    outlineLoopNests(getOperation(), threadRanges);
  }
};
} // namespace
