//===- SMTCheck.cpp - Z3 equivalence checks of mix rewrites ---------------===//
//
// Encodes mix values as tensors of real-valued Z3 terms at shrunk sizes and
// asks Z3 whether two of them can differ.
//
//===----------------------------------------------------------------------===//

#include "mix/Verification/SMTCheck.h"

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <z3++.h>

#include <map>
#include <memory>
#include <numeric>
#include <set>

using namespace mlir;
using namespace mlir::mix;

namespace {

/// A tensor of real terms, row-major.
struct SymTensor {
  SmallVector<int64_t> shape;
  std::vector<z3::expr> elems;

  int64_t numel() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                           std::multiplies<int64_t>());
  }
};

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// The flat index into `shape` of the multi-index `idx` of a (possibly
/// larger) broadcast shape: dimensions of size 1 are pinned to 0.
int64_t broadcastIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> idx) {
  SmallVector<int64_t> strides = stridesOf(shape);
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat += (shape[d] == 1 ? 0 : idx[d]) * strides[d];
  return flat;
}

SmallVector<int64_t> unravel(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

class Encoder {
public:
  Encoder(z3::context &ctx, std::map<int64_t, int64_t> shrink)
      : ctx(ctx), shrink(std::move(shrink)) {}

  /// The encoding of \p v; failure, with the reason in `unsupported`, for
  /// IR the encoder cannot handle.
  FailureOr<const SymTensor *> get(Value v);

  /// Why the encoding failed.
  std::string unsupported;

  /// Names to give the free tensors of these values in a counterexample.
  llvm::DenseMap<Value, std::string> names;

  /// Constraints on the free variables (gate ranges).
  std::vector<z3::expr> constraints;
  /// The free tensors, for printing a counterexample.
  std::vector<std::pair<std::string, SymTensor>> leaves;

private:
  /// Notes \p why as the reason the encoding failed.
  LogicalResult fail(const char *why) {
    unsupported = why;
    return failure();
  }
  FailureOr<SmallVector<int64_t>> shrunk(Type type);
  FailureOr<SymTensor> leaf(Value v, StringRef name);
  FailureOr<SymTensor> gateLeaf(GateOp gate);
  FailureOr<SymTensor> encode(Operation *op, Value result);
  FailureOr<SymTensor> encodeStackedMixture(Value input, Value gate,
                                            Value kernels, Value bias,
                                            Value shared, bool mixFirst);
  FailureOr<SymTensor> encodeRegionMixture(MixtureOp op);
  FailureOr<SymTensor> encodeLinear(LinearOp lin);
  FailureOr<SymTensor> encodeReshape(Operation *op, Value result);
  FailureOr<SymTensor> encodeConstant(DenseFPElementsAttr attr, Value result);
  FailureOr<SymTensor> encodeMatmul(MatmulOp op);
  FailureOr<SymTensor> encodeConcat(ConcatOp op);
  FailureOr<SymTensor> encodeReduceSum(ReduceSumOp op);
  /// An op whose every result element is an element of its input: slices,
  /// broadcasts, transposes. Result element `idx` (of the shrunk result
  /// type) is input element `source(idx)`.
  FailureOr<SymTensor>
  encodeGather(Value input, Value result,
               function_ref<SmallVector<int64_t>(ArrayRef<int64_t>)> source);
  /// The encodings of \p lhs and \p rhs combined elementwise by \p fn.
  FailureOr<SymTensor> binary(Value lhs, Value rhs,
                              function_ref<z3::expr(z3::expr, z3::expr)> fn);
  /// The encoding of \p input with \p fn applied to every element.
  FailureOr<SymTensor> unary(Value input, function_ref<z3::expr(z3::expr)> fn);
  SymTensor linear(const SymTensor &x, const SymTensor &w, const SymTensor *b);
  SymTensor elementwise(const SymTensor &a, const SymTensor &b,
                        function_ref<z3::expr(z3::expr, z3::expr)> fn);
  z3::expr real(double v);

  z3::context &ctx;
  std::map<int64_t, int64_t> shrink;
  /// Each value's encoding, behind a pointer: callers hold references to
  /// encodings while more are added, which would move them in the map.
  llvm::DenseMap<Value, std::unique_ptr<SymTensor>> env;
  unsigned counter = 0;
};

} // namespace

z3::expr Encoder::real(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v)))
    return ctx.real_val(static_cast<int64_t>(v));
  std::string s = llvm::formatv("{0:f20}", v).str();
  return ctx.real_val(s.c_str());
}

