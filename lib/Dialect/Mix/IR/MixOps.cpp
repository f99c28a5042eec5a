//===- MixOps.cpp - Verifiers of the mix dialect --------------------------===//
//
// Shape and attribute verifiers of the mix ops, with messages that name the
// operand and the expected shape, and the shared gate queries.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Dialect/Mix/IR/MixFusedOps.h"

#include "VerifyUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::detail;

#include "mix/Dialect/Mix/IR/MixEnums.cpp.inc"
#include "mix/Dialect/Mix/IR/MixInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "mix/Dialect/Mix/IR/MixOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> concat(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  SmallVector<int64_t> r(a);
  r.append(b.begin(), b.end());
  return r;
}

bool mlir::mix::isStaticNonEmpty(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         llvm::all_of(tensor.getShape(), [](int64_t d) { return d > 0; });
}

//===----------------------------------------------------------------------===//
// Gate queries
//===----------------------------------------------------------------------===//

/// The rows (last dimension) of a constant, as doubles; empty if `gate` is
/// not a dense float constant.
static bool constantRows(Value gate, SmallVectorImpl<double> &sums) {
  DenseFPElementsAttr attr;
  if (!matchPattern(gate, m_Constant(&attr)))
    return false;
  int64_t n = attr.getType().getShape().back();
  if (n == 0)
    return false;
  int64_t i = 0;
  double acc = 0;
  for (APFloat v : attr.getValues<APFloat>()) {
    acc += v.convertToDouble();
    if (++i % n == 0) {
      sums.push_back(acc);
      acc = 0;
    }
  }
  return true;
}

bool mlir::mix::gateRowsSumToOne(Value gate) {
  if (auto op = gate.getDefiningOp<GateOp>())
    return op.rowsSumToOne();
  SmallVector<double> sums;
  if (!constantRows(gate, sums))
    return false;
  return llvm::all_of(sums, [](double s) { return s == 1.0; });
}

bool mlir::mix::gateIsOne(Value gate) {
  if (shapeOf(gate).back() != 1)
    return false;
  return gateRowsSumToOne(gate);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::verify() { return verifyBroadcast(*this); }
LogicalResult SubOp::verify() { return verifyBroadcast(*this); }
LogicalResult MulOp::verify() { return verifyBroadcast(*this); }

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight());
  if (in.empty())
    return emitOpError("input must have rank >= 1");
  if (w.size() != 2)
    return emitOpError() << "weight must have shape (out, in), got "
                         << shapeStr(w);
  if (w[1] != in.back())
    return emitOpError() << "weight " << shapeStr(w) << " expects " << w[1]
                         << " input features, but the input has " << in.back();
  if (getBias() && failed(expectShape(*this, "bias", getBias(), {w[0]})))
    return failure();
  return expectShape(*this, "result", getResult(),
                     concat(in.drop_back(), {w[0]}));
}

LogicalResult EmbeddingOp::verify() {
  ArrayRef<int64_t> tok = shapeOf(getTokens()), wte = shapeOf(getWte()),
                    wpe = shapeOf(getWpe());
  if (tok.size() != 2)
    return emitOpError() << "tokens must have shape (B,S), got "
                         << shapeStr(tok);
  if (wte.size() != 2 || wpe.size() != 2)
    return emitOpError(
        "wte and wpe must be matrices (V,d) and (n_positions,d)");
  if (wte[1] != wpe[1])
    return emitOpError() << "wte has " << wte[1] << " features but wpe has "
                         << wpe[1];
  if (tok[1] > wpe[0])
    return emitOpError() << "sequence length " << tok[1] << " exceeds the "
                         << wpe[0] << " positions of wpe";
  return expectShape(*this, "result", getResult(), {tok[0], tok[1], wte[1]});
}

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.empty())
    return emitOpError("input must have rank >= 1");
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "eps must be positive, got "
                         << getEps().convertToDouble();
  if (failed(expectShape(*this, "weight", getWeight(), {in.back()})) ||
      failed(expectShape(*this, "bias", getBias(), {in.back()})))
    return failure();
  return expectShape(*this, "result", getResult(), in);
}

