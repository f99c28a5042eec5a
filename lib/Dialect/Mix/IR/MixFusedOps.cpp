//===- MixFusedOps.cpp - Ops a target computes as one kernel --------------===//
//
// Verifiers of the fused ops (MixFusedOps.td) and the vector-Jacobian
// products of mix.flash_attention and mix.fused_cross_entropy.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"

#include "VerifyUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::detail;

#define GET_OP_CLASSES
#include "mix/Dialect/Mix/IR/MixFusedOps.cpp.inc"

FailureOr<AttentionShape>
mlir::mix::getAttentionShape(Operation *op, ArrayRef<int64_t> qkv,
                             std::optional<ArrayRef<int64_t>> prefixK,
                             int64_t heads) {
  if (qkv.size() != 3)
    return op->emitOpError()
           << "qkv must have shape (B,S,3d), got " << shapeStr(qkv);
  if (qkv[2] % 3 != 0)
    return op->emitOpError() << "qkv feature size " << qkv[2]
                             << " is not a multiple of 3 (q, k and v)";
  AttentionShape s;
  s.batch = qkv[0];
  s.seq = qkv[1];
  s.width = qkv[2] / 3;
  s.heads = heads;
  if (s.width % heads != 0)
    return op->emitOpError() << "model width " << s.width
                             << " is not divisible by " << heads << " heads";
  s.headDim = s.width / heads;
  if (!prefixK)
    return s;
  ArrayRef<int64_t> pk = *prefixK;
  if (pk.size() != 4 || pk[1] != heads || pk[3] != s.headDim)
    return op->emitOpError()
           << "prefix_k must have shape (P," << heads << ",T_p," << s.headDim
           << "), got " << shapeStr(pk);
  if (s.batch % pk[0] != 0)
    return op->emitOpError()
           << "batch " << s.batch << " is not a multiple of the " << pk[0]
           << " prefix streams";
  s.streams = pk[0];
  s.prefix = pk[2];
  return s;
}