FailureOr<SmallVector<int64_t>> Encoder::shrunk(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return fail("a value is not a statically shaped tensor");
  SmallVector<int64_t> shape;
  for (int64_t s : tensor.getShape()) {
    auto it = shrink.find(s);
    shape.push_back(it == shrink.end() ? s : it->second);
  }
  return shape;
}

FailureOr<SymTensor> Encoder::leaf(Value v, StringRef name) {
  FailureOr<SmallVector<int64_t>> shape = shrunk(v.getType());
  if (failed(shape))
    return failure();
  SymTensor t;
  t.shape = std::move(*shape);
  std::string base = name.str();
  for (int64_t i = 0, e = t.numel(); i < e; ++i)
    t.elems.push_back(
        ctx.real_const(llvm::formatv("{0}[{1}]", base, i).str().c_str()));
  leaves.emplace_back(base, t);
  return t;
}

FailureOr<SymTensor> Encoder::gateLeaf(GateOp gate) {
  std::string name = names.count(gate.getResult())
                         ? names.lookup(gate.getResult())
                         : llvm::formatv("g{0}", counter++).str();
  FailureOr<SmallVector<int64_t>> shape = shrunk(gate.getType());
  if (failed(shape))
    return failure();
  SymTensor t;
  t.shape = std::move(*shape);
  int64_t n = t.shape.back();
  for (int64_t i = 0, e = t.numel(); i < e; ++i) {
    bool last = (i % n) == n - 1;
    if (gate.rowsSumToOne() && last) {
      // The last weight of a normalised row is one minus the others.
      z3::expr rest = ctx.real_val(1);
      for (int64_t j = i - (n - 1); j < i; ++j)
        rest = rest - t.elems[j];
      constraints.push_back(rest >= 0);
      t.elems.push_back(rest);
      continue;
    }
    z3::expr g =
        ctx.real_const(llvm::formatv("{0}[{1}]", name, i).str().c_str());
    if (gate.rowsSumToOne())
      constraints.push_back(g >= 0);
    else
      constraints.push_back(g > 0 && g < 1);
    t.elems.push_back(g);
  }
  leaves.emplace_back(name, t);
  return t;
}

FailureOr<const SymTensor *> Encoder::get(Value v) {
  auto it = env.find(v);
  if (it != env.end())
    return it->second.get();
  FailureOr<SymTensor> t = failure();
  Operation *def = v.getDefiningOp();
  if (auto gate = dyn_cast_or_null<GateOp>(def))
    t = gateLeaf(gate);
  else if (matchPattern(v, m_Constant()))
    t = encode(def, v);
  else if (names.count(v))
    t = leaf(v, names.lookup(v));
  else if (def)
    t = encode(def, v);
  else
    t = leaf(v, llvm::formatv("arg{0}", counter++).str());
  if (failed(t))
    return failure();
  return env.try_emplace(v, std::make_unique<SymTensor>(std::move(*t)))
      .first->second.get();
}

SymTensor Encoder::elementwise(const SymTensor &a, const SymTensor &b,
                               function_ref<z3::expr(z3::expr, z3::expr)> fn) {
  SymTensor r;
  for (size_t d = 0; d < a.shape.size(); ++d)
    r.shape.push_back(std::max(a.shape[d], b.shape[d]));
  for (int64_t i = 0, e = r.numel(); i < e; ++i) {
    SmallVector<int64_t> idx = unravel(i, r.shape);
    r.elems.push_back(fn(a.elems[broadcastIndex(a.shape, idx)],
                         b.elems[broadcastIndex(b.shape, idx)]));
  }
  return r;
}

SymTensor Encoder::linear(const SymTensor &x, const SymTensor &w,
                          const SymTensor *b) {
  int64_t in = x.shape.back(), out = w.shape[0];
  SymTensor r;
  r.shape.assign(x.shape.begin(), x.shape.end() - 1);
  r.shape.push_back(out);
  int64_t tokens = x.numel() / in;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t o = 0; o < out; ++o) {
      z3::expr acc = b ? b->elems[o] : ctx.real_val(0);
      for (int64_t i = 0; i < in; ++i)
        acc = acc + x.elems[t * in + i] * w.elems[o * in + i];
      r.elems.push_back(acc);
    }
  return r;
}

