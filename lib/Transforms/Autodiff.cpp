//===- Autodiff.cpp - Reverse-mode differentiation of primitive mix ops ---===//
//
// Builds @grad from @forward: the forward computation followed by the
// vector-Jacobian product of every primitive op in reverse order, returning
// the loss terms and the gradient of the total loss for every parameter.
// Each op's rule is its DifferentiableOpInterface (MixVJPs.cpp).
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXAUTODIFFPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
/// The adjoints of one function body, accumulated in reverse order.
class Adjoints {
public:
  explicit Adjoints(PrimitiveBuilder &pb) : pb(pb) {}

  void accumulate(Value v, Value adj) {
    if (!adj || !isa<FloatType>(getElementTypeOrSelf(v.getType())))
      return;
    assert(v.getType() == adj.getType() && "adjoint of the wrong type");
    auto [it, inserted] = adjoints.try_emplace(v, adj);
    if (!inserted)
      it->second = pb.add(it->second, adj);
  }

  Value lookup(Value v) const { return adjoints.lookup(v); }

  /// Emits the vector-Jacobian product of `op` given the adjoint `dy` of
  /// its first result.
  LogicalResult backprop(Operation *op, Value dy);

private:
  PrimitiveBuilder &pb;
  llvm::DenseMap<Value, Value> adjoints;
};
} // namespace

LogicalResult Adjoints::backprop(Operation *op, Value dy) {
  // Constants (of the shapes, or literal) carry no gradient.
  if (isa<arith::ConstantOp>(op))
    return success();
  auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
  if (!differentiable)
    return op->emitOpError()
           << "has no vector-Jacobian product; autodiff runs on primitive "
              "ops (run mix-decompose first)";
  differentiable.buildVJP(pb, dy, [&](Value operand, Value adjoint) {
    accumulate(operand, adjoint);
  });
  return success();
}

namespace {
struct AutodiffPass : mix::impl::MixAutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    auto module = cast<ModuleOp>(getOperation());
    auto forward = module.lookupSymbol<func::FuncOp>(function);
    if (!forward) {
      module.emitError() << "no function @" << function << " to differentiate";
      return signalPassFailure();
    }
    if (Operation *existing = module.lookupSymbol(gradFunction)) {
      existing->emitError() << "a symbol @" << gradFunction
                            << " exists already; mix-autodiff writes the "
                               "gradient function there";
      return signalPassFailure();
    }
    if (failed(differentiate(forward)))
      signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp forward) {
    if (!forward.getBody().hasOneBlock())
      return forward.emitError("autodiff needs a single-block function");
    auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
    if (ret.getNumOperands() == 0 ||
        cast<RankedTensorType>(ret.getOperand(0).getType()).getRank() != 0)
      return forward.emitError("autodiff needs a function whose first result "
                               "is the scalar loss");

    // @grad: the forward body, then the backward pass.
    OpBuilder b(forward);
    b.setInsertionPointAfter(forward);
    auto grad = cast<func::FuncOp>(b.clone(*forward));
    grad.setSymName(gradFunction);
    Block &body = grad.getBody().front();
    auto gradRet = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(gradRet);
    PrimitiveBuilder pb(b, forward.getLoc());
    Adjoints adjoints(pb);
    Value loss = gradRet.getOperand(0);
    adjoints.accumulate(loss, pb.splat({}, 1.0));

    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      if (op->getNumResults() == 0)
        return op->emitOpError("autodiff handles ops with results only");
      // Results after the first are auxiliary (mix.flash_attention's row
      // statistics): only the backward pass reads them, so nothing in the
      // forward function gives them an adjoint.
      for (OpResult aux : op->getResults().drop_front())
        if (adjoints.lookup(aux))
          return op->emitOpError()
                 << "result #" << aux.getResultNumber()
                 << " has an adjoint; autodiff differentiates an op "
                    "through its first result only";
      Value dy = adjoints.lookup(op->getResult(0));
      if (!dy)
        continue;
      pb.setLoc(op->getLoc());
      if (failed(adjoints.backprop(op, dy)))
        return failure();
    }

    SmallVector<Value> results(gradRet.getOperands());
    SmallVector<Type> types(gradRet.getOperandTypes());
    for (BlockArgument arg : body.getArguments()) {
      auto type = cast<RankedTensorType>(arg.getType());
      if (!type.getElementType().isF32())
        continue;
      Value g = adjoints.lookup(arg);
      if (!g)
        g = pb.splat(type.getShape(), 0.0);
      results.push_back(g);
      types.push_back(type);
    }
    func::ReturnOp::create(b, gradRet.getLoc(), results);
    gradRet.erase();
    grad.setType(b.getFunctionType(grad.getArgumentTypes(), types));
    return success();
  }
};
} // namespace
