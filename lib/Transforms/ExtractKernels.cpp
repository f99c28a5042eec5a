//===- ExtractKernels.cpp - The kernels of a proved region mixture --------===//
//
// A region expert the prover accepted computes, at every token, an affine
// map of that token's x: E_k(x)_t = A_k x_t + c_k. This file emits, before
// the mixture, IR that computes A_k and c_k from the expert's weights by
// following the region op by op on affine forms (A, c) instead of on
// activations, and stacks them into the kernels and biases of a dynamic
// convolution. It works for every region the prover accepts: scaled,
// summed and composed linear maps, biases per expert, shared, or added
// after a scale, and values computed from x above the mixture.
//
//===----------------------------------------------------------------------===//

#include "ExtractKernels.h"

#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"
#include "mix/Transforms/ExpertAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mix;

namespace {
/// An activation y with y_t = A x_t + c at every token t: `a` is (F, d), or
/// null for the identity (y = x); `c` is (F), or null for zero.
struct AffineForm {
  Value a, c;
  int64_t features = 0;
  /// Whether `c` depends on the expert's own weights.
  bool perExpert = false;
};

class Extractor {
public:
  Extractor(OpBuilder &b, MixtureOp op)
      : pb(b, op.getLoc()), op(op), block(op.getBody().front()),
        d(PrimitiveBuilder::shape(op.getInput()).back()) {}

  /// A_k and c_k of expert k.
  FailureOr<AffineForm> expert(int64_t k);

  /// Why the extraction failed.
  std::string why;

private:
  bool isX(Value v);
  /// An x-independent value, materialised for expert k (region values are
  /// cloned with the block arguments bound to the k-th weight slices).
  FailureOr<Value> constant(Value v);
  FailureOr<AffineForm> form(Value v);
  FailureOr<AffineForm> transfer(Operation *def);
  /// A of \p f, the identity materialised.
  Value matrix(const AffineForm &f);
  /// The features of a token-invariant constant combined into an
  /// activation of \p features: a vector of that length.
  FailureOr<Value> featureVector(Value v, int64_t features);
  LogicalResult fail(Operation *at, const Twine &message) {
    why = (Twine("`") + at->getName().getStringRef() + "` " + message).str();
    return failure();
  }

  PrimitiveBuilder pb;
  MixtureOp op;
  Block &block;
  int64_t d;
  int64_t k = 0;
  Value identity;
  /// Per expert: the materialised constants and the forms.
  IRMapping constants;
  llvm::DenseMap<Value, bool> perExpertConstant;
  llvm::DenseMap<Value, AffineForm> forms;
  /// Shared by the experts: forms of values computed above the mixture.
  llvm::DenseMap<Value, AffineForm> sharedForms;
  llvm::DenseMap<Value, bool> xCache;
};
} // namespace

bool Extractor::isX(Value v) {
  auto it = xCache.find(v);
  if (it != xCache.end())
    return it->second;
  bool r = dependsOn(v, op.getInput()) || dependsOn(v, block.getArgument(0));
  xCache[v] = r;
  return r;
}

FailureOr<Value> Extractor::constant(Value v) {
  if (Value m = constants.lookupOrNull(v))
    return m;
  auto arg = dyn_cast<BlockArgument>(v);
  if (arg && arg.getOwner() == &block) {
    // The k-th slice of a stacked expert weight.
    Value w = op.getExpertWeights()[arg.getArgNumber() - 1];
    Value slice = pb.reshape(pb.slice(w, 0, k, 1),
                             PrimitiveBuilder::shape(w).drop_front());
    constants.map(v, slice);
    perExpertConstant[v] = true;
    return slice;
  }
  Operation *def = v.getDefiningOp();
  if (!def || !op->isProperAncestor(def)) {
    perExpertConstant[v] = false;
    return v;
  }
  bool per = false;
  for (Value operand : def->getOperands()) {
    FailureOr<Value> m = constant(operand);
    if (failed(m))
      return failure();
    per |= perExpertConstant.lookup(operand);
  }
  if (def->getNumRegions() != 0) {
    (void)fail(def, "has regions the extraction does not clone");
    return failure();
  }
  pb.builder().clone(*def, constants);
  for (Value r : def->getResults())
    perExpertConstant[r] = per;
  return constants.lookup(v);
}

Value Extractor::matrix(const AffineForm &f) {
  if (f.a)
    return f.a;
  if (!identity) {
    SmallVector<float> values(d * d, 0.0f);
    for (int64_t i = 0; i < d; ++i)
      values[i * d + i] = 1.0f;
    auto type = pb.f32({d, d});
    identity = arith::ConstantOp::create(
        pb.builder(), pb.getLoc(), type,
        DenseElementsAttr::get(type, ArrayRef<float>(values)));
  }
  return identity;
}