/// Both forms of a stacked mixture: `mixFirst` forms the dynamic kernel
/// `sum_k g_k K_k` and applies it (the convolution); otherwise applies each
/// kernel and mixes the outputs (the MoE form).
FailureOr<SymTensor> Encoder::encodeStackedMixture(Value input, Value gate,
                                                   Value kernels, Value bias,
                                                   Value shared,
                                                   bool mixFirst) {
  FailureOr<const SymTensor *> xs = get(input);
  if (failed(xs))
    return failure();
  FailureOr<const SymTensor *> gs = get(gate);
  if (failed(gs))
    return failure();
  FailureOr<const SymTensor *> ks = get(kernels);
  if (failed(ks))
    return failure();
  const SymTensor &x = **xs, &g = **gs, &k = **ks;
  const SymTensor *b = nullptr, *c = nullptr;
  if (bias) {
    FailureOr<const SymTensor *> bs = get(bias);
    if (failed(bs))
      return failure();
    b = *bs;
  }
  if (shared) {
    FailureOr<const SymTensor *> cs = get(shared);
    if (failed(cs))
      return failure();
    c = *cs;
  }
  int64_t n = k.shape[0], f = k.shape[1], d = k.shape[2];
  size_t lead = x.shape.size() - 1;
  bool heads = g.shape.size() > x.shape.size();
  int64_t h = heads ? g.shape[g.shape.size() - 2] : 1;
  int64_t chunk = f / h;

  SymTensor r;
  r.shape.assign(x.shape.begin(), x.shape.end() - 1);
  r.shape.push_back(f);
  SmallVector<int64_t> tokenShape(x.shape.begin(), x.shape.end() - 1);
  int64_t tokens = x.numel() / d;
  for (int64_t t = 0; t < tokens; ++t) {
    SmallVector<int64_t> tIdx = unravel(t, tokenShape);
    for (int64_t o = 0; o < f; ++o) {
      SmallVector<int64_t> gIdx(tIdx);
      if (heads)
        gIdx.push_back(o / chunk);
      gIdx.push_back(0);
      auto gk = [&](int64_t kk) {
        gIdx.back() = kk;
        return g.elems[broadcastIndex(g.shape, gIdx)];
      };
      z3::expr acc = ctx.real_val(0);
      if (mixFirst) {
        for (int64_t i = 0; i < d; ++i) {
          z3::expr kt = ctx.real_val(0);
          for (int64_t kk = 0; kk < n; ++kk)
            kt = kt + gk(kk) * k.elems[(kk * f + o) * d + i];
          acc = acc + x.elems[t * d + i] * kt;
        }
        if (b)
          for (int64_t kk = 0; kk < n; ++kk)
            acc = acc + gk(kk) * b->elems[kk * f + o];
        if (c)
          acc = acc + c->elems[o];
      } else {
        for (int64_t kk = 0; kk < n; ++kk) {
          z3::expr e = ctx.real_val(0);
          for (int64_t i = 0; i < d; ++i)
            e = e + k.elems[(kk * f + o) * d + i] * x.elems[t * d + i];
          if (b)
            e = e + b->elems[kk * f + o];
          if (c)
            e = e + c->elems[o];
          acc = acc + gk(kk) * e;
        }
      }
      r.elems.push_back(acc);
    }
  }
  (void)lead;
  return r;
}

FailureOr<SymTensor> Encoder::encodeRegionMixture(MixtureOp op) {
  FailureOr<const SymTensor *> xs = get(op.getInput());
  if (failed(xs))
    return failure();
  FailureOr<const SymTensor *> gs = get(op.getGate());
  if (failed(gs))
    return failure();
  const SymTensor &x = **xs, &g = **gs;
  Block &block = op.getBody().front();
  int64_t n = g.shape.back();
  std::vector<SymTensor> experts;
  for (int64_t kk = 0; kk < n; ++kk) {
    // Bind the block arguments to this expert's slices, then encode the
    // body; values inside the region are forgotten between experts.
    env[block.getArgument(0)] = std::make_unique<SymTensor>(x);
    for (auto [i, w] : llvm::enumerate(op.getExpertWeights())) {
      FailureOr<const SymTensor *> weights = get(w);
      if (failed(weights))
        return failure();
      const SymTensor &all = **weights;
      SymTensor slice;
      slice.shape.assign(all.shape.begin() + 1, all.shape.end());
      int64_t size = slice.numel();
      for (int64_t j = 0; j < size; ++j)
        slice.elems.push_back(all.elems[kk * size + j]);
      env[block.getArgument(i + 1)] =
          std::make_unique<SymTensor>(std::move(slice));
    }
    for (Operation &nested : block.without_terminator())
      for (Value res : nested.getResults()) {
        FailureOr<SymTensor> encoded = encode(&nested, res);
        if (failed(encoded))
          return failure();
        env[res] = std::make_unique<SymTensor>(std::move(*encoded));
      }
    FailureOr<const SymTensor *> expert =
        get(cast<YieldOp>(block.getTerminator()).getValue());
    if (failed(expert))
      return failure();
    experts.push_back(**expert);
    for (Operation &nested : block)
      for (Value res : nested.getResults())
        env.erase(res);
    for (BlockArgument arg : block.getArguments())
      env.erase(arg);
  }
  SymTensor r;
  r.shape = experts[0].shape;
  int64_t f = r.shape.back();
  SmallVector<int64_t> tokenShape(r.shape.begin(), r.shape.end() - 1);
  for (int64_t i = 0, e = r.numel(); i < e; ++i) {
    SmallVector<int64_t> gIdx = unravel(i / f, tokenShape);
    gIdx.push_back(0);
    z3::expr acc = ctx.real_val(0);
    for (int64_t kk = 0; kk < n; ++kk) {
      gIdx.back() = kk;
      acc = acc + g.elems[broadcastIndex(g.shape, gIdx)] * experts[kk].elems[i];
    }
    r.elems.push_back(acc);
  }
  return r;
}