static ArrayRef<int64_t> shapeOfAny(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

static std::optional<ArrayRef<int64_t>> optionalShape(Value v) {
  if (!v)
    return std::nullopt;
  return shapeOfAny(v);
}

/// Checks that \p v (described as \p what) has shape \p expected; works on
/// tensors and buffers.
static LogicalResult expect(Operation *op, StringRef what, Value v,
                            ArrayRef<int64_t> expected) {
  if (shapeOfAny(v) == expected)
    return success();
  return op->emitOpError() << what << " must have shape " << shapeStr(expected)
                           << ", got " << shapeStr(shapeOfAny(v));
}

/// The checks every form of the attention shares: the prefixes come
/// together and fit qkv; each named value has its shape.
static FailureOr<AttentionShape> verifyAttention(Operation *op, Value qkv,
                                                 Value prefixK, Value prefixV,
                                                 int64_t heads) {
  if (!prefixK != !prefixV)
    return op->emitOpError("prefix_k and prefix_v must be given together");
  FailureOr<AttentionShape> s =
      getAttentionShape(op, shapeOfAny(qkv), optionalShape(prefixK), heads);
  if (failed(s))
    return failure();
  if (prefixV && failed(expect(op, "prefix_v", prefixV, s->prefixShape())))
    return failure();
  return s;
}

/// The checks of the forward attention, on tensors or on buffers.
template <typename OpTy> static LogicalResult verifyForward(OpTy op) {
  FailureOr<AttentionShape> s = verifyAttention(
      op, op.getQkv(), op.getPrefixK(), op.getPrefixV(), op.getHeads());
  if (failed(s) ||
      failed(expect(op, "result", op.getResult(), s->resultShape())))
    return failure();
  return expect(op, "lse", op.getLse(), s->lseShape());
}

/// The checks the gradient's forms share, and its shape.
template <typename OpTy>
static FailureOr<AttentionShape> verifyBackward(OpTy op) {
  FailureOr<AttentionShape> s = verifyAttention(
      op, op.getQkv(), op.getPrefixK(), op.getPrefixV(), op.getHeads());
  if (failed(s) || failed(expect(op, "out", op.getOut(), s->resultShape())) ||
      failed(expect(op, "lse", op.getLse(), s->lseShape())) ||
      failed(expect(op, "dout", op.getDout(), s->resultShape())) ||
      failed(expect(op, "dqkv", op.getDqkv(), shapeOfAny(op.getQkv()))))
    return failure();
  return s;
}

LogicalResult FlashAttentionOp::verify() { return verifyForward(*this); }

LogicalResult FlashAttentionGradOp::verify() {
  FailureOr<AttentionShape> s = verifyBackward(*this);
  if (failed(s))
    return failure();
  size_t want = getPrefixK() ? 2 : 0;
  if (getDprefix().size() != want)
    return emitOpError() << "expected " << want
                         << " prefix adjoints (one for each prefix), got "
                         << getDprefix().size();
  for (Value d : getDprefix())
    if (failed(expect(*this, "a prefix adjoint", d, s->prefixShape())))
      return failure();
  return success();
}

LogicalResult FlashAttentionBuffersOp::verify() { return verifyForward(*this); }

LogicalResult FlashAttentionGradBuffersOp::verify() {
  FailureOr<AttentionShape> s = verifyBackward(*this);
  if (failed(s))
    return failure();
  if (!getDprefixK() != !getPrefixK())
    return emitOpError("prefix adjoints are written exactly when the "
                       "attention has prefixes");
  if (getDprefixK() &&
      (failed(expect(*this, "dprefix_k", getDprefixK(), s->prefixShape())) ||
       failed(expect(*this, "dprefix_v", getDprefixV(), s->prefixShape()))))
    return failure();
  return success();
}

void FlashAttentionOp::buildVJP(
    PrimitiveBuilder &b, Value dy,
    llvm::function_ref<void(Value, Value)> accumulate) {
  SmallVector<Type> prefixTypes;
  if (getPrefixK())
    prefixTypes = {getPrefixK().getType(), getPrefixV().getType()};
  auto grad = FlashAttentionGradOp::create(
      b.builder(), b.getLoc(), getQkv().getType(), prefixTypes, getQkv(),
      getPrefixK(), getPrefixV(), getResult(), getLse(), dy, getHeads());
  accumulate(getQkv(), grad.getDqkv());
  if (getPrefixK()) {
    accumulate(getPrefixK(), grad.getDprefix()[0]);
    accumulate(getPrefixV(), grad.getDprefix()[1]);
  }
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

/// The checks every form of the cross-entropy shares: logits (B,S,V),
/// targets and log-sum-exps (B,S).
static LogicalResult verifyCrossEntropy(Operation *op, Value logits,
                                        Value targets, Value lse) {
  ArrayRef<int64_t> shape = shapeOfAny(logits);
  if (shape.size() != 3)
    return op->emitOpError()
           << "logits must have shape (B,S,V), got " << shapeStr(shape);
  if (failed(expect(op, "targets", targets, shape.drop_back())))
    return failure();
  return expect(op, "lse", lse, shape.drop_back());
}

LogicalResult FusedCrossEntropyOp::verify() {
  return verifyCrossEntropy(*this, getLogits(), getTargets(), getLse());
}

LogicalResult FusedCrossEntropyGradOp::verify() {
  if (failed(verifyCrossEntropy(*this, getLogits(), getTargets(), getLse())))
    return failure();
  return expect(*this, "dlogits", getDlogits(), shapeOfAny(getLogits()));
}

LogicalResult FusedCrossEntropyBuffersOp::verify() {
  if (failed(verifyCrossEntropy(*this, getLogits(), getTargets(), getLse())))
    return failure();
  return expect(*this, "result", getResult(), {});
}

LogicalResult FusedCrossEntropyGradBuffersOp::verify() {
  if (failed(verifyCrossEntropy(*this, getLogits(), getTargets(), getLse())) ||
      (getDresult() && failed(expect(*this, "dresult", getDresult(), {}))))
    return failure();
  return expect(*this, "dlogits", getDlogits(), shapeOfAny(getLogits()));
}

OpFoldResult FusedCrossEntropyGradOp::fold(FoldAdaptor adaptor) {
  // A constant adjoint becomes the scale: nothing to copy to the device.
  auto constant = dyn_cast_or_null<DenseFPElementsAttr>(adaptor.getDresult());
  if (!constant || !constant.isSplat())
    return {};
  float value = constant.getSplatValue<APFloat>().convertToFloat();
  setScaleAttr(FloatAttr::get(Float32Type::get(getContext()),
                              value * getScale().convertToFloat()));
  getDresultMutable().clear();
  return getDlogits();
}

void FusedCrossEntropyOp::buildVJP(
    PrimitiveBuilder &b, Value dy,
    llvm::function_ref<void(Value, Value)> accumulate) {
  auto grad = FusedCrossEntropyGradOp::create(
      b.builder(), b.getLoc(), getLogits().getType(), getLogits(), getTargets(),
      getLse(), dy, b.builder().getF32FloatAttr(1.0f));
  accumulate(getLogits(), grad.getDlogits());
}

//===----------------------------------------------------------------------===//
// The optimizer over every parameter at once
//===----------------------------------------------------------------------===//

LogicalResult MultiTensorSumSquaresOp::verify() {
  if (getTensors().empty())
    return emitOpError("needs at least one tensor");
  return success();
}

LogicalResult MultiTensorSumSquaresBuffersOp::verify() {
  if (getTensors().empty())
    return emitOpError("needs at least one buffer");
  return expect(*this, "result", getResult(), {});
}

/// The checks both forms of the AdamW step share: one gradient and two
/// moments of each parameter's type, a decay flag each, three
/// hyperparameters and a scalar clip coefficient.
template <typename OpTy> static LogicalResult verifyAdamW(OpTy op) {
  size_t n = op.getParams().size();
  if (n == 0)
    return op.emitOpError("needs at least one parameter");
  auto group = [&](StringRef what, ValueRange values) -> LogicalResult {
    if (values.size() != n)
      return op.emitOpError()
             << "expected " << n << " " << what
             << " (one for each parameter), got " << values.size();
    for (auto [i, pair] : llvm::enumerate(llvm::zip(op.getParams(), values))) {
      auto [param, value] = pair;
      if (param.getType() != value.getType())
        return op.emitOpError()
               << what << " #" << i << " has type " << value.getType()
               << ", but its parameter has type " << param.getType();
    }
    return success();
  };
  if (failed(group("gradients", op.getGrads())) ||
      failed(group("first moments", op.getM())) ||
      failed(group("second moments", op.getV())))
    return failure();
  if (op.getDecay().size() != n)
    return op.emitOpError()
           << "expected " << n << " decay flags (one for each parameter), got "
           << op.getDecay().size();
  if (failed(expect(op, "hyper", op.getHyper(), {3})) ||
      failed(expect(op, "clip", op.getClip(), {})))
    return failure();
  return success();
}

LogicalResult MultiTensorAdamWOp::verify() {
  if (failed(verifyAdamW(*this)))
    return failure();
  size_t n = getParams().size();
  if (getUpdated().size() != 3 * n)
    return emitOpError() << "expected " << 3 * n
                         << " results (new parameters, first and second "
                            "moments), got "
                         << getUpdated().size();
  for (auto [i, r] : llvm::enumerate(getUpdated()))
    if (r.getType() != getParams()[i % n].getType())
      return emitOpError() << "result #" << i << " has type " << r.getType()
                           << ", but its parameter has type "
                           << getParams()[i % n].getType();
  return success();
}

LogicalResult MultiTensorAdamWBuffersOp::verify() { return verifyAdamW(*this); }

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

/// The checks every form of the LayerNorm shares: weight (and bias, when
/// given) of the input's last dimension, row statistics of its other
/// dimensions.
static LogicalResult verifyLayerNorm(Operation *op, Value input, Value weight,
                                     Value bias, Value mean, Value rstd) {
  ArrayRef<int64_t> shape = shapeOfAny(input);
  if (shape.empty())
    return op->emitOpError("input must have at least one dimension");
  if (failed(expect(op, "weight", weight, shape.take_back())) ||
      (bias && failed(expect(op, "bias", bias, shape.take_back()))) ||
      failed(expect(op, "mean", mean, shape.drop_back())))
    return failure();
  return expect(op, "rstd", rstd, shape.drop_back());
}

/// A positive epsilon.
static LogicalResult verifyEps(Operation *op, APFloat eps) {
  if (eps.convertToDouble() > 0)
    return success();
  return op->emitOpError() << "eps must be positive, got "
                           << eps.convertToDouble();
}

LogicalResult FusedLayerNormOp::verify() {
  if (failed(verifyLayerNorm(*this, getInput(), getWeight(), getBias(),
                             getMean(), getRstd())) ||
      failed(verifyEps(*this, getEps())))
    return failure();
  return expect(*this, "result", getResult(), shapeOfAny(getInput()));
}

LogicalResult FusedLayerNormBuffersOp::verify() {
  if (failed(verifyLayerNorm(*this, getInput(), getWeight(), getBias(),
                             getMean(), getRstd())) ||
      failed(verifyEps(*this, getEps())))
    return failure();
  return expect(*this, "result", getResult(), shapeOfAny(getInput()));
}

/// The gradient's own checks, on tensors or on buffers.
template <typename OpTy> static LogicalResult verifyLayerNormGrad(OpTy op) {
  if (failed(verifyLayerNorm(op, op.getInput(), op.getWeight(), Value(),
                             op.getMean(), op.getRstd())))
    return failure();
  ArrayRef<int64_t> shape = shapeOfAny(op.getInput());
  if (failed(expect(op, "dresult", op.getDresult(), shape)) ||
      failed(expect(op, "dinput", op.getDinput(), shape)) ||
      failed(expect(op, "dweight", op.getDweight(), shape.take_back())))
    return failure();
  return expect(op, "dbias", op.getDbias(), shape.take_back());
}

LogicalResult FusedLayerNormGradOp::verify() {
  return verifyLayerNormGrad(*this);
}

LogicalResult FusedLayerNormGradBuffersOp::verify() {
  return verifyLayerNormGrad(*this);
}

void FusedLayerNormOp::buildVJP(
    PrimitiveBuilder &b, Value dy,
    llvm::function_ref<void(Value, Value)> accumulate) {
  auto grad = FusedLayerNormGradOp::create(
      b.builder(), b.getLoc(), getInput().getType(), getWeight().getType(),
      getBias().getType(), getInput(), getWeight(), getMean(), getRstd(), dy);
  accumulate(getInput(), grad.getDinput());
  accumulate(getWeight(), grad.getDweight());
  accumulate(getBias(), grad.getDbias());
}
