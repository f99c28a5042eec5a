//===- MixDecomposeNN.cpp - The GPT-2 backbone as primitives --------------===//
//
// Linear, layer norm, activations, embedding, causal attention (with
// ParaScale prefixes), the causal prefix mean and cross-entropy.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"


#include <cmath>

using namespace mlir;
using namespace mlir::mix;

using Results = FailureOr<SmallVector<Value>>;

static Results one(Value v) { return SmallVector<Value>{v}; }

static Value attention(PrimitiveBuilder &pb, AttentionOp op) {
  Value qkv = op.getQkv();
  ArrayRef<int64_t> s = pb.shape(qkv);
  int64_t batch = s[0], seq = s[1], d = s[2] / 3, h = op.getHeads();
  int64_t dh = d / h;
  auto heads = [&](int64_t which) {
    Value part = pb.slice(qkv, 2, which * d, d);
    return pb.transpose(pb.reshape(part, {batch, seq, h, dh}), {0, 2, 1, 3});
  };
  Value q = heads(0), k = heads(1), v = heads(2);
  int64_t prefix = 0;
  if (op.getPrefixK()) {
    // Row p*B0 + b of the batch attends to stream p's prefix.
    ArrayRef<int64_t> ps = pb.shape(op.getPrefixK());
    int64_t streams = ps[0], b0 = batch / streams;
    prefix = ps[2];
    auto perRow = [&](Value pv) {
      Value r = pb.reshape(pv, {streams, 1, h, prefix, dh});
      r = pb.broadcastTo(r, {streams, b0, h, prefix, dh});
      return pb.reshape(r, {batch, h, prefix, dh});
    };
    k = pb.concat(perRow(op.getPrefixK()), k, 2);
    v = pb.concat(perRow(op.getPrefixV()), v, 2);
  }
  Value scores = pb.scale(pb.matmul(q, k, false, true), 1.0 / std::sqrt(dh));
  Value mask = CausalMaskOp::create(pb.builder(), pb.getLoc(),
                                    pb.f32({seq, prefix + seq}), prefix);
  scores = pb.add(scores, pb.reshape(mask, {1, 1, seq, prefix + seq}));
  Value o = pb.matmul(pb.softmax(scores), v);
  return pb.reshape(pb.transpose(o, {0, 2, 1, 3}), {batch, seq, d});
}

static Value crossEntropy(PrimitiveBuilder &pb, CrossEntropyOp op) {
  Value logits = op.getLogits();
  ArrayRef<int64_t> s = pb.shape(logits);
  Value m = pb.stopGradient(pb.reduceMax(logits, {2}));
  Value lse = pb.add(pb.log(pb.reduceSum(pb.exp(pb.sub(logits, m)), {2})), m);
  Value picked =
      TakeAlongOp::create(pb.builder(), pb.getLoc(), pb.f32({s[0], s[1], 1}),
                          logits, op.getTargets());
  return pb.scale(pb.sumAll(pb.sub(lse, picked)),
                  1.0 / static_cast<double>(s[0] * s[1]));
}

static Value prefixMean(PrimitiveBuilder &pb, PrefixMeanOp op) {
  Value x = op.getInput();
  int64_t seq = pb.shape(x)[1];
  SmallVector<float> inv;
  for (int64_t i = 1; i <= seq; ++i)
    inv.push_back(1.0f / static_cast<float>(i));
  auto type = pb.f32({1, seq, 1});
  Value counts = arith::ConstantOp::create(
      pb.builder(), pb.getLoc(), type,
      DenseElementsAttr::get(type, ArrayRef<float>(inv)));
  return pb.mul(pb.cumsum(x, 1), counts);
}

static Value embedding(PrimitiveBuilder &pb, EmbeddingOp op) {
  ArrayRef<int64_t> tok = pb.shape(op.getTokens());
  int64_t d = pb.shape(op.getWte())[1];
  Value x =
      GatherOp::create(pb.builder(), pb.getLoc(), pb.f32({tok[0], tok[1], d}),
                       op.getWte(), op.getTokens());
  Value pos = pb.reshape(pb.slice(op.getWpe(), 0, 0, tok[1]), {1, tok[1], d});
  return pb.add(x, pos);
}

//===----------------------------------------------------------------------===//
// DecomposableOpInterface
//===----------------------------------------------------------------------===//

Results LinearOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(pb.linear(getInput(), getWeight(), getBias()));
}

Results LayerNormOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(pb.layerNorm(getInput(), getWeight(), getBias(),
                          getEps().convertToDouble()));
}

Results GeluOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(pb.gelu(getInput()));
}

Results ReluOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(pb.max(getInput(), pb.scalar(pb.rank(getInput()), 0.0)));
}

Results SigmoidOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(pb.sigmoid(getInput()));
}

Results SiluOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(pb.mul(getInput(), pb.sigmoid(getInput())));
}

Results AttentionOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(attention(pb, *this));
}

Results CrossEntropyOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(crossEntropy(pb, *this));
}

Results PrefixMeanOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(prefixMean(pb, *this));
}

Results EmbeddingOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(embedding(pb, *this));
}