FailureOr<SymTensor>
Encoder::binary(Value lhs, Value rhs,
                function_ref<z3::expr(z3::expr, z3::expr)> fn) {
  FailureOr<const SymTensor *> a = get(lhs);
  if (failed(a))
    return failure();
  FailureOr<const SymTensor *> b = get(rhs);
  if (failed(b))
    return failure();
  return elementwise(**a, **b, fn);
}

FailureOr<SymTensor> Encoder::unary(Value input,
                                    function_ref<z3::expr(z3::expr)> fn) {
  FailureOr<const SymTensor *> in = get(input);
  if (failed(in))
    return failure();
  SymTensor r = **in;
  for (z3::expr &e : r.elems)
    e = fn(e);
  return r;
}

FailureOr<SymTensor> Encoder::encodeLinear(LinearOp lin) {
  FailureOr<const SymTensor *> x = get(lin.getInput());
  if (failed(x))
    return failure();
  FailureOr<const SymTensor *> w = get(lin.getWeight());
  if (failed(w))
    return failure();
  const SymTensor *b = nullptr;
  if (lin.getBias()) {
    FailureOr<const SymTensor *> bs = get(lin.getBias());
    if (failed(bs))
      return failure();
    b = *bs;
  }
  return linear(**x, **w, b);
}

FailureOr<SymTensor> Encoder::encodeReshape(Operation *op, Value result) {
  FailureOr<const SymTensor *> in = get(op->getOperand(0));
  if (failed(in))
    return failure();
  SymTensor r = **in;
  FailureOr<SmallVector<int64_t>> shape = shrunk(result.getType());
  if (failed(shape))
    return failure();
  r.shape = std::move(*shape);
  if (r.numel() != static_cast<int64_t>(r.elems.size()))
    return fail("a reshape does not survive shrinking");
  return r;
}

FailureOr<SymTensor> Encoder::encodeConstant(DenseFPElementsAttr attr,
                                             Value result) {
  FailureOr<SmallVector<int64_t>> shape = shrunk(result.getType());
  if (failed(shape))
    return failure();
  SymTensor r;
  r.shape = std::move(*shape);
  if (attr.isSplat()) {
    double v = attr.getSplatValue<APFloat>().convertToDouble();
    r.elems.assign(r.numel(), real(v));
    return r;
  }
  // A constant keeps its values: its sizes are never shrunk (shrinkMap).
  if (ArrayRef<int64_t>(r.shape) != attr.getType().getShape())
    return fail("a constant does not survive shrinking");
  for (APFloat v : attr.getValues<APFloat>())
    r.elems.push_back(real(v.convertToDouble()));
  return r;
}

FailureOr<SymTensor> Encoder::encodeMatmul(MatmulOp op) {
  FailureOr<const SymTensor *> as = get(op.getLhs());
  if (failed(as))
    return failure();
  FailureOr<const SymTensor *> bs = get(op.getRhs());
  if (failed(bs))
    return failure();
  const SymTensor &a = **as, &b = **bs;
  size_t rank = a.shape.size();
  if (rank < 2 || b.shape.size() != rank)
    return fail("a matrix product of unexpected rank");
  bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
  int64_t m = ta ? a.shape[rank - 1] : a.shape[rank - 2];
  int64_t k = ta ? a.shape[rank - 2] : a.shape[rank - 1];
  int64_t n = tb ? b.shape[rank - 2] : b.shape[rank - 1];
  int64_t kb = tb ? b.shape[rank - 1] : b.shape[rank - 2];
  if (k != kb)
    return fail("a matrix product does not survive shrinking");
  int64_t batch = a.numel() / (m * k);
  SymTensor r;
  r.shape.assign(a.shape.begin(), a.shape.end() - 2);
  r.shape.push_back(m);
  r.shape.push_back(n);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        z3::expr acc = ctx.real_val(0);
        for (int64_t q = 0; q < k; ++q) {
          int64_t ai = ta ? q * m + i : i * k + q;
          int64_t bi = tb ? j * k + q : q * n + j;
          acc = acc + a.elems[p * m * k + ai] * b.elems[p * k * n + bi];
        }
        r.elems.push_back(acc);
      }
  return r;
}