FailureOr<Value> Extractor::featureVector(Value v, int64_t features) {
  FailureOr<Value> m = constant(v);
  if (failed(m))
    return failure();
  ArrayRef<int64_t> s = PrimitiveBuilder::shape(*m);
  int64_t last = s.empty() ? 1 : s.back();
  Value vec;
  if (llvm::all_of(s.drop_back(), [](int64_t n) { return n == 1; })) {
    vec = pb.reshape(*m, {last});
  } else {
    // A splat (the prover accepts no other constant that varies along the
    // tokens): its value as a vector.
    DenseElementsAttr attr;
    if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
      return failure();
    vec = pb.splat({last}, attr.getSplatValue<APFloat>().convertToDouble());
  }
  if (last != features)
    vec = pb.broadcastTo(vec, {features});
  return vec;
}

FailureOr<AffineForm> Extractor::form(Value v) {
  if (v == op.getInput() || v == block.getArgument(0))
    return AffineForm{{}, {}, d, false};
  Operation *def = v.getDefiningOp();
  bool inside = def && op->isProperAncestor(def);
  if (inside) {
    auto it = forms.find(v);
    if (it != forms.end())
      return it->second;
  } else {
    auto it = sharedForms.find(v);
    if (it != sharedForms.end())
      return it->second;
  }
  if (!def) {
    why = "a value that depends on x is not computed by an op";
    return failure();
  }
  FailureOr<AffineForm> f = transfer(def);
  if (failed(f))
    return failure();
  (inside ? forms : sharedForms)[v] = *f;
  return f;
}

FailureOr<AffineForm> Extractor::transfer(Operation *def) {
  auto cAdd = [&](Value a, Value b) -> Value {
    if (!a)
      return b;
    if (!b)
      return a;
    return pb.add(a, b);
  };
  auto features = [](Value v) { return PrimitiveBuilder::shape(v).back(); };
  return llvm::TypeSwitch<Operation *, FailureOr<AffineForm>>(def)
      .Case([&](LinearOp lin) -> FailureOr<AffineForm> {
        FailureOr<AffineForm> u = form(lin.getInput());
        FailureOr<Value> w = constant(lin.getWeight());
        if (failed(u) || failed(w))
          return failure();
        AffineForm r;
        r.features = features(lin.getResult());
        r.a = u->a ? pb.matmul(*w, u->a) : *w;
        bool wPer = perExpertConstant.lookup(lin.getWeight());
        if (u->c)
          r.c = pb.reshape(pb.matmul(*w, pb.reshape(u->c, {u->features, 1})),
                           {r.features});
        r.perExpert = u->c && (u->perExpert || wPer);
        if (Value b = lin.getBias()) {
          FailureOr<Value> bias = constant(b);
          if (failed(bias))
            return failure();
          r.c = cAdd(r.c, *bias);
          r.perExpert |= perExpertConstant.lookup(b);
        }
        return r;
      })
      .Case([&](MatmulOp mm) -> FailureOr<AffineForm> {
        // Rows of x times W (F, o), or W (o, F) with transpose_rhs: the
        // map W^T (or W) of each row.
        FailureOr<AffineForm> u = form(mm.getLhs());
        FailureOr<Value> w = constant(mm.getRhs());
        if (failed(u) || failed(w))
          return failure();
        bool t = mm.getTransposeRhs();
        AffineForm r;
        r.features = features(mm.getResult());
        if (u->a)
          r.a = pb.matmul(*w, u->a, /*transposeA=*/!t);
        else
          r.a = t ? *w : pb.transpose(*w, {1, 0});
        if (u->c) {
          r.c = pb.reshape(pb.matmul(*w, pb.reshape(u->c, {u->features, 1}),
                                     /*transposeA=*/!t),
                           {r.features});
          r.perExpert = u->perExpert || perExpertConstant.lookup(mm.getRhs());
        }
        return r;
      })
      .Case<AddOp, SubOp>([&](Operation *) -> FailureOr<AffineForm> {
        Value lhs = def->getOperand(0), rhs = def->getOperand(1);
        bool sub = isa<SubOp>(def);
        int64_t f = features(def->getResult(0));
        AffineForm r;
        r.features = f;
        auto spread = [&](Value m, int64_t from) {
          return from == f ? m : pb.broadcastTo(m, {f, d});
        };
        auto spreadVec = [&](Value c, int64_t from) {
          return from == f ? c : pb.broadcastTo(c, {f});
        };
        SmallVector<std::pair<AffineForm, bool>> terms; // (form, negated)
        Value operands[] = {lhs, rhs};
        for (auto [i, v] : llvm::enumerate(operands)) {
          bool negate = sub && i == 1;
          if (isX(v)) {
            FailureOr<AffineForm> u = form(v);
            if (failed(u))
              return failure();
            terms.push_back({*u, negate});
            continue;
          }
          FailureOr<Value> vec = featureVector(v, f);
          if (failed(vec))
            return fail(def, "adds a constant the extraction cannot read as "
                             "one vector for every token");
          AffineForm cf;
          cf.c = *vec;
          cf.features = f;
          cf.perExpert = perExpertConstant.lookup(v);
          cf.a = Value();
          terms.push_back({cf, negate});
          terms.back().first.features = -1; // a constant: no A
        }
        for (auto &[t, negate] : terms) {
          if (t.features != -1) {
            Value m = spread(matrix(t), t.features);
            if (negate)
              m = pb.neg(m);
            r.a = r.a ? pb.add(r.a, m) : m;
          }
          if (t.c) {
            Value c = spreadVec(t.c, t.features == -1 ? f : t.features);
            if (negate)
              c = pb.neg(c);
            r.c = cAdd(r.c, c);
            r.perExpert |= t.perExpert;
          }
        }
        return r;
      })
      .Case<MulOp, DivOp>([&](Operation *) -> FailureOr<AffineForm> {
        Value lhs = def->getOperand(0), rhs = def->getOperand(1);
        bool lhsX = isX(lhs);
        if (isa<DivOp>(def) && !lhsX)
          return fail(def, "divides by a value that depends on x");
        Value xv = lhsX ? lhs : rhs, sv = lhsX ? rhs : lhs;
        FailureOr<AffineForm> u = form(xv);
        int64_t f = features(def->getResult(0));
        if (failed(u))
          return failure();
        FailureOr<Value> s = featureVector(sv, f);
        if (failed(s))
          return fail(def, "scales by a constant the extraction cannot read "
                           "as one vector for every token");
        Value m = matrix(*u);
        if (u->features != f)
          m = pb.broadcastTo(m, {f, d});
        Value col = pb.reshape(*s, {f, 1});
        AffineForm r;
        r.features = f;
        r.a = isa<DivOp>(def) ? pb.div(m, col) : pb.mul(m, col);
        if (u->c) {
          Value c = u->features == f ? u->c : pb.broadcastTo(u->c, {f});
          r.c = isa<DivOp>(def) ? pb.div(c, *s) : pb.mul(c, *s);
          r.perExpert = u->perExpert || perExpertConstant.lookup(sv);
        }
        return r;
      })
      .Case([&](ReduceSumOp sum) -> FailureOr<AffineForm> {
        // The sum of each token's features: the rows of A and c summed.
        FailureOr<AffineForm> u = form(sum.getInput());
        if (failed(u))
          return failure();
        AffineForm r = *u;
        r.features = 1;
        r.a = pb.reduceSum(matrix(*u), {0});
        if (u->c)
          r.c = pb.reduceSum(u->c, {0});
        return r;
      })
      .Case([&](NegOp neg) -> FailureOr<AffineForm> {
        FailureOr<AffineForm> u = form(neg.getInput());
        if (failed(u))
          return failure();
        AffineForm r = *u;
        r.a = pb.neg(matrix(*u));
        if (u->c)
          r.c = pb.neg(u->c);
        return r;
      })
      .Case<StopGradientOp, ReshapeOp, tensor::CollapseShapeOp,
            tensor::ExpandShapeOp>([&](Operation *) {
        // Each token's row is unchanged (the prover checked the layout).
        return form(def->getOperand(0));
      })
      .Default([&](Operation *) -> FailureOr<AffineForm> {
        return fail(def, "is not an op the extraction knows");
      });
}

