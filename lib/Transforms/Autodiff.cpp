//===- Autodiff.cpp - Reverse-mode differentiation of primitive mix ops ---===//
//
// Builds @grad from @forward: the forward computation followed by the
// vector-Jacobian product of every primitive op in reverse order, returning
// the loss terms and the gradient of the total loss for every parameter.
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/Passes.h"
#include "mix/Transforms/PrimitiveBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/TypeSwitch.h"

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
  /// its (single) result.
  LogicalResult backprop(Operation *op, Value dy);

private:
  PrimitiveBuilder &pb;
  llvm::DenseMap<Value, Value> adjoints;
};
} // namespace

LogicalResult Adjoints::backprop(Operation *op, Value dy) {
  auto shape = [](Value v) { return PrimitiveBuilder::shape(v); };
  auto binaryTo = [&](Value operand, Value d) {
    accumulate(operand, pb.sumTo(d, shape(operand)));
  };
  Value y = op->getNumResults() ? op->getResult(0) : Value();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AddOp o) {
        binaryTo(o.getLhs(), dy);
        binaryTo(o.getRhs(), dy);
        return success();
      })
      .Case([&](SubOp o) {
        binaryTo(o.getLhs(), dy);
        binaryTo(o.getRhs(), pb.neg(dy));
        return success();
      })
      .Case([&](MulOp o) {
        binaryTo(o.getLhs(), pb.mul(dy, o.getRhs()));
        binaryTo(o.getRhs(), pb.mul(dy, o.getLhs()));
        return success();
      })
      .Case([&](DivOp o) {
        // d(a/b) = da/b - db a/b^2 = da/b - db y/b.
        Value q = pb.div(dy, o.getRhs());
        binaryTo(o.getLhs(), q);
        binaryTo(o.getRhs(), pb.neg(pb.mul(q, y)));
        return success();
      })
      .Case([&](MaxOp o) {
        // Ties go to the right-hand side.
        Value left = pb.step(pb.sub(o.getLhs(), o.getRhs()));
        binaryTo(o.getLhs(), pb.mul(dy, left));
        binaryTo(o.getRhs(), pb.sub(dy, pb.mul(dy, left)));
        return success();
      })
      .Case([&](ExpOp o) {
        accumulate(o.getInput(), pb.mul(dy, y));
        return success();
      })
      .Case([&](LogOp o) {
        accumulate(o.getInput(), pb.div(dy, o.getInput()));
        return success();
      })
      .Case([&](NegOp o) {
        accumulate(o.getInput(), pb.neg(dy));
        return success();
      })
      .Case([&](RsqrtOp o) {
        // d(u^-1/2) = -1/2 u^-3/2 = -1/2 y^3.
        accumulate(o.getInput(),
                   pb.mul(pb.scale(dy, -0.5), pb.mul(pb.mul(y, y), y)));
        return success();
      })
      .Case([&](SqrtOp o) {
        accumulate(o.getInput(), pb.div(pb.scale(dy, 0.5), y));
        return success();
      })
      .Case([&](TanhOp o) {
        Value one = pb.scalar(pb.rank(y), 1.0);
        accumulate(o.getInput(), pb.mul(dy, pb.sub(one, pb.mul(y, y))));
        return success();
      })
      .Case<StepOp, StopGradientOp, CausalMaskOp, arith::ConstantOp>(
          [](Operation *) { return success(); })
      .Case([&](ReduceSumOp o) {
        accumulate(o.getInput(), pb.broadcastTo(dy, shape(o.getInput())));
        return success();
      })
      .Case([&](BroadcastOp o) {
        binaryTo(o.getInput(), dy);
        return success();
      })
      .Case([&](MatmulOp o) {
        Value a = o.getLhs(), b = o.getRhs();
        bool ta = o.getTransposeLhs(), tb = o.getTransposeRhs();
        // C = A B with A = ta ? a^T : a and B = tb ? b^T : b.
        // dA = dC B^T and dB = A^T dC, transposed back where needed.
        Value da =
            ta ? pb.matmul(b, dy, tb, true) : pb.matmul(dy, b, false, !tb);
        Value db =
            tb ? pb.matmul(dy, a, true, ta) : pb.matmul(a, dy, !ta, false);
        accumulate(a, da);
        accumulate(b, db);
        return success();
      })
      .Case([&](TransposeOp o) {
        ArrayRef<int64_t> perm = o.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        accumulate(o.getInput(), pb.transpose(dy, inverse));
        return success();
      })
      .Case([&](ReshapeOp o) {
        accumulate(o.getInput(), pb.reshape(dy, shape(o.getInput())));
        return success();
      })
      .Case([&](SliceOp o) {
        int64_t dim = o.getDim();
        accumulate(o.getInput(),
                   pb.pad(dy, dim, o.getOffset(), shape(o.getInput())[dim]));
        return success();
      })
      .Case([&](PadOp o) {
        int64_t dim = o.getDim();
        accumulate(o.getInput(),
                   pb.slice(dy, dim, o.getOffset(), shape(o.getInput())[dim]));
        return success();
      })
      // The collective pair of stream parallelism (Megatron's g and f): each
      // one's adjoint is the other.
      .Case([&](AllReduceOp o) {
        accumulate(o.getInput(), dy);
        return success();
      })
      .Case([&](GradAllReduceOp o) {
        accumulate(o.getInput(), AllReduceOp::create(pb.builder(), pb.getLoc(),
                                                     dy.getType(), dy));
        return success();
      })
      .Case([&](RankSliceOp o) {
        accumulate(o.getInput(), RankPadOp::create(pb.builder(), pb.getLoc(),
                                                   o.getInput().getType(), dy,
                                                   o.getDim(), o.getShards()));
        return success();
      })
      .Case([&](RankPadOp o) {
        accumulate(o.getInput(),
                   RankSliceOp::create(pb.builder(), pb.getLoc(),
                                       o.getInput().getType(), dy, o.getDim(),
                                       o.getShards()));
        return success();
      })
      .Case([&](ConcatOp o) {
        int64_t dim = o.getDim(), n = shape(o.getLhs())[dim];
        accumulate(o.getLhs(), pb.slice(dy, dim, 0, n));
        accumulate(o.getRhs(), pb.slice(dy, dim, n, shape(o.getRhs())[dim]));
        return success();
      })
      .Case([&](GatherOp o) {
        accumulate(o.getTable(), ScatterAddOp::create(pb.builder(), pb.getLoc(),
                                                      o.getTable().getType(),
                                                      dy, o.getIds()));
        return success();
      })
      .Case([&](ScatterAddOp o) {
        accumulate(o.getUpdates(),
                   GatherOp::create(pb.builder(), pb.getLoc(),
                                    o.getUpdates().getType(), dy, o.getIds()));
        return success();
      })
      .Case([&](TakeAlongOp o) {
        accumulate(o.getInput(),
                   PutAlongOp::create(pb.builder(), pb.getLoc(),
                                      o.getInput().getType(), dy, o.getIds()));
        return success();
      })
      .Case([&](PutAlongOp o) {
        accumulate(o.getInput(),
                   TakeAlongOp::create(pb.builder(), pb.getLoc(),
                                       o.getInput().getType(), dy, o.getIds()));
        return success();
      })
      .Case([&](CumsumOp o) {
        accumulate(o.getInput(), pb.cumsum(dy, o.getDim(), !o.getReverse()));
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "has no vector-Jacobian product; autodiff runs on primitive "
                  "ops (run mix-decompose first)";
      });
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
      if (op->getNumResults() != 1)
        return op->emitOpError("autodiff handles single-result ops only");
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