FailureOr<SymTensor> Encoder::encodeConcat(ConcatOp op) {
  FailureOr<const SymTensor *> as = get(op.getLhs());
  if (failed(as))
    return failure();
  FailureOr<const SymTensor *> bs = get(op.getRhs());
  if (failed(bs))
    return failure();
  const SymTensor &a = **as, &b = **bs;
  int64_t dim = op.getDim();
  SymTensor r;
  r.shape = a.shape;
  r.shape[dim] += b.shape[dim];
  for (int64_t i = 0, e = r.numel(); i < e; ++i) {
    SmallVector<int64_t> idx = unravel(i, r.shape);
    if (idx[dim] < a.shape[dim]) {
      r.elems.push_back(a.elems[broadcastIndex(a.shape, idx)]);
      continue;
    }
    idx[dim] -= a.shape[dim];
    r.elems.push_back(b.elems[broadcastIndex(b.shape, idx)]);
  }
  return r;
}

FailureOr<SymTensor> Encoder::encodeReduceSum(ReduceSumOp op) {
  FailureOr<const SymTensor *> in = get(op.getInput());
  if (failed(in))
    return failure();
  const SymTensor &x = **in;
  SymTensor r;
  r.shape = x.shape;
  for (int64_t d : op.getDims())
    r.shape[d] = 1;
  r.elems.assign(r.numel(), ctx.real_val(0));
  for (int64_t i = 0, e = x.numel(); i < e; ++i) {
    SmallVector<int64_t> idx = unravel(i, x.shape);
    int64_t j = broadcastIndex(r.shape, idx);
    r.elems[j] = r.elems[j] + x.elems[i];
  }
  return r;
}

FailureOr<SymTensor> Encoder::encodeGather(
    Value input, Value result,
    function_ref<SmallVector<int64_t>(ArrayRef<int64_t>)> source) {
  FailureOr<const SymTensor *> in = get(input);
  if (failed(in))
    return failure();
  const SymTensor &x = **in;
  FailureOr<SmallVector<int64_t>> shape = shrunk(result.getType());
  if (failed(shape))
    return failure();
  SymTensor r;
  r.shape = std::move(*shape);
  for (int64_t i = 0, e = r.numel(); i < e; ++i) {
    SmallVector<int64_t> from = source(unravel(i, r.shape));
    if (from.size() != x.shape.size() ||
        llvm::any_of(llvm::zip(from, x.shape), [](auto p) {
          auto [at, size] = p;
          return at >= size && size != 1;
        }))
      return fail("an element does not survive shrinking");
    r.elems.push_back(x.elems[broadcastIndex(x.shape, from)]);
  }
  return r;
}

