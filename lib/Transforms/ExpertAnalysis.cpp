//===- ExpertAnalysis.cpp - Is a mixture a dynamic convolution? -----------===//
//
// Abstract interpretation of mixture experts over the lattice of
// XDependence, and the counterexamples that go with a refusal.
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/ExpertAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::mix;

bool mlir::mix::dependsOn(Value value, Value root) {
  SmallVector<Value> worklist{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (v == root)
      return true;
    Operation *def = v.getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
    // Values a region uses from above count as inputs of its op.
    def->walk([&](Operation *nested) {
      if (nested == def)
        return;
      for (Value operand : nested->getOperands())
        if (!def->isProperAncestor(operand.getParentBlock()->getParentOp()) &&
            operand.getParentBlock()->getParentOp() != def)
          worklist.push_back(operand);
    });
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Counterexamples
//===----------------------------------------------------------------------===//

namespace {
using ScalarFn = std::function<double(double)>;

/// The scalar function an elementwise activation computes, if known.
ScalarFn activationOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, ScalarFn>(op)
      .Case([](ReluOp) { return [](double u) { return u > 0 ? u : 0.0; }; })
      .Case([](GeluOp) {
        return [](double u) {
          return 0.5 * u *
                 (1 +
                  std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u)));
        };
      })
      .Case([](SigmoidOp) {
        return [](double u) { return 1 / (1 + std::exp(-u)); };
      })
      .Case([](TanhOp) { return [](double u) { return std::tanh(u); }; })
      .Case([](SiluOp) {
        return [](double u) { return u / (1 + std::exp(-u)); };
      })
      .Default([](Operation *) { return ScalarFn(); });
}

/// A counterexample for an expert E_k(x) = phi(w_k x): with two experts, an
/// even gate and scalar weights, `sum_k g_k phi(w_k x)` against the dynamic
/// convolution with the mixed kernel, `phi((sum_k g_k w_k) x)`.
std::string activationCounterexample(StringRef name, const ScalarFn &phi) {
  const double candidates[][3] = {{1, -1, 1}, {2, 0, 1}, {1, 3, 1}};
  for (const auto &c : candidates) {
    double w0 = c[0], w1 = c[1], x = c[2];
    double moe = 0.5 * phi(w0 * x) + 0.5 * phi(w1 * x);
    double conv = phi((0.5 * w0 + 0.5 * w1) * x);
    if (std::abs(moe - conv) > 1e-3)
      return llvm::formatv(
          "N=2, d=f=1, g=(0.5, 0.5), kernels w=({0}, {1}), x={2}: the "
          "mixture sum_k g_k {3}(w_k x) = {4:f4}, but the dynamic convolution "
          "{3}((sum_k g_k w_k) x) = {5:f4}",
          w0, w1, x, name, moe, conv);
  }
  return "";
}

/// The analysis of one region-defined mixture.
class RegionAnalysis {
public:
  RegionAnalysis(MixtureOp op) : op(op) {}

  /// Classifies the yielded value; sets `culprit`, `reason` and
  /// `counterexample` when it is not affine.
  XDependence run();

  /// Whether the constant part of the yielded value depends on the experts'
  /// own weights (rather than only on values shared by all experts).
  bool biasPerExpert = false;
  Operation *culprit = nullptr;
  std::string reason, counterexample;

private:
  struct Info {
    XDependence dep = XDependence::Constant;
    /// For Constant: depends on an expert's own weight slices. For Affine:
    /// the constant part does.
    bool perExpert = false;
  };

  Info lookup(Value v);
  Info transfer(Operation *nested);
  Info fail(Operation *nested, XDependence dep, std::string why,
            std::string example = "");

  MixtureOp op;
  llvm::DenseMap<Value, Info> info;
};
} // namespace

RegionAnalysis::Info RegionAnalysis::fail(Operation *nested, XDependence dep,
                                          std::string why,
                                          std::string example) {
  if (!culprit) {
    culprit = nested;
    reason = std::move(why);
    counterexample = std::move(example);
  }
  return {dep, false};
}

RegionAnalysis::Info RegionAnalysis::lookup(Value v) {
  auto it = info.find(v);
  if (it != info.end())
    return it->second;
  // Defined above the mixture: shared by all experts.
  if (dependsOn(v, op.getInput()))
    return {XDependence::Weight, false};
  return {XDependence::Constant, false};
}

/// The join of two classes under addition.
static XDependence joinAdd(XDependence a, XDependence b) {
  if (a < b)
    std::swap(a, b);
  if (a >= XDependence::Weight)
    return a;
  if (a == XDependence::Linear && b == XDependence::Constant)
    return XDependence::Affine;
  return a;
}

