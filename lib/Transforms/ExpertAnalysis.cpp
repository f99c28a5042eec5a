//===- ExpertAnalysis.cpp - Is a mixture a dynamic convolution? -----------===//
//
// Abstract interpretation of mixture experts over the lattice of
// XDependence, with each expert's token layout checked op by op.
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/ExpertAnalysis.h"

#include "Counterexamples.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

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
// The abstract interpretation of a region
//===----------------------------------------------------------------------===//

/// The number of tokens of an activation: the product of its leading
/// dimensions (its last dimension holds a token's features).
static int64_t tokensOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 0)
    return -1;
  int64_t n = 1;
  for (int64_t s : type.getShape().drop_back())
    n *= s;
  return n;
}

/// Whether \p v, combined elementwise into \p result, is the same at every
/// token position: size 1 along every token dimension, or a splat.
static bool isTokenInvariant(Value v, Value result) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  if (llvm::all_of(shape.take_front(std::max<int64_t>(rank - 1, 0)),
                   [](int64_t s) { return s == 1; }))
    return true;
  DenseElementsAttr attr;
  return matchPattern(v, m_Constant(&attr)) && attr.isSplat();
}

namespace {
/// The analysis of one region-defined mixture. Every value is classified
/// by how it depends on the mixture input x. A value that depends on x must
/// moreover be an activation laid out as x is: one row of features (its
/// last dimension) per token, the tokens in x's order, each row computed
/// from that token's row of x alone with weights that are the same at every
/// position. Each op that combines values is checked to keep that: an op
/// that moves data across tokens, multiplies by or adds a constant that
/// varies along them, or takes a weight from x ends the proof, and is named.
class RegionAnalysis {
public:
  RegionAnalysis(MixtureOp op) : op(op), tokens(tokensOf(op.getInput())) {}

  /// Classifies the yielded value; sets `culprit` and `reason` when it is
  /// not affine in x.
  XDependence run();

  /// Whether the constant part of the yielded value depends on the experts'
  /// own weights (rather than only on values shared by all experts).
  bool biasPerExpert = false;
  Operation *culprit = nullptr;
  std::string reason;

private:
  struct Info {
    XDependence dep = XDependence::Constant;
    /// For Constant: depends on an expert's own weight slices. For Affine:
    /// the constant part does.
    bool perExpert = false;
  };

  Info lookup(Value v);
  Info transfer(Operation *nested);
  Info transferAffine(Operation *nested, ArrayRef<Info> in);
  Info fail(Operation *nested, XDependence dep, std::string why);
  /// Fails unless \p v, an activation, has one row per token of x.
  bool checkLayout(Operation *nested, Value v);

  MixtureOp op;
  int64_t tokens;
  llvm::DenseMap<Value, Info> info;
};
} // namespace

RegionAnalysis::Info RegionAnalysis::fail(Operation *nested, XDependence dep,
                                          std::string why) {
  if (!culprit) {
    culprit = nested;
    reason = std::move(why);
  }
  return {dep, false};
}

bool RegionAnalysis::checkLayout(Operation *nested, Value v) {
  if (tokensOf(v) == tokens)
    return true;
  fail(nested, XDependence::Nonlinear,
       llvm::formatv("expert is not a 1x1 convolution: `{0}` moves data "
                     "across token positions (its result does not keep one "
                     "row of features per token of x)",
                     nested->getName().getStringRef())
           .str());
  return false;
}

RegionAnalysis::Info RegionAnalysis::lookup(Value v) {
  auto it = info.find(v);
  if (it != info.end())
    return it->second;
  // Defined above the mixture: shared by all experts. The mixture's input
  // is x itself; what is computed from it is analysed as region values are.
  Info r{XDependence::Constant, false};
  Operation *def = v.getDefiningOp();
  if (def && op->isProperAncestor(def)) {
    // A value of the expert, analysed when the yielded value needs it.
    r = transfer(def);
  } else if (v == op.getInput()) {
    r = {XDependence::Linear, false};
  } else if (dependsOn(v, op.getInput())) {
    r = def ? transfer(def)
            : fail(op, XDependence::Nonlinear,
                   "expert is not known to be linear in x: it uses a value "
                   "the prover cannot trace to x");
  }
  info[v] = r;
  return r;
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

  if (nested->getNumRegions() != 0 && worst != XDependence::Constant)
    return fail(nested, XDependence::Nonlinear,
                "expert is not known to be linear in x: " + where +
                    " has regions the prover does not analyse");
  // Anything computed from the expert's weights alone is a weight.
  if (worst == XDependence::Constant)
    return {XDependence::Constant, anyPerExpert};
  if (worst == XDependence::Weight)
    return fail(nested, XDependence::Weight,
                "expert weights are not independent of x: " + where +
                    " uses a weight computed from the mixture input");
  if (worst == XDependence::Nonlinear)
    return {XDependence::Nonlinear, false};
  return transferAffine(nested, in);
}

