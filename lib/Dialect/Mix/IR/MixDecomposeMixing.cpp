//===- MixDecomposeMixing.cpp - Gated-stream mixing as primitives ---------===//
//
// Gates of every kind, the dynamic convolution in its chosen mixing order,
// mixtures (stacked and region experts) and the balance loss.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"

#include "mlir/IR/IRMapping.h"


using namespace mlir;
using namespace mlir::mix;

using Results = FailureOr<SmallVector<Value>>;

static Results one(Value v) { return SmallVector<Value>{v}; }

static int64_t product(ArrayRef<int64_t> s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

static Value gate(PrimitiveBuilder &pb, GateOp op) {
  Value x = op.getInput();
  ArrayRef<int64_t> sx = pb.shape(x);
  SmallVector<int64_t> lead(sx.drop_back());
  int64_t d = sx.back(), tokens = product(lead);
  Value logits;
  switch (op.getKind()) {
  case GatingKind::simple:
    logits = pb.linear(x, op.getWeight(), op.getBias());
    break;
  case GatingKind::context_aware: {
    Value y = pb.layerNorm(pb.mul(x, op.getModulation()), op.getNormWeight(),
                           op.getNormBias(), op.getEps()->convertToDouble());
    logits = pb.linear(y, op.getWeight(), op.getBias());
    break;
  }
  case GatingKind::adaptive:
    logits = pb.mul(op.getScale(), pb.linear(x, op.getWeight(), op.getBias()));
    break;
  case GatingKind::multi_head: {
    ArrayRef<int64_t> sw = pb.shape(op.getWeight());
    int64_t h = sw[0], n = sw[1], c = sw[2];
    Value xh = pb.transpose(pb.reshape(x, {tokens, h, c}), {1, 0, 2});
    Value l = pb.matmul(xh, op.getWeight(), false, true); // (H, T, N)
    l = pb.add(l, pb.reshape(op.getBias(), {h, 1, n}));
    SmallVector<int64_t> out(lead);
    out.push_back(h);
    out.push_back(n);
    logits = pb.reshape(pb.transpose(l, {1, 0, 2}), out);
    break;
  }
  }
  (void)d;
  if (op.getNormalization() == GateNormalization::sigmoid)
    return pb.sigmoid(logits);
  return pb.softmax(logits);
}

/// stack_then_mix: the N kernels as one matrix (N f, d), a view of them,
/// applied to x in one product with the biases as its epilogue, then the
/// streams' outputs P (T, N, f) summed with the gate's weights. Gate head
/// j weighs output chunk j (f/H channels) of every stream, so a head needs
/// no input of its own: u[t, j, i] = sum_k g[t, j, k] P[t, k, j, i]. The
/// backward pass is a linear layer's pair of products over dP = g dU.
static Value stackThenMix(PrimitiveBuilder &pb, Value x, Value gt,
                          Value kernels, Value bias) {
  ArrayRef<int64_t> sk = pb.shape(kernels), sg = pb.shape(gt);
  int64_t n = sk[0], f = sk[1], d = sk[2];
  int64_t tokens = sg[0], h = sg[1], c = f / h;
  Value p =
      pb.linear(pb.reshape(x, {tokens, d}), pb.reshape(kernels, {n * f, d}),
                bias ? pb.reshape(bias, {n * f}) : Value());
  Value weights = pb.reshape(pb.transpose(gt, {0, 2, 1}), {tokens, n, h, 1});
  Value mixed =
      pb.reduceSum(pb.mul(weights, pb.reshape(p, {tokens, n, h, c})), {1});
  return pb.reshape(mixed, {tokens, f});
}

/// The dynamic convolution x (sum_k g_k K_k)^T + sum_k g_k b_k (+ c) in the
/// given mixing order; shared by mix.dynamic_conv and stacked mix.mixture.
static Value emitDynamicConv(PrimitiveBuilder &pb, Value x, Value g,
                             Value kernels, Value bias, Value sharedBias,
                             MixingOrder order) {
  bool mixThenApply = order == MixingOrder::mix_then_apply;
  ArrayRef<int64_t> sx = pb.shape(x), sk = pb.shape(kernels);
  SmallVector<int64_t> lead(sx.drop_back());
  int64_t n = sk[0], f = sk[1], d = sk[2], tokens = product(lead);
  bool hasHeads = pb.rank(g) > pb.rank(x);
  int64_t h = hasHeads ? pb.shape(g)[pb.rank(g) - 2] : 1, c = f / h;
  SmallVector<int64_t> out(lead);
  out.push_back(f);

  // Mix-then-apply for a gate shared by each sequence: (B,1,N) with x
  // (B,S,d). Ktilde_b = sum_k g_bk K_k, once per sequence.
  ArrayRef<int64_t> sg = pb.shape(g);
  if (mixThenApply && !hasHeads && sx.size() == 3 && sg[1] == 1 &&
      sg[0] == sx[0]) {
    int64_t batch = sx[0];
    Value g2 = pb.reshape(g, {batch, n});
    Value kt = pb.matmul(g2, pb.reshape(kernels, {n, f * d})); // (B, f d)
    Value u = pb.matmul(x, pb.reshape(kt, {batch, f, d}), false, true);
    if (bias)
      u = pb.add(u, pb.reshape(pb.matmul(g2, bias), {batch, 1, f}));
    if (sharedBias)
      u = pb.add(u, pb.reshape(sharedBias, {1, 1, f}));
    return u;
  }

  // Apply-then-mix: the gate-scaled input S = [g_1 x | ... | g_N x] against
  // the kernels stacked along their input dimension, as one product per
  // stream accumulating into U: U += S_k K_k^T. Each product reads its
  // stream's kernel where it is; one product over the stacked kernels
  // would need them transposed into one matrix, a copy of every kernel
  // kept from the forward pass to the backward, and its gradient
  // transposed back. The adjoints of the slices are one concatenation.
  SmallVector<int64_t> gFull(lead);
  if (hasHeads)
    gFull.push_back(h);
  gFull.push_back(n);
  Value gt = pb.reshape(pb.broadcastTo(g, gFull), {tokens, h, n});
  Value u;
  if (order == MixingOrder::stack_then_mix) {
    u = stackThenMix(pb, x, gt, kernels, bias);
  } else if (h == 1) {
    Value scaled = pb.mul(pb.reshape(gt, {tokens, n, 1}),
                          pb.reshape(x, {tokens, 1, d})); // (T, N, d)
    for (int64_t k = 0; k < n; ++k) {
      Value sk = pb.reshape(pb.slice(scaled, 1, k, 1), {tokens, d});
      Value kk = pb.reshape(pb.slice(kernels, 0, k, 1), {f, d});
      Value term = pb.matmul(sk, kk, false, true); // (T, f)
      u = u ? pb.add(u, term) : term;
    }
    if (bias)
      u = pb.add(u, pb.matmul(pb.reshape(gt, {tokens, n}), bias));
  } else {
    // Head-major, (H, T, N, d): head j's output chunk is a batch entry of
    // each stream's product, U_h += S_hk K_k[chunk h]^T, and only the
    // small gate (H, T, N) is transposed.
    Value gh = pb.transpose(gt, {1, 0, 2});
    Value scaled = pb.mul(pb.reshape(gh, {h, tokens, n, 1}),
                          pb.reshape(x, {1, tokens, 1, d}));
    Value uh;
    for (int64_t k = 0; k < n; ++k) {
      Value sk = pb.reshape(pb.slice(scaled, 2, k, 1), {h, tokens, d});
      Value kk = pb.reshape(pb.slice(kernels, 0, k, 1), {h, c, d});
      Value term = pb.matmul(sk, kk, false, true); // (H, T, c)
      uh = uh ? pb.add(uh, term) : term;
    }
    if (bias) {
      Value bh = pb.transpose(pb.reshape(bias, {n, h, c}), {1, 0, 2});
      uh = pb.add(uh, pb.matmul(gh, bh));
    }
    u = pb.reshape(pb.transpose(uh, {1, 0, 2}), {tokens, f});
  }
  if (sharedBias)
    u = pb.add(u, pb.reshape(sharedBias, {1, f}));
  return pb.reshape(u, out);
}

/// A region mixture, unrolled: sum_k g_k E_k(x) with the region cloned per
/// expert on the k-th slices of its weights.
static Value regionMixture(PrimitiveBuilder &pb, MixtureOp op) {
  Block &block = op.getBody().front();
  Value g = op.getGate();
  int64_t n = op.getNumStreams(), r = pb.rank(g);
  Value sum;
  for (int64_t k = 0; k < n; ++k) {
    IRMapping map;
    map.map(block.getArgument(0), op.getInput());
    for (auto [i, w] : llvm::enumerate(op.getExpertWeights())) {
      ArrayRef<int64_t> sw = pb.shape(w);
      map.map(block.getArgument(i + 1),
              pb.reshape(pb.slice(w, 0, k, 1), sw.drop_front()));
    }
    for (Operation &nested : block.without_terminator())
      pb.builder().clone(nested, map);
    Value e = map.lookup(cast<YieldOp>(block.getTerminator()).getValue());
    Value term = pb.mul(pb.slice(g, r - 1, k, 1), e);
    sum = sum ? pb.add(sum, term) : term;
  }
  return sum;
}

static Value mixture(PrimitiveBuilder &pb, MixtureOp op) {
  if (op.hasExpertRegion())
    return regionMixture(pb, op);
  // sum_k g_k (x K_k^T + b_k + c) = conv + (sum_k g_k) c.
  Value u = emitDynamicConv(pb, op.getInput(), op.getGate(), op.getKernels(),
                            op.getBias(), Value(), MixingOrder::apply_then_mix);
  if (Value c = op.getSharedBias()) {
    Value g = op.getGate();
    ArrayRef<int64_t> sg = pb.shape(g);
    int64_t r = sg.size(), f = pb.shape(c)[0];
    Value gsum = pb.reduceSum(g, {r - 1}); // (lead..., [H,] 1)
    if (op.getNumGateHeads() != 1) {
      // Head j's weight sum scales output chunk j of c.
      int64_t h = sg[r - 2];
      SmallVector<int64_t> cs(r - 2, 1), flat(sg.drop_back(2));
      cs.push_back(h);
      cs.push_back(f / h);
      flat.push_back(f);
      u = pb.add(u, pb.reshape(pb.mul(gsum, pb.reshape(c, cs)), flat));
    } else {
      SmallVector<int64_t> cs(r - 1, 1);
      cs.push_back(f);
      u = pb.add(u, pb.mul(gsum, pb.reshape(c, cs)));
    }
  }
  return u;
}

static Value balanceLoss(PrimitiveBuilder &pb, BalanceLossOp op) {
  Value g = op.getGate();
  ArrayRef<int64_t> s = pb.shape(g);
  int64_t batch = s[0], n = s.back();
  bool heads = s.size() == 4;
  SmallVector<int64_t> dims{1};
  double count = s[1];
  if (heads) {
    dims.push_back(2);
    count *= s[2];
  }
  Value p = pb.scale(pb.reduceSum(g, dims), 1.0 / count);
  double alpha = op.getAlpha().convertToDouble();
  return pb.scale(pb.sumAll(pb.mul(p, p)),
                  alpha * static_cast<double>(n) / static_cast<double>(batch));
}

//===----------------------------------------------------------------------===//
// DecomposableOpInterface
//===----------------------------------------------------------------------===//

Results GateOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(gate(pb, *this));
}

Results DynamicConvOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(emitDynamicConv(pb, getInput(), getGate(), getKernels(), getBias(),
                             getSharedBias(),
                             getOrder().value_or(MixingOrder::apply_then_mix)));
}

Results MixtureOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(mixture(pb, *this));
}

Results BalanceLossOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(balanceLoss(pb, *this));
}