/// The sizes of an attention with a fused projection \p qkv and optional
/// prefixes, or an error at \p op naming what does not fit.
static FailureOr<AttentionShape> verifyAttention(Operation *op, Value qkv,
                                                 Value prefixK, Value prefixV,
                                                 int64_t heads) {
  if (!prefixK != !prefixV) {
    op->emitOpError("prefix_k and prefix_v must be given together");
    return failure();
  }
  std::optional<ArrayRef<int64_t>> prefixShape;
  if (prefixK)
    prefixShape = shapeOf(prefixK);
  FailureOr<AttentionShape> s =
      getAttentionShape(op, shapeOf(qkv), prefixShape, heads);
  if (failed(s) || (prefixV && failed(expectShape(op, "prefix_v", prefixV,
                                                  s->prefixShape()))))
    return failure();
  return s;
}

LogicalResult AttentionOp::verify() {
  FailureOr<AttentionShape> s =
      verifyAttention(*this, getQkv(), getPrefixK(), getPrefixV(), getHeads());
  if (failed(s))
    return failure();
  return expectShape(*this, "result", getResult(), s->resultShape());
}

LogicalResult CachedAttentionOp::verify() {
  FailureOr<AttentionShape> s =
      verifyAttention(*this, getQkv(), getPrefixK(), getPrefixV(), getHeads());
  if (failed(s))
    return failure();
  ArrayRef<int64_t> cache = shapeOf(getKCache());
  if (cache.size() != 4 || cache[0] != s->batch || cache[1] != s->heads ||
      cache[2] < s->seq || cache[3] != s->headDim)
    return emitOpError() << "k_cache must be (B, heads, K, dh) = (" << s->batch
                         << ", " << s->heads << ", K >= " << s->seq << ", "
                         << s->headDim << "), got " << shapeStr(cache);
  if (failed(expectShape(*this, "v_cache", getVCache(), cache)) ||
      failed(expectShape(*this, "new_k_cache", getNewKCache(), cache)) ||
      failed(expectShape(*this, "new_v_cache", getNewVCache(), cache)))
    return failure();
  return expectShape(*this, "result", getResult(), s->resultShape());
}

LogicalResult PrefixMeanOp::verify() {
  if (shapeOf(getInput()).size() != 3)
    return emitOpError() << "input must have shape (B,S,d), got "
                         << shapeStr(shapeOf(getInput()));
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  ArrayRef<int64_t> logits = shapeOf(getLogits());
  if (logits.size() != 3)
    return emitOpError() << "logits must have shape (B,S,V), got "
                         << shapeStr(logits);
  return expectShape(*this, "targets", getTargets(), logits.drop_back());
}

//===----------------------------------------------------------------------===//
// Gate
//===----------------------------------------------------------------------===//

LogicalResult GateOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight());
  if (in.empty())
    return emitOpError("input must have rank >= 1");
  int64_t d = in.back();
  GatingKind kind = getKind();
  StringRef kindName = stringifyGatingKind(kind);

  auto onlyFor = [&](Value v, StringRef what,
                     GatingKind allowed) -> LogicalResult {
    if (v && kind != allowed)
      return emitOpError() << what << " is only valid for "
                           << stringifyGatingKind(allowed) << " gates, not "
                           << kindName;
    if (!v && kind == allowed)
      return emitOpError() << kindName << " gates require " << what;
    return success();
  };
  if (!getNormWeight() != !getNormBias())
    return emitOpError("norm weight and norm bias must be given together");
  if (getEps() && kind != GatingKind::context_aware)
    return emitOpError() << "eps is only valid for context_aware gates, not "
                         << kindName;
  if (failed(onlyFor(getModulation(), "a modulation",
                     GatingKind::context_aware)) ||
      failed(onlyFor(getNormWeight(), "a norm(weight, bias)",
                     GatingKind::context_aware)) ||
      failed(onlyFor(getScale(), "a scale", GatingKind::adaptive)))
    return failure();

  if (kind == GatingKind::multi_head) {
    if (w.size() != 3)
      return emitOpError() << "multi_head weight must have shape (H,N,d/H), "
                              "got "
                           << shapeStr(w);
    int64_t heads = w[0], n = w[1];
    if (d % heads != 0)
      return emitOpError() << "input feature size " << d
                           << " is not divisible by " << heads << " gate heads";
    if (failed(
            expectShape(*this, "weight", getWeight(), {heads, n, d / heads})) ||
        failed(expectShape(*this, "bias", getBias(), {heads, n})))
      return failure();
    return expectShape(*this, "result", getResult(),
                       concat(in.drop_back(), {heads, n}));
  }

  if (w.size() != 2)
    return emitOpError() << kindName << " weight must have shape (N,d), got "
                         << shapeStr(w);
  if (failed(expectShape(*this, "weight", getWeight(), {w[0], d})) ||
      failed(expectShape(*this, "bias", getBias(), {w[0]})))
    return failure();
  if (kind == GatingKind::context_aware) {
    if (failed(expectShape(*this, "modulation", getModulation(), in)) ||
        failed(expectShape(*this, "norm weight", getNormWeight(), {d})) ||
        failed(expectShape(*this, "norm bias", getNormBias(), {d})))
      return failure();
    if (!getEps() || !(getEps()->convertToDouble() > 0))
      return emitOpError("context_aware gates require a positive eps");
  }
  if (kind == GatingKind::adaptive &&
      failed(
          expectShape(*this, "scale", getScale(), concat(in.drop_back(), {1}))))
    return failure();
  return expectShape(*this, "result", getResult(),
                     concat(in.drop_back(), {w[0]}));
}