RegionAnalysis::Info RegionAnalysis::transfer(Operation *nested) {
  SmallVector<Info> in;
  for (Value v : nested->getOperands())
    in.push_back(lookup(v));
  bool anyPerExpert = llvm::any_of(in, [](Info i) { return i.perExpert; });
  auto worst = XDependence::Constant;
  for (Info i : in)
    worst = std::max(worst, i.dep);
  std::string where =
      llvm::formatv("`{0}`", nested->getName().getStringRef()).str();

  // Anything computed from the expert's weights alone is a weight.
  if (worst == XDependence::Constant)
    return {XDependence::Constant, anyPerExpert};
  if (worst == XDependence::Weight)
    return fail(nested, XDependence::Weight,
                "expert weights are not independent of x: " + where +
                    " uses a value computed from the mixture input",
                "d=f=N=1 with the kernel computed from x as K = x: the mixture "
                "is x^2, which is 1 at x=1 and 4 at x=2; a convolution whose "
                "kernel is independent of x is linear and would give 2");
  if (worst == XDependence::Nonlinear)
    return {XDependence::Nonlinear, false};

  return llvm::TypeSwitch<Operation *, Info>(nested)
      .Case([&](LinearOp lin) -> Info {
        Info x = in[0], w = in[1];
        Info b = in.size() > 2 ? in[2] : Info{};
        if (w.dep != XDependence::Constant && x.dep != XDependence::Constant)
          return fail(nested, XDependence::Nonlinear,
                      "expert is not linear in x: " + where +
                          " multiplies two values that depend on x");
        if (b.dep != XDependence::Constant)
          return fail(nested, XDependence::Nonlinear,
                      "expert is not linear in x: the bias of " + where +
                          " depends on x");
        Info lin1 = x.dep != XDependence::Constant ? x : w;
        bool hasBias = in.size() > 2;
        if (!hasBias)
          return lin1;
        if (lin1.dep == XDependence::Linear)
          return {XDependence::Affine, b.perExpert};
        return {XDependence::Affine, lin1.perExpert || b.perExpert};
      })
      .Case<AddOp, SubOp>([&](Operation *) -> Info {
        XDependence dep = joinAdd(in[0].dep, in[1].dep);
        bool per = false;
        for (Info i : in)
          if (i.dep == XDependence::Constant || i.dep == XDependence::Affine)
            per |= i.perExpert;
        return {dep, per};
      })
      .Case([&](MulOp) -> Info {
        Info a = in[0], b = in[1];
        if (a.dep != XDependence::Constant && b.dep != XDependence::Constant)
          return fail(
              nested, XDependence::Nonlinear,
              "expert is not linear in x: " + where +
                  " multiplies two values that depend on x",
              "N=2, d=f=1, g=(0.5, 0.5), kernels w=(1, -1), x=1: the mixture "
              "sum_k g_k (w_k x)^2 = 1, but the dynamic convolution "
              "((sum_k g_k w_k) x)^2 = 0");
        Info lin1 = a.dep != XDependence::Constant ? a : b;
        Info scale = a.dep != XDependence::Constant ? b : a;
        return {lin1.dep, lin1.perExpert || scale.perExpert};
      })
      .Case<ReluOp, GeluOp, SigmoidOp, TanhOp, SiluOp>([&](Operation *) {
        std::string name = nested->getName().stripDialect().str();
        return fail(nested, XDependence::Nonlinear,
                    "expert is not linear in x: " + where +
                        " is a nonlinearity applied to a value that depends "
                        "on x (Corollary 4.2: its data-dependent mask does "
                        "not commute with the gate-weighted sum of kernels)",
                    activationCounterexample(name, activationOf(nested)));
      })
      .Case<PrefixMeanOp, AttentionOp>([&](Operation *) {
        return fail(nested, XDependence::Nonlinear,
                    "expert is not a 1x1 convolution: " + where +
                        " mixes information across tokens");
      })
      .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
          [&](Operation *) { return in[0]; })
      .Default([&](Operation *) {
        return fail(nested, XDependence::Nonlinear,
                    "expert is not known to be linear in x: " + where +
                        " is not an op the prover understands");
      });
}

XDependence RegionAnalysis::run() {
  Block &block = op.getBody().front();
  info[block.getArgument(0)] = {XDependence::Linear, false};
  for (auto [i, w] : llvm::enumerate(op.getExpertWeights())) {
    Info slice = {XDependence::Constant, true};
    if (dependsOn(w, op.getInput()))
      slice = {XDependence::Weight, false};
    info[block.getArgument(i + 1)] = slice;
  }
  for (Operation &nested : block.without_terminator()) {
    if (nested.getNumRegions() != 0) {
      Info r = fail(&nested, XDependence::Nonlinear,
                    "expert is not known to be linear in x: `" +
                        nested.getName().getStringRef().str() +
                        "` has regions the prover does not analyse");
      for (Value res : nested.getResults())
        info[res] = r;
      continue;
    }
    Info r = transfer(&nested);
    for (Value res : nested.getResults())
      info[res] = r;
  }
  Value yielded = cast<YieldOp>(block.getTerminator()).getValue();
  Info out = lookup(yielded);
  if (out.dep == XDependence::Weight && !culprit)
    fail(op, XDependence::Weight,
         "expert weights are not independent of x: the expert yields a value "
         "computed from the mixture input");
  biasPerExpert = out.perExpert;
  return out.dep;
}

//===----------------------------------------------------------------------===//
// The verdict
//===----------------------------------------------------------------------===//