FailureOr<SymTensor> Encoder::encode(Operation *op, Value result) {
  if (auto lin = dyn_cast<LinearOp>(op))
    return encodeLinear(lin);
  if (auto add = dyn_cast<AddOp>(op))
    return binary(add.getLhs(), add.getRhs(),
                  [](z3::expr a, z3::expr b) { return a + b; });
  if (auto sub = dyn_cast<SubOp>(op))
    return binary(sub.getLhs(), sub.getRhs(),
                  [](z3::expr a, z3::expr b) { return a - b; });
  if (auto mul = dyn_cast<MulOp>(op))
    return binary(mul.getLhs(), mul.getRhs(),
                  [](z3::expr a, z3::expr b) { return a * b; });
  if (auto relu = dyn_cast<ReluOp>(op))
    return unary(relu.getInput(), [&](z3::expr e) {
      return z3::ite(e > 0, e, ctx.real_val(0));
    });
  if (isa<GeluOp, SigmoidOp, TanhOp, SiluOp>(op)) {
    // Transcendental: an uninterpreted function, which is sound for
    // equivalence (equal for every function implies equal for this one).
    z3::func_decl fn = ctx.function(op->getName().getStringRef().str().c_str(),
                                    ctx.real_sort(), ctx.real_sort());
    return unary(op->getOperand(0), [&](z3::expr e) { return fn(e); });
  }
  if (auto m = dyn_cast<MixtureOp>(op)) {
    if (m.hasExpertRegion())
      return encodeRegionMixture(m);
    return encodeStackedMixture(m.getInput(), m.getGate(), m.getKernels(),
                                m.getBias(), m.getSharedBias(),
                                /*mixFirst=*/false);
  }
  if (auto conv = dyn_cast<DynamicConvOp>(op))
    return encodeStackedMixture(conv.getInput(), conv.getGate(),
                                conv.getKernels(), conv.getBias(),
                                conv.getSharedBias(), /*mixFirst=*/true);
  if (auto div = dyn_cast<DivOp>(op))
    return binary(div.getLhs(), div.getRhs(),
                  [](z3::expr a, z3::expr b) { return a / b; });
  if (auto neg = dyn_cast<NegOp>(op))
    return unary(neg.getInput(), [](z3::expr e) { return -e; });
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, ReshapeOp>(op))
    return encodeReshape(op, result);
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return encodeMatmul(matmul);
  if (auto slice = dyn_cast<SliceOp>(op))
    return encodeGather(slice.getInput(), result, [&](ArrayRef<int64_t> idx) {
      SmallVector<int64_t> from(idx);
      from[slice.getDim()] += slice.getOffset();
      return from;
    });
  if (auto concat = dyn_cast<ConcatOp>(op))
    return encodeConcat(concat);
  if (auto broadcast = dyn_cast<BroadcastOp>(op))
    // broadcastIndex pins the input's size-1 dimensions to 0.
    return encodeGather(
        broadcast.getInput(), result,
        [](ArrayRef<int64_t> idx) { return SmallVector<int64_t>(idx); });
  if (auto sum = dyn_cast<ReduceSumOp>(op))
    return encodeReduceSum(sum);
  if (auto transpose = dyn_cast<TransposeOp>(op))
    // Result dimension d is input dimension permutation[d].
    return encodeGather(
        transpose.getInput(), result, [&](ArrayRef<int64_t> idx) {
          SmallVector<int64_t> from(idx.size());
          for (auto [d, p] : llvm::enumerate(transpose.getPermutation()))
            from[p] = idx[d];
          return from;
        });
  DenseFPElementsAttr attr;
  if (matchPattern(result, m_Constant(&attr)))
    return encodeConstant(attr, result);
  // Anything else is a free input: sound, since the claim must then hold for
  // every value it could take.
  return leaf(result, llvm::formatv("v{0}", counter++).str());
}

//===----------------------------------------------------------------------===//
// Shrinking
//===----------------------------------------------------------------------===//

static void collectSizes(Value v, std::set<int64_t> &sizes,
                         llvm::SetVector<Operation *> &seen) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    sizes.insert(t.getShape().begin(), t.getShape().end());
  Operation *def = v.getDefiningOp();
  // Only ops the encoder encodes matter; anything else is a free leaf.
  if (!def || !isa<LinearOp, AddOp, SubOp, MulOp, DivOp, NegOp, ReluOp, GeluOp,
                   SigmoidOp, TanhOp, SiluOp, MixtureOp, DynamicConvOp,
                   tensor::CollapseShapeOp, tensor::ExpandShapeOp, ReshapeOp,
                   MatmulOp, SliceOp, ConcatOp, BroadcastOp, ReduceSumOp,
                   TransposeOp, arith::ConstantOp>(def))
    return;
  if (!seen.insert(def))
    return;
  for (Value operand : def->getOperands())
    collectSizes(operand, sizes, seen);
  def->walk([&](Operation *nested) {
    for (Value r : nested->getResults())
      collectSizes(r, sizes, seen);
    for (Region &region : nested->getRegions())
      for (Block &b : region)
        for (BlockArgument a : b.getArguments())
          collectSizes(a, sizes, seen);
  });
}

