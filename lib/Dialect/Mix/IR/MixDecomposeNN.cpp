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

/// The heads of part \p which (0: q, 1: k, 2: v) of a fused projection
/// (B,S,3d), as (B,h,S,dh).
static Value heads(PrimitiveBuilder &pb, Value qkv, int64_t h, int64_t which) {
  ArrayRef<int64_t> s = pb.shape(qkv);
  int64_t batch = s[0], seq = s[1], d = s[2] / 3, dh = d / h;
  Value part = pb.slice(qkv, 2, which * d, d);
  return pb.transpose(pb.reshape(part, {batch, seq, h, dh}), {0, 2, 1, 3});
}

/// Keys (or values) (B,h,S,dh) after the prefix (P,h,T_p,dh) of each row's
/// stream: row p*B0 + b attends to stream p's prefix.
static Value withPrefix(PrimitiveBuilder &pb, Value prefix, Value keys) {
  ArrayRef<int64_t> ps = pb.shape(prefix), ks = pb.shape(keys);
  int64_t streams = ps[0], h = ps[1], length = ps[2], dh = ps[3];
  int64_t batch = ks[0], b0 = batch / streams;
  Value r = pb.reshape(prefix, {streams, 1, h, length, dh});
  r = pb.broadcastTo(r, {streams, b0, h, length, dh});
  return pb.concat(pb.reshape(r, {batch, h, length, dh}), keys, 2);
}

/// softmax(q k^T / sqrt(dh) + mask) v for q (B,h,Q,dh), keys and values
/// (B,h,N,dh) and the additive mask (Q,N) \p mask builds, merged back to
/// (B,Q,h*dh).
static Value attend(PrimitiveBuilder &pb, Value q, Value k, Value v,
                    function_ref<Value()> buildMask) {
  ArrayRef<int64_t> qs = pb.shape(q);
  int64_t batch = qs[0], h = qs[1], seq = qs[2], dh = qs[3];
  Value scores = pb.scale(pb.matmul(q, k, false, true), 1.0 / std::sqrt(dh));
  Value mask = buildMask();
  ArrayRef<int64_t> ms = pb.shape(mask);
  scores = pb.add(scores, pb.reshape(mask, {1, 1, ms[0], ms[1]}));
  Value o = pb.matmul(pb.softmax(scores), v);
  return pb.reshape(pb.transpose(o, {0, 2, 1, 3}), {batch, seq, h * dh});
}

static Value attention(PrimitiveBuilder &pb, AttentionOp op) {
  Value qkv = op.getQkv();
  int64_t seq = pb.shape(qkv)[1], h = op.getHeads();
  Value q = heads(pb, qkv, h, 0), k = heads(pb, qkv, h, 1),
        v = heads(pb, qkv, h, 2);
  int64_t prefix = 0;
  if (op.getPrefixK()) {
    prefix = pb.shape(op.getPrefixK())[2];
    k = withPrefix(pb, op.getPrefixK(), k);
    v = withPrefix(pb, op.getPrefixV(), v);
  }
  return attend(pb, q, k, v, [&] {
    return CausalMaskOp::create(pb.builder(), pb.getLoc(),
                                pb.f32({seq, prefix + seq}), prefix,
                                /*position=*/Value());
  });
}

/// The new keys and values written into the caches at the position, then
/// the new queries against the prefixes and every cached position (those
/// after the queries masked).
static SmallVector<Value> cachedAttention(PrimitiveBuilder &pb,
                                          CachedAttentionOp op) {
  Value qkv = op.getQkv(), position = op.getPosition();
  int64_t seq = pb.shape(qkv)[1], h = op.getHeads();
  int64_t cached = pb.shape(op.getKCache())[2];
  OpBuilder &b = pb.builder();
  Value q = heads(pb, qkv, h, 0);
  auto write = [&](Value cache, Value update) {
    return DynamicUpdateSliceOp::create(b, pb.getLoc(), cache.getType(), cache,
                                        update, position, 2)
        .getResult();
  };
  Value kCache = write(op.getKCache(), heads(pb, qkv, h, 1));
  Value vCache = write(op.getVCache(), heads(pb, qkv, h, 2));
  Value k = kCache, v = vCache;
  int64_t prefix = 0;
  if (op.getPrefixK()) {
    prefix = pb.shape(op.getPrefixK())[2];
    k = withPrefix(pb, op.getPrefixK(), k);
    v = withPrefix(pb, op.getPrefixV(), v);
  }
  Value o = attend(pb, q, k, v, [&] {
    return CausalMaskOp::create(b, pb.getLoc(), pb.f32({seq, prefix + cached}),
                                prefix, position);
  });
  return {o, kCache, vCache};
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

Results CachedAttentionOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return cachedAttention(pb, *this);
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