//===----------------------------------------------------------------------===//
// Mixture and dynamic convolution
//===----------------------------------------------------------------------===//

/// Checks the gate against the input `(lead..., d)`: `(lead'..., N)` or
/// `(lead'..., H, N)` with each lead' dimension equal to lead's or 1. Returns
/// the number of heads through `heads`.
static LogicalResult verifyGateShape(Operation *op, Value input, Value gate,
                                     int64_t &heads) {
  ArrayRef<int64_t> in = shapeOf(input), g = shapeOf(gate);
  if (in.empty())
    return op->emitOpError("input must have rank >= 1");
  ArrayRef<int64_t> lead = in.drop_back();
  if (g.size() != in.size() && g.size() != in.size() + 1)
    return op->emitOpError()
           << "gate must have shape (..., N) or (..., H, N) over the input's "
              "leading dimensions "
           << shapeStr(lead) << ", got " << shapeStr(g);
  heads = g.size() == in.size() ? 1 : g[g.size() - 2];
  for (auto [i, sizes] :
       llvm::enumerate(llvm::zip(g.take_front(lead.size()), lead))) {
    auto [have, want] = sizes;
    if (have != want && have != 1)
      return op->emitOpError()
             << "gate dimension " << i << " is " << have << ", expected "
             << want << " (the input's) or 1 (shared)";
  }
  return success();
}