FailureOr<AffineForm> Extractor::expert(int64_t expertIndex) {
  k = expertIndex;
  constants.clear();
  perExpertConstant.clear();
  forms.clear();
  FailureOr<AffineForm> f =
      form(cast<YieldOp>(block.getTerminator()).getValue());
  if (failed(f))
    return failure();
  AffineForm r = *f;
  r.a = matrix(*f);
  return r;
}

FailureOr<ExtractedExperts>
mlir::mix::extractKernels(OpBuilder &b, MixtureOp op, std::string &why) {
  Extractor ex(b, op);
  PrimitiveBuilder pb(b, op.getLoc());
  int64_t n = PrimitiveBuilder::shape(op.getGate()).back();
  ArrayRef<int64_t> out = PrimitiveBuilder::shape(op.getResult());
  int64_t f = out.back(), d = PrimitiveBuilder::shape(op.getInput()).back();
  SmallVector<AffineForm> experts;
  for (int64_t k = 0; k < n; ++k) {
    FailureOr<AffineForm> e = ex.expert(k);
    if (failed(e)) {
      why = ex.why;
      return failure();
    }
    experts.push_back(*e);
  }
  ExtractedExperts r;
  for (const AffineForm &e : experts) {
    Value kk = pb.reshape(e.a, {1, f, d});
    r.kernels = r.kernels ? pb.concat(r.kernels, kk, 0) : kk;
  }
  bool anyBias = llvm::any_of(
      experts, [](const AffineForm &e) { return static_cast<bool>(e.c); });
  if (!anyBias)
    return r;
  bool shared =
      llvm::none_of(experts, [](const AffineForm &e) { return e.perExpert; });
  if (shared) {
    r.sharedBias = experts[0].c;
    return r;
  }
  for (const AffineForm &e : experts) {
    Value c = e.c ? e.c : pb.splat({f}, 0.0);
    c = pb.reshape(c, {1, f});
    r.bias = r.bias ? pb.concat(r.bias, c, 0) : c;
  }
  return r;
}