/// An op with at least one operand affine in x (and none worse).
RegionAnalysis::Info RegionAnalysis::transferAffine(Operation *nested,
                                                    ArrayRef<Info> in) {
  std::string where =
      llvm::formatv("`{0}`", nested->getName().getStringRef()).str();
  auto isX = [](Info i) { return i.dep != XDependence::Constant; };
  // An operand combined elementwise with an activation: an activation of
  // the result's tokens, or a constant that is the same at every position.
  auto checkElementwise = [&]() -> bool {
    Value result = nested->getResult(0);
    if (!checkLayout(nested, result))
      return false;
    for (auto [v, i] : llvm::zip(nested->getOperands(), in)) {
      ArrayRef<int64_t> s = cast<RankedTensorType>(v.getType()).getShape();
      ArrayRef<int64_t> r = cast<RankedTensorType>(result.getType()).getShape();
      if (isX(i)) {
        if (s.drop_back() != r.drop_back()) {
          fail(nested, XDependence::Nonlinear,
               "expert is not a 1x1 convolution: " + where +
                   " broadcasts a value that depends on x across token "
                   "positions");
          return false;
        }
        continue;
      }
      if (!isTokenInvariant(v, result)) {
        fail(nested, XDependence::Nonlinear,
             "expert is not a 1x1 convolution: " + where +
                 " combines x with a constant that varies along the token "
                 "positions, so the kernel would depend on the position");
        return false;
      }
    }
    return true;
  };

  return llvm::TypeSwitch<Operation *, Info>(nested)
      .Case([&](LinearOp lin) -> Info {
        Info x = in[0], w = in[1];
        if (isX(w))
          return fail(nested, XDependence::Nonlinear,
                      "expert weights are not independent of x: the weight "
                      "operand of " +
                          where + " is computed from the mixture input");
        if (in.size() > 2 && isX(in[2]))
          return fail(nested, XDependence::Nonlinear,
                      "expert is not linear in x: the bias of " + where +
                          " depends on x");
        if (!checkLayout(nested, lin.getInput()))
          return {XDependence::Nonlinear, false};
        bool hasBias = in.size() > 2;
        bool per =
            (x.dep == XDependence::Affine && (x.perExpert || w.perExpert)) ||
            (hasBias && in[2].perExpert);
        if (!hasBias && x.dep == XDependence::Linear)
          return {XDependence::Linear, false};
        return {XDependence::Affine, per};
      })
      .Case([&](MatmulOp mm) -> Info {
        // x (B*S, F) times a weight (F, o), or (o, F) transposed: a linear
        // map of each token's row, like mix.linear.
        Info lhs = in[0], rhs = in[1];
        if (isX(rhs))
          return fail(nested, XDependence::Nonlinear,
                      "expert weights are not independent of x: the right "
                      "operand of " +
                          where + " is computed from the mixture input");
        if (mm.getType().getRank() != 2 || mm.getTransposeLhs())
          return fail(nested, XDependence::Nonlinear,
                      "expert is not a 1x1 convolution: " + where +
                          " multiplies a value of x other than as rows of "
                          "tokens by one weight matrix (a batched or "
                          "transposed product moves data across tokens or "
                          "applies different weights to them)");
        if (!checkLayout(nested, mm.getLhs()))
          return {XDependence::Nonlinear, false};
        return {lhs.dep, lhs.dep == XDependence::Affine &&
                             (lhs.perExpert || rhs.perExpert)};
      })
      .Case<AddOp, SubOp>([&](Operation *) -> Info {
        if (!checkElementwise())
          return {XDependence::Nonlinear, false};
        XDependence dep = joinAdd(in[0].dep, in[1].dep);
        bool per = false;
        for (Info i : in)
          if (i.dep == XDependence::Constant || i.dep == XDependence::Affine)
            per |= i.perExpert;
        return {dep, per};
      })
      .Case<MulOp, DivOp>([&](Operation *) -> Info {
        Info a = in[0], b = in[1];
        if (isX(a) && isX(b))
          return fail(nested, XDependence::Nonlinear,
                      "expert is not linear in x: " + where +
                          " multiplies two values that depend on x (a "
                          "factor that depends on the token is not part of "
                          "a kernel; folded into the gate, g'_k = s g_k, it "
                          "would be, but this rewrite does not do that)");
        if (isa<DivOp>(nested) && isX(b))
          return fail(nested, XDependence::Nonlinear,
                      "expert is not linear in x: " + where +
                          " divides by a value that depends on x");
        if (!checkElementwise())
          return {XDependence::Nonlinear, false};
        Info lin = isX(a) ? a : b, scale = isX(a) ? b : a;
        bool per = lin.dep == XDependence::Affine &&
                   (lin.perExpert || scale.perExpert);
        return {lin.dep, per};
      })
      .Case([&](ReduceSumOp sum) -> Info {
        // A sum over each token's features alone is a linear map of it.
        int64_t last = sum.getInput().getType().getRank() - 1;
        if (sum.getDims() != ArrayRef<int64_t>{last})
          return fail(nested, XDependence::Nonlinear,
                      "expert is not a 1x1 convolution: " + where +
                          " sums a value of x over token positions");
        if (!checkLayout(nested, sum.getInput()))
          return {XDependence::Nonlinear, false};
        return in[0];
      })
      .Case<NegOp, StopGradientOp>([&](Operation *) { return in[0]; })
      .Case<ReshapeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
          [&](Operation *) -> Info {
            if (!checkLayout(nested, nested->getResult(0)))
              return {XDependence::Nonlinear, false};
            return in[0];
          })
      .Case<ReluOp, GeluOp, SigmoidOp, TanhOp, SiluOp, ExpOp, LogOp, SqrtOp,
            RsqrtOp, StepOp, MaxOp>([&](Operation *) {
        return fail(nested, XDependence::Nonlinear,
                    "expert is not linear in x: " + where +
                        " is a nonlinearity applied to a value that depends "
                        "on x (Corollary 4.2: its data-dependent mask does "
                        "not commute with the gate-weighted sum of kernels)");
      })
      .Case<PrefixMeanOp, AttentionOp, CumsumOp>([&](Operation *) {
        return fail(nested, XDependence::Nonlinear,
                    "expert is not a 1x1 convolution: " + where +
                        " mixes information across tokens");
      })
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
  // Only what the yielded value is computed from matters: the ops are
  // analysed from it backwards, each once.
  Value yielded = cast<YieldOp>(block.getTerminator()).getValue();
  Info out = lookup(yielded);
  if (out.dep == XDependence::Weight && !culprit)
    fail(op, XDependence::Weight,
         "expert weights are not independent of x: the expert yields a value "
         "computed from the mixture input");
  if ((out.dep == XDependence::Linear || out.dep == XDependence::Affine) &&
      tokensOf(yielded) != tokens)
    fail(op, XDependence::Nonlinear,
         "expert is not a 1x1 convolution: it does not yield one row of "
         "features per token of x");
  if (culprit && out.dep != XDependence::Constant)
    out.dep = XDependence::Nonlinear;
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
static const char *kPerTokenFact =
    "experts act on each token alone, with the same weights at every "
    "position";