static const char *kLinearFact = "each expert is linear in x: E_k(x) = x K_k^T";
static const char *kAffineFact =
    "each expert is affine in x with its own bias: E_k(x) = x K_k^T + b_k, "
    "and sum_k g_k b_k is the mixed bias";
static const char *kSharedFact =
    "each expert is affine in x with one shared bias: E_k(x) = x K_k^T + c";
static const char *kIndependentFact = "expert weights are independent of x";
static const char *kSumToOneFact =
    "gate rows sum to one (softmax), so the shared bias passes through "
    "sum_k g_k unchanged";
static const char *kPerTokenFact = "experts act on each token alone";

static const char *kSharedBiasCounterexample =
    "N=2, d=f=1, kernels (1, 1), shared bias c=1, x=1, g=(0.5, 0.25) "
    "(sigmoid(0), sigmoid(-ln 3)): the mixture sum_k g_k (K_k x + c) = 1.5, "
    "but the dynamic convolution (sum_k g_k K_k) x + c = 1.75";

/// Refuses a shared bias unless the gate is known to be normalised.
static bool checkSharedBias(MixtureOp op, ExpertVerdict &v) {
  v.sharedBias = true;
  if (gateRowsSumToOne(op.getGate())) {
    v.facts.push_back(kSumToOneFact);
    return true;
  }
  auto gate = op.getGate().getDefiningOp<GateOp>();
  v.reason = std::string("a bias shared by all experts must pass through "
                         "sum_k g_k unchanged, but the gate rows do not sum "
                         "to one") +
             (gate ? " (it is a sigmoid gate)"
                   : " (they are not known to: the gate is not a softmax "
                     "mix.gate)");
  v.counterexample = kSharedBiasCounterexample;
  return false;
}

static ExpertVerdict analyzeStacked(MixtureOp op) {
  ExpertVerdict v;
  Value x = op.getInput();
  for (auto [name, w] :
       {std::pair<StringRef, Value>{"kernels", op.getKernels()},
        {"bias", op.getBias()},
        {"shared_bias", op.getSharedBias()}}) {
    if (!w || !dependsOn(w, x))
      continue;
    v.reason = ("expert weights are not independent of x: the " + name +
                " are computed from the mixture input")
                   .str();
    v.counterexample =
        "d=f=N=1 with the kernel computed from x as K = x: the mixture is "
        "x^2, which is 1 at x=1 and 4 at x=2; a convolution whose kernel is "
        "independent of x is linear and would give 2";
    v.culprit = w.getDefiningOp();
    return v;
  }
  if (op.getSharedBias()) {
    v.facts.push_back(kSharedFact);
  } else {
    v.facts.push_back(op.getBias() ? kAffineFact : kLinearFact);
  }
  v.facts.push_back(kIndependentFact);
  if (op.getSharedBias() && !checkSharedBias(op, v))
    return v;
  v.proved = true;
  return v;
}

static ExpertVerdict analyzeRegion(MixtureOp op) {
  ExpertVerdict v;
  RegionAnalysis analysis(op);
  XDependence dep = analysis.run();
  if (dep != XDependence::Linear && dep != XDependence::Affine) {
    v.culprit = analysis.culprit;
    v.reason = dep == XDependence::Constant
                   ? "expert is not linear in x: it does not depend on x, so "
                     "it is a constant, not a convolution of x"
                   : analysis.reason;
    v.counterexample = analysis.counterexample;
    return v;
  }
  bool shared = dep == XDependence::Affine && !analysis.biasPerExpert;
  if (dep == XDependence::Linear)
    v.facts.push_back(kLinearFact);
  else
    v.facts.push_back(shared ? kSharedFact : kAffineFact);
  v.facts.push_back(kIndependentFact);
  v.facts.push_back(kPerTokenFact);
  if (shared && !checkSharedBias(op, v))
    return v;
  v.proved = true;
  return v;
}

ExpertVerdict mlir::mix::analyzeMixture(MixtureOp op) {
  return op.hasExpertRegion() ? analyzeRegion(op) : analyzeStacked(op);
}

void mlir::mix::recordVerdict(MixtureOp op, const ExpertVerdict &verdict) {
  Builder b(op.getContext());
  SmallVector<NamedAttribute> entries;
  entries.push_back(b.getNamedAttr(
      "status", b.getStringAttr(verdict.proved ? "proved" : "refused")));
  if (verdict.proved) {
    SmallVector<Attribute> facts;
    for (const std::string &f : verdict.facts)
      facts.push_back(b.getStringAttr(f));
    entries.push_back(b.getNamedAttr("facts", b.getArrayAttr(facts)));
  } else {
    entries.push_back(
        b.getNamedAttr("reason", b.getStringAttr(verdict.reason)));
    if (!verdict.counterexample.empty())
      entries.push_back(b.getNamedAttr(
          "counterexample", b.getStringAttr(verdict.counterexample)));
  }
  op->setAttr(kProofAttrName, b.getDictionaryAttr(entries));
}

bool mlir::mix::isProved(MixtureOp op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kProofAttrName);
  if (!dict)
    return false;
  auto status = dict.getAs<StringAttr>("status");
  return status && status.getValue() == "proved";
}