/// Verifies stacked kernels `(N,f,d)`, a per-expert bias `(N,f)` or shared
/// bias `(f)`, and the result `(lead..., f)`.
static LogicalResult verifyStacked(Operation *op, Value input, Value gate,
                                   Value kernels, Value bias, Value shared,
                                   Value result) {
  int64_t heads;
  if (failed(verifyGateShape(op, input, gate, heads)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(input), k = shapeOf(kernels);
  int64_t n = shapeOf(gate).back();
  if (k.size() != 3)
    return op->emitOpError()
           << "kernels must have shape (N,f,d), got " << shapeStr(k);
  if (k[0] != n)
    return op->emitOpError() << "kernels stack " << k[0]
                             << " experts, but the gate routes over " << n;
  if (k[2] != in.back())
    return op->emitOpError()
           << "kernels " << shapeStr(k) << " expect " << k[2]
           << " input features, but the input has " << in.back();
  int64_t f = k[1];
  if (f % heads != 0)
    return op->emitOpError()
           << "kernels' output size " << f << " is not divisible by " << heads
           << " gate heads";
  if (bias && shared)
    return op->emitOpError(
        "cannot have both a per-expert bias and a shared_bias");
  if (bias && failed(expectShape(op, "bias", bias, {n, f})))
    return failure();
  if (shared && failed(expectShape(op, "shared_bias", shared, {f})))
    return failure();
  return expectShape(op, "result", result, concat(in.drop_back(), {f}));
}

static int64_t numGateHeads(Value input, Value gate) {
  ArrayRef<int64_t> g = shapeOf(gate);
  return g.size() > shapeOf(input).size() ? g[g.size() - 2] : 1;
}

int64_t MixtureOp::getNumGateHeads() {
  return numGateHeads(getInput(), getGate());
}
int64_t DynamicConvOp::getNumGateHeads() {
  return numGateHeads(getInput(), getGate());
}

void MixtureOp::build(OpBuilder &builder, OperationState &state,
                      Type resultType, Value input, Value gate, Value kernels,
                      Value bias, Value sharedBias) {
  state.addOperands({input, gate});
  for (Value v : {kernels, bias, sharedBias})
    if (v)
      state.addOperands(v);
  state.getOrAddProperties<Properties>().operandSegmentSizes = {
      1, 1, kernels ? 1 : 0, bias ? 1 : 0, sharedBias ? 1 : 0, 0};
  state.addRegion();
  state.addTypes(resultType);
}

LogicalResult MixtureOp::verify() {
  if (!hasExpertRegion()) {
    if (!getKernels())
      return emitOpError("needs experts: stacked kernels or an expert region");
    if (!getExpertWeights().empty())
      return emitOpError("experts(...) weights need an expert region");
    return verifyStacked(*this, getInput(), getGate(), getKernels(), getBias(),
                         getSharedBias(), getResult());
  }
  if (getKernels() || getBias() || getSharedBias())
    return emitOpError("cannot have both stacked kernels or biases and an "
                       "expert region; put the bias in the region");
  int64_t heads;
  if (failed(verifyGateShape(*this, getInput(), getGate(), heads)))
    return failure();
  if (heads != 1)
    return emitOpError("per-head gates need stacked kernels, not an expert "
                       "region");
  if (getExpertWeights().empty())
    return emitOpError("an expert region needs at least one stacked weight "
                       "in experts(...)");
  int64_t n = getNumStreams();
  for (auto [i, w] : llvm::enumerate(getExpertWeights())) {
    ArrayRef<int64_t> shape = shapeOf(w);
    if (shape.empty())
      return emitOpError() << "expert weight #" << i
                           << " must have a leading expert dimension";
    if (shape[0] != n)
      return emitOpError() << "expert weight #" << i << " " << shapeStr(shape)
                           << " must stack " << n
                           << " experts along its first dimension";
  }
  ArrayRef<int64_t> in = shapeOf(getInput()), res = shapeOf(getResult());
  if (res.size() != in.size() || res.drop_back() != in.drop_back())
    return emitOpError() << "result must have shape (..., f) over the input's "
                            "leading dimensions "
                         << shapeStr(in.drop_back()) << ", got "
                         << shapeStr(res);
  return success();
}

LogicalResult MixtureOp::verifyRegions() {
  if (!hasExpertRegion())
    return success();
  Region &body = getBody();
  if (!body.hasOneBlock())
    return emitOpError("expert region must have exactly one block");
  Block &block = body.front();
  unsigned want = 1 + getExpertWeights().size();
  if (block.getNumArguments() != want)
    return emitOpError() << "expert region must take " << want
                         << " arguments (the input and one slice of each "
                            "expert weight), got "
                         << block.getNumArguments();
  if (block.getArgument(0).getType() != getInput().getType())
    return emitOpError() << "expert region argument #0 must have the input "
                            "type "
                         << getInput().getType() << ", got "
                         << block.getArgument(0).getType();
  for (auto [i, w] : llvm::enumerate(getExpertWeights())) {
    auto type = cast<RankedTensorType>(w.getType());
    auto slice = RankedTensorType::get(type.getShape().drop_front(),
                                       type.getElementType());
    if (block.getArgument(i + 1).getType() != slice)
      return emitOpError() << "expert region argument #" << i + 1
                           << " must be one expert's slice " << slice
                           << ", got " << block.getArgument(i + 1).getType();
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("expert region must end in mix.yield");
  if (yield.getValue().getType() != getResult().getType())
    return emitOpError() << "expert region yields "
                         << yield.getValue().getType()
                         << ", but the mixture produces "
                         << getResult().getType();
  return success();
}

LogicalResult DynamicConvOp::verify() {
  return verifyStacked(*this, getInput(), getGate(), getKernels(), getBias(),
                       getSharedBias(), getResult());
}

LogicalResult BalanceLossOp::verify() {
  ArrayRef<int64_t> g = shapeOf(getGate());
  if (g.size() != 3 && g.size() != 4)
    return emitOpError() << "gate must have shape (B,S,N) or (B,S,H,N), got "
                         << shapeStr(g);
  if (!(getAlpha().convertToDouble() >= 0))
    return emitOpError() << "alpha must be non-negative, got "
                         << getAlpha().convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// Streams and AltUp
//===----------------------------------------------------------------------===//

/// Checks `many` = `(P*B, rest...)` against `one` = `(B, rest...)`.
static LogicalResult verifyStreamMajor(Operation *op, Value many, Value one,
                                       int64_t streams, StringRef manyName,
                                       StringRef oneName) {
  ArrayRef<int64_t> m = shapeOf(many), o = shapeOf(one);
  if (o.empty())
    return op->emitOpError() << oneName << " must have a batch dimension";
  SmallVector<int64_t> want(o);
  want[0] *= streams;
  if (m == ArrayRef<int64_t>(want))
    return success();
  return op->emitOpError() << manyName << " must have shape " << shapeStr(want)
                           << " (" << streams << " streams of " << oneName
                           << " " << shapeStr(o) << "), got " << shapeStr(m);
}

LogicalResult ReplicateStreamsOp::verify() {
  return verifyStreamMajor(*this, getResult(), getInput(), getStreams(),
                           "result", "input");
}

LogicalResult SelectStreamOp::verify() {
  if (static_cast<int64_t>(getIndex()) >= static_cast<int64_t>(getStreams()))
    return emitOpError() << "stream " << getIndex() << " is out of range for "
                         << getStreams() << " streams";
  return verifyStreamMajor(*this, getInput(), getResult(), getStreams(),
                           "input", "result");
}

LogicalResult MeanStreamsOp::verify() {
  return verifyStreamMajor(*this, getInput(), getResult(), getStreams(),
                           "input", "result");
}

LogicalResult AggregateStreamsOp::verify() {
  ArrayRef<int64_t> w2 = shapeOf(getFc2Weight()), res = shapeOf(getResult());
  if (w2.size() != 2)
    return emitOpError() << "fc2 weight must have shape (P,d), got "
                         << shapeStr(w2);
  int64_t p = w2[0];
  if (res.size() != 3)
    return emitOpError() << "result must have shape (B,S,d), got "
                         << shapeStr(res);
  int64_t d = res[2];
  double eps = getSmoothing().convertToDouble();
  if (!(eps >= 0 && eps <= 1))
    return emitOpError() << "smoothing must lie in [0, 1], got " << eps;
  if (failed(verifyStreamMajor(*this, getInput(), getResult(), p, "input",
                               "result")) ||
      failed(expectShape(*this, "fc1 weight", getFc1Weight(), {d, p * d})) ||
      failed(expectShape(*this, "fc1 bias", getFc1Bias(), {d})) ||
      failed(expectShape(*this, "fc2 weight", getFc2Weight(), {p, d})) ||
      failed(expectShape(*this, "fc2 bias", getFc2Bias(), {p})))
    return failure();
  return success();
}

LogicalResult AltUpPredictOp::verify() {
  ArrayRef<int64_t> p = shapeOf(getPredict()), in = shapeOf(getInput());
  if (p.size() != 2 || p[0] != p[1])
    return emitOpError() << "predict must be a square (K,K) matrix, got "
                         << shapeStr(p);
  if (in.empty())
    return emitOpError("input must have a batch dimension");
  if (in[0] % p[0] != 0)
    return emitOpError() << "input " << shapeStr(in) << " does not hold "
                         << p[0] << " stream-major blocks";
  return expectShape(*this, "result", getResult(), in);
}

LogicalResult AltUpCorrectOp::verify() {
  ArrayRef<int64_t> c = shapeOf(getCorrect());
  if (c.size() != 1)
    return emitOpError() << "correct must have shape (K), got " << shapeStr(c);
  int64_t k = c[0];
  if (static_cast<int64_t>(getActive()) >= k)
    return emitOpError() << "active block " << getActive()
                         << " is out of range for " << k << " blocks";
  if (failed(verifyStreamMajor(*this, getPredicted(), getComputed(), k,
                               "predicted", "computed")))
    return failure();
  return expectShape(*this, "result", getResult(), shapeOf(getPredicted()));
}