static const char *kGateSummedFact =
    "the shared bias leaves the mixture as (sum_k g_k) c, the convolution's "
    "gate-summed bias (the gate rows need not sum to one)";

/// The fact that lets a shared bias through the mixture: unchanged behind
/// a gate whose rows sum to one, gate-summed otherwise.
static void addSharedBiasFact(MixtureOp op, ExpertVerdict &v) {
  v.sharedBias = true;
  if (!gateRowsSumToOne(op.getGate())) {
    v.facts.push_back(kGateSummedFact);
    return;
  }
  v.gateRowsSumToOne = true;
  v.facts.push_back(
      op.getGate().getDefiningOp<GateOp>()
          ? "gate rows sum to one (a softmax mix.gate), so the shared bias "
            "passes through sum_k g_k unchanged"
          : "gate rows sum to one (a constant gate whose rows each sum to "
            "one), so the shared bias passes through sum_k g_k unchanged");
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
    v.culprit = w.getDefiningOp();
    return v;
  }
  if (op.getSharedBias()) {
    v.facts.push_back(kSharedFact);
  } else {
    v.facts.push_back(op.getBias() ? kAffineFact : kLinearFact);
  }
  v.facts.push_back(kIndependentFact);
  if (op.getSharedBias())
    addSharedBiasFact(op, v);
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
    return v;
  }
  bool shared = dep == XDependence::Affine && !analysis.biasPerExpert;
  if (dep == XDependence::Linear)
    v.facts.push_back(kLinearFact);
  else
    v.facts.push_back(shared ? kSharedFact : kAffineFact);
  v.facts.push_back(kIndependentFact);
  v.facts.push_back(kPerTokenFact);
  if (shared)
    addSharedBiasFact(op, v);
  v.proved = true;
  return v;
}

ExpertVerdict mlir::mix::analyzeMixture(MixtureOp op) {
  ExpertVerdict v =
      op.hasExpertRegion() ? analyzeRegion(op) : analyzeStacked(op);
  if (v.proved)
    return v;
  Counterexample c = findCounterexample(op);
  (c.found ? v.counterexample : v.searchNote) = c.text;
  return v;
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
    else if (!verdict.searchNote.empty())
      entries.push_back(b.getNamedAttr("counterexample_search",
                                       b.getStringAttr(verdict.searchNote)));
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