/// Maps every size to a small one. Sizes up to 4 stay; a larger size s
/// becomes the least common multiple of the small sizes dividing it (or 2),
/// so that every "t divides s" between a small t and s survives. Sizes that
/// occur only as token dimensions of `tokenValue` become 2 (or stay 1), and
/// the sizes of non-splat constants are kept.
static std::map<int64_t, int64_t> shrinkMap(Value source, Value target,
                                            Value tokenValue) {
  std::set<int64_t> sizes, tokenSizes;
  llvm::SetVector<Operation *> seen;
  collectSizes(source, sizes, seen);
  collectSizes(target, sizes, seen);
  // A value is an activation when its leading dimensions are the tokens'
  // (or 1, broadcast); its last dimension is a feature. Every dimension of
  // any other value (weights) is a feature dimension.
  ArrayRef<int64_t> tokens =
      cast<RankedTensorType>(tokenValue.getType()).getShape().drop_back();
  std::set<int64_t> nonToken;
  // The tokens flattened into one dimension, (B*S, d).
  int64_t allTokens = 1;
  for (int64_t s : tokens)
    allTokens *= s;
  bool flattened = false;
  auto classify = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return;
    ArrayRef<int64_t> shape = t.getShape();
    if (tokens.size() > 1 && shape.size() == 2 && shape[0] == allTokens) {
      flattened = true;
      nonToken.insert(shape[1]);
      return;
    }
    bool activation =
        shape.size() >= tokens.size() + 1 &&
        llvm::all_of(llvm::zip(shape.take_front(tokens.size()), tokens),
                     [](auto p) {
                       auto [a, b] = p;
                       return a == b || a == 1;
                     });
    ArrayRef<int64_t> features =
        activation ? shape.drop_front(tokens.size()) : shape;
    nonToken.insert(features.begin(), features.end());
  };
  for (Operation *op : seen) {
    for (Value v : op->getOperands())
      classify(v);
    for (Value v : op->getResults())
      classify(v);
  }
  if (auto t = dyn_cast<RankedTensorType>(tokenValue.getType()))
    for (int64_t s : t.getShape().drop_back())
      tokenSizes.insert(s);

  // A constant keeps its values, so its sizes are kept as they are; so does
  // the number of experts, which the kernels of a region are sliced by.
  std::set<int64_t> kept;
  if (auto m = source.getDefiningOp<MixtureOp>())
    kept.insert(
        cast<RankedTensorType>(m.getGate().getType()).getShape().back());
  for (Operation *op : seen) {
    DenseFPElementsAttr attr;
    if (isa<arith::ConstantOp>(op) &&
        matchPattern(op->getResult(0), m_Constant(&attr)) && !attr.isSplat())
      kept.insert(attr.getType().getShape().begin(),
                  attr.getType().getShape().end());
  }

  std::map<int64_t, int64_t> map;
  bool flatTokens =
      flattened && !tokenSizes.count(allTokens) && !nonToken.count(allTokens);
  for (int64_t s : sizes) {
    if (kept.count(s)) {
      map[s] = s;
      continue;
    }
    // Two tokens in every token dimension (two batch rows, two positions):
    // enough for an op that moves data across tokens to show.
    if (tokenSizes.count(s) && !nonToken.count(s)) {
      map[s] = std::min<int64_t>(s, 2);
      continue;
    }
    if (s <= 4) {
      map[s] = s;
      continue;
    }
    int64_t l = 1;
    for (int64_t t : sizes)
      if (t > 1 && t <= 4 && s % t == 0)
        l = std::lcm(l, t);
    map[s] = l == 1 ? 2 : l;
  }
  // The flattened tokens are as many as the shrunk token dimensions hold.
  if (flatTokens && !kept.count(allTokens)) {
    int64_t shrunkTokens = 1;
    for (int64_t s : tokens)
      shrunkTokens *= map.count(s) ? map[s] : s;
    map[allTokens] = shrunkTokens;
  }
  return map;
}

/// A model value as a decimal.
static std::string value(const z3::model &model, const z3::expr &e) {
  z3::expr v = model.eval(e, true);
  return v.is_numeral() ? v.get_decimal_string(6) : v.to_string();
}

static std::string render(const z3::model &model, const SymTensor &t,
                          size_t limit = 16) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  for (size_t i = 0; i < t.elems.size() && i < limit; ++i) {
    if (i)
      os << ", ";
    os << value(model, t.elems[i]);
  }
  if (t.elems.size() > limit)
    os << ", ...";
  os << "]";
  return s;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "(";
  llvm::interleave(shape, os, ",");
  os << ")";
  return s;
}

//===----------------------------------------------------------------------===//
// The check
//===----------------------------------------------------------------------===//

/// Names the operands of a mixture \p source as the counterexample shows
/// them.
static void nameMixtureOperands(Encoder &enc, Value source) {
  auto m = source.getDefiningOp<MixtureOp>();
  if (!m)
    return;
  enc.names[m.getInput()] = "x";
  enc.names[m.getGate()] = "g";
  if (m.getKernels())
    enc.names[m.getKernels()] = "K";
  if (m.getBias())
    enc.names[m.getBias()] = "b";
  if (m.getSharedBias())
    enc.names[m.getSharedBias()] = "c";
}

