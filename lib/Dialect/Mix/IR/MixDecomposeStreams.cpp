//===- MixDecomposeStreams.cpp - ParaScale and AltUp streams as primitives ===//
//
// Stream replication, selection, averaging and ParaScale's learned
// aggregation, and AltUp's predict and correct steps, on stream-major
// batches.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"


using namespace mlir;
using namespace mlir::mix;

using Results = FailureOr<SmallVector<Value>>;

static Results one(Value v) { return SmallVector<Value>{v}; }

/// (P*B, rest...) viewed as (P, B, rest...).
static Value splitStreams(PrimitiveBuilder &pb, Value x, int64_t streams) {
  ArrayRef<int64_t> s = pb.shape(x);
  SmallVector<int64_t> out{streams, s[0] / streams};
  out.append(s.begin() + 1, s.end());
  return pb.reshape(x, out);
}

static Value replicate(PrimitiveBuilder &pb, ReplicateStreamsOp op) {
  Value x = op.getInput();
  ArrayRef<int64_t> s = pb.shape(x);
  int64_t p = op.getStreams();
  SmallVector<int64_t> one{1}, many{p};
  one.append(s.begin(), s.end());
  many.append(s.begin(), s.end());
  Value r = pb.broadcastTo(pb.reshape(x, one), many);
  SmallVector<int64_t> out(s);
  out[0] *= p;
  return pb.reshape(r, out);
}

static Value meanStreams(PrimitiveBuilder &pb, Value x, int64_t streams) {
  Value r = pb.reduceSum(splitStreams(pb, x, streams), {0});
  ArrayRef<int64_t> s = pb.shape(x);
  SmallVector<int64_t> out(s);
  out[0] /= streams;
  return pb.scale(pb.reshape(r, out), 1.0 / static_cast<double>(streams));
}

static Value aggregate(PrimitiveBuilder &pb, AggregateStreamsOp op) {
  Value zs = op.getInput();
  int64_t p = op.getNumStreams();
  ArrayRef<int64_t> s = pb.shape(zs);
  int64_t b = s[0] / p, seq = s[1], d = s[2];
  // cat = [z^0 | ... | z^{P-1}] along features.
  Value z4 = pb.transpose(splitStreams(pb, zs, p), {1, 2, 0, 3}); // B,S,P,d
  Value cat = pb.reshape(z4, {b, seq, p * d});
  Value h = pb.linear(cat, op.getFc1Weight(), op.getFc1Bias());
  h = pb.mul(h, pb.sigmoid(h));
  Value w = pb.softmax(pb.linear(h, op.getFc2Weight(), op.getFc2Bias()));
  double eps = op.getSmoothing().convertToDouble();
  w = pb.add(pb.scale(w, 1.0 - eps), pb.scalar(3, eps / p));
  Value mixed = pb.mul(z4, pb.reshape(w, {b, seq, p, 1}));
  return pb.reshape(pb.reduceSum(mixed, {2}), {b, seq, d});
}

static Value predict(PrimitiveBuilder &pb, AltUpPredictOp op) {
  Value x = op.getInput();
  ArrayRef<int64_t> s = pb.shape(x);
  int64_t k = pb.shape(op.getPredict())[0];
  int64_t rest = 1;
  for (int64_t d : s)
    rest *= d;
  rest /= k;
  Value r = pb.matmul(op.getPredict(), pb.reshape(x, {k, rest}));
  return pb.reshape(r, s);
}

static Value correct(PrimitiveBuilder &pb, AltUpCorrectOp op) {
  Value xhat = op.getPredicted();
  int64_t k = pb.shape(op.getCorrect())[0], j = op.getActive();
  ArrayRef<int64_t> s = pb.shape(op.getComputed());
  Value xj = pb.slice(xhat, 0, j * s[0], s[0]);
  Value delta = pb.sub(op.getComputed(), xj);
  SmallVector<int64_t> one{1}, coef{k};
  one.append(s.begin(), s.end());
  coef.append(s.size(), 1);
  Value y =
      pb.add(splitStreams(pb, xhat, k),
             pb.mul(pb.reshape(op.getCorrect(), coef), pb.reshape(delta, one)));
  return pb.reshape(y, pb.shape(xhat));
}

//===----------------------------------------------------------------------===//
// DecomposableOpInterface
//===----------------------------------------------------------------------===//

Results ReplicateStreamsOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(replicate(pb, *this));
}

Results SelectStreamOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  int64_t rows = pb.shape(getResult())[0];
  return one(pb.slice(getInput(), 0, getIndex() * rows, rows));
}

Results MeanStreamsOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(meanStreams(pb, getInput(), getStreams()));
}

Results AggregateStreamsOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(aggregate(pb, *this));
}

Results AltUpPredictOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(predict(pb, *this));
}

Results AltUpCorrectOp::decomposeOperation(OpBuilder &b) {
  PrimitiveBuilder pb(b, getLoc());
  return one(correct(pb, *this));
}