/// The simplifier's settings for the difference of two elements.
static z3::params simplifierParams(z3::context &ctx) {
  z3::params simp(ctx);
  simp.set("som", true);
  // Mixtures multiply sums by sums: let sum-of-monomials expand them.
  simp.set("som_blowup", 1000000u);
  // Bound the work: a check that cannot finish is reported as unknown.
  simp.set("max_steps", 2000000u);
  return simp;
}

/// A solver bounded by \p timeoutMs holding \p constraints.
static z3::solver makeSolver(z3::context &ctx, unsigned timeoutMs,
                             const std::vector<z3::expr> &constraints) {
  z3::solver solver(ctx);
  z3::params sp(ctx);
  sp.set("timeout", timeoutMs);
  sp.set("rlimit", 20000000u);
  solver.set(sp);
  for (const z3::expr &c : constraints)
    solver.add(c);
  return solver;
}

/// "SIZES, element I: SOURCE = A but TARGET = B with LEAF(SHAPE) = [...]..."
static std::string describeCounterexample(const z3::model &model,
                                          const std::string &sizes, size_t i,
                                          Value source, Value target,
                                          const SymTensor &src,
                                          const SymTensor &tgt,
                                          const Encoder &enc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << sizes << ", element " << i << ": " << source.getDefiningOp()->getName()
     << " = " << value(model, src.elems[i]) << " but "
     << target.getDefiningOp()->getName() << " = " << value(model, tgt.elems[i])
     << " with";
  for (auto &[name, t] : enc.leaves)
    os << " " << name << shapeString(t.shape) << " = " << render(model, t);
  return s;
}

/// The check itself; Z3's errors are left to the caller (checkWithZ3).
static SMTCheckResult check(Value source, Value target, Value tokenValue,
                            unsigned timeoutMs) {
  SMTCheckResult result;
  z3::context ctx;
  Encoder enc(ctx, shrinkMap(source, target, tokenValue));
  nameMixtureOperands(enc, source);
  FailureOr<const SymTensor *> srcEncoded = enc.get(source);
  if (failed(srcEncoded)) {
    result.message = enc.unsupported;
    return result;
  }
  SymTensor src = **srcEncoded;
  FailureOr<const SymTensor *> tgtEncoded = enc.get(target);
  if (failed(tgtEncoded)) {
    result.message = enc.unsupported;
    return result;
  }
  SymTensor tgt = **tgtEncoded;
  if (src.shape != tgt.shape) {
    result.message = "the two values have different shapes";
    return result;
  }
  std::string sizes = "at shape " + shapeString(src.shape);
  z3::params simp = simplifierParams(ctx);
  z3::solver solver = makeSolver(ctx, timeoutMs, enc.constraints);
  for (size_t i = 0; i < src.elems.size(); ++i) {
    z3::expr diff = (src.elems[i] - tgt.elems[i]).simplify(simp);
    if (diff.is_numeral() && diff.get_decimal_string(0) == "0")
      continue;
    if (getenv("MIX_SMT_DEBUG"))
      llvm::errs() << "element " << i << " diff: " << diff.to_string() << "\n";
    solver.push();
    solver.add(src.elems[i] != tgt.elems[i]);
    z3::check_result r = solver.check();
    if (r == z3::unsat) {
      solver.pop();
      continue;
    }
    if (r == z3::unknown) {
      result.message = "Z3 could not decide element " + std::to_string(i) +
                       " " + sizes + ": " + solver.reason_unknown();
      return result;
    }
    z3::model model = solver.get_model();
    result.message =
        describeCounterexample(model, sizes, i, source, target, src, tgt, enc);
    result.status = SMTCheckResult::Status::Counterexample;
    return result;
  }
  result.status = SMTCheckResult::Status::Equivalent;
  result.message =
      sizes + " over " + std::to_string(enc.leaves.size()) + " free tensors";
  return result;
}

/// Runs \p run, which calls the Z3 C++ API. That API reports its errors by
/// throwing z3::exception (with exceptions off, a failed call returns a null
/// term that the next call would crash on); this is the one place in the
/// compiler that catches one, and it becomes the check's result at once.
static SMTCheckResult checkWithZ3(function_ref<SMTCheckResult()> run) {
  try {
    return run();
  } catch (const z3::exception &e) {
    SMTCheckResult result;
    result.message = std::string("Z3 error: ") + e.msg();
    return result;
  }
}

SMTCheckResult mlir::mix::checkEquivalence(Value source, Value target,
                                           unsigned timeoutMs) {
  Value tokenValue = source;
  if (auto m = source.getDefiningOp<MixtureOp>())
    tokenValue = m.getInput();
  return checkWithZ3(
      [&] { return check(source, target, tokenValue, timeoutMs); });
}
