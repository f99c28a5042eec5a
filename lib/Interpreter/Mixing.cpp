//===- Mixing.cpp - Layer and gated-mixing kernels ------------------------===//
//
// mix.linear, mix.matmul, mix.layer_norm, the four kinds of mix.gate, the
// mixing of experts' outputs for mix.mixture, and mix.dynamic_conv, each
// from its op description and docs/models.md §2-3.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::interp;

bool interp::isMixingOp(Operation *op) {
  return isa<LinearOp, MatmulOp, LayerNormOp, GateOp, DynamicConvOp>(op);
}

static FailureOr<RefTensor> failWith(std::string &error, const Twine &message) {
  error = message.str();
  return failure();
}

FailureOr<RefTensor> interp::linear(const RefTensor &x, const RefTensor &w,
                                    const RefTensor *b, std::string &error) {
  if (w.shape.size() != 2 || x.shape.empty() || x.shape.back() != w.shape[1])
    return failWith(error, "cannot apply a weight of shape " +
                               shapeStr(w.shape) + " to an input of shape " +
                               shapeStr(x.shape));
  int64_t out = w.shape[0], in = w.shape[1], tokens = x.numel() / in;
  if (b && (b->shape.size() != 1 || b->shape[0] != out))
    return failWith(error, "a bias of shape " + shapeStr(b->shape) +
                               " does not fit " + Twine(out) + " outputs");
  SmallVector<int64_t> shape(x.shape);
  shape.back() = out;
  RefTensor r = RefTensor::zeros(shape);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t o = 0; o < out; ++o) {
      double acc = b ? b->data[o] : 0;
      for (int64_t i = 0; i < in; ++i)
        acc += x.data[t * in + i] * w.data[o * in + i];
      r.data[t * out + o] = acc;
    }
  return r;
}

/// `result[..., i, j] = sum_k A[..., i, k] B[..., k, j]`, A being lhs or,
/// with `transpose_lhs`, lhs with its last two dimensions swapped (and
/// likewise B).
static FailureOr<RefTensor> matmul(MatmulOp op, const KernelArgs &args) {
  const RefTensor &a = args[0], &b = args[1];
  size_t rank = a.shape.size();
  if (rank < 2 || b.shape.size() != rank ||
      ArrayRef<int64_t>(a.shape).drop_back(2) !=
          ArrayRef<int64_t>(b.shape).drop_back(2))
    return args.fail("operands " + shapeStr(a.shape) + " and " +
                     shapeStr(b.shape) +
                     " are not batches of matrices of the same batch shape");
  bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
  int64_t ar = a.shape[rank - 2], ac = a.shape[rank - 1];
  int64_t br = b.shape[rank - 2], bc = b.shape[rank - 1];
  int64_t m = ta ? ac : ar, k = ta ? ar : ac;
  int64_t kb = tb ? bc : br, n = tb ? br : bc;
  if (k != kb)
    return args.fail("contraction sizes differ: " + Twine(k) + " and " +
                     Twine(kb));
  SmallVector<int64_t> shape(a.shape.begin(), a.shape.end() - 2);
  int64_t batch = product(shape);
  shape.append({m, n});
  RefTensor r = RefTensor::zeros(shape);
  for (int64_t p = 0; p < batch; ++p) {
    const double *pa = a.data.data() + p * ar * ac;
    const double *pb = b.data.data() + p * br * bc;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < k; ++l)
          acc += (ta ? pa[l * ac + i] : pa[i * ac + l]) *
                 (tb ? pb[j * bc + l] : pb[l * bc + j]);
        r.data[(p * m + i) * n + j] = acc;
      }
  }
  return r;
}

/// `(x - mean) / sqrt(var + eps) * w + b` over the last dimension, with the
/// biased variance.
static FailureOr<RefTensor> layerNorm(const RefTensor &x, const RefTensor &w,
                                      const RefTensor &b, double eps,
                                      std::string &error) {
  if (x.shape.empty())
    return failWith(error, "cannot normalise a tensor of rank 0");
  int64_t d = x.shape.back(), rows = x.numel() / d;
  if (ArrayRef<int64_t>(w.shape) != ArrayRef<int64_t>(d) ||
      ArrayRef<int64_t>(b.shape) != ArrayRef<int64_t>(d))
    return failWith(error, "the norm weight " + shapeStr(w.shape) +
                               " and bias " + shapeStr(b.shape) +
                               " do not fit rows of " + Twine(d));
  RefTensor r = x;
  for (int64_t t = 0; t < rows; ++t) {
    const double *row = x.data.data() + t * d;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i)
      mean += row[i];
    mean /= d;
    for (int64_t i = 0; i < d; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= d;
    double inv = 1 / std::sqrt(var + eps);
    for (int64_t i = 0; i < d; ++i)
      r.data[t * d + i] = (row[i] - mean) * inv * w.data[i] + b.data[i];
  }
  return r;
}

/// The routing weights of a gate: logits `input @ weight^T + bias` (per
/// head chunk for multi_head; of `LN(input * modulation; norm)` for
/// context_aware; times `scale` for adaptive), then a softmax over the N
/// streams or an elementwise sigmoid.
static FailureOr<RefTensor> gate(GateOp op, const KernelArgs &args) {
  RefTensor m = *args.valueOf(op.getInput());
  const RefTensor &w = *args.valueOf(op.getWeight());
  const RefTensor &b = *args.valueOf(op.getBias());
  GatingKind kind = op.getKind();
  if (m.shape.empty())
    return args.fail("the input has rank 0");
  int64_t d = m.shape.back(), tokens = m.numel() / d;
  bool heads = kind == GatingKind::multi_head;
  if (w.shape.size() != (heads ? 3u : 2u))
    return args.fail("a " + stringifyGatingKind(kind) +
                     " gate cannot have a weight of shape " +
                     shapeStr(w.shape));
  int64_t h = heads ? w.shape[0] : 1, n = heads ? w.shape[1] : w.shape[0];
  int64_t chunk = w.shape.back();
  if (chunk * h != d)
    return args.fail("the weight " + shapeStr(w.shape) +
                     " does not fit input features of size " + Twine(d));
  if (b.numel() != h * n || b.shape.size() != (heads ? 2u : 1u))
    return args.fail("the bias " + shapeStr(b.shape) +
                     " does not fit the weight " + shapeStr(w.shape));

  if (kind == GatingKind::context_aware) {
    const RefTensor *mod = args.valueOf(op.getModulation());
    const RefTensor *lw = args.valueOf(op.getNormWeight());
    const RefTensor *lb = args.valueOf(op.getNormBias());
    if (!mod || !lw || !lb || !op.getEps())
      return args.fail("a context_aware gate needs a modulation, "
                       "norm(weight, bias) and eps");
    if (mod->shape != m.shape)
      return args.fail("the modulation " + shapeStr(mod->shape) +
                       " does not have the input's shape " + shapeStr(m.shape));
    for (auto [v, s] : llvm::zip(m.data, mod->data))
      v *= s;
    FailureOr<RefTensor> normed =
        layerNorm(m, *lw, *lb, op.getEps()->convertToDouble(), args.error);
    if (failed(normed))
      return failure();
    m = std::move(*normed);
  }
  const RefTensor *scale = nullptr;
  if (kind == GatingKind::adaptive) {
    scale = args.valueOf(op.getScale());
    if (!scale || scale->numel() != tokens ||
        scale->shape.size() != m.shape.size() || scale->shape.back() != 1)
      return args.fail("an adaptive gate needs a scale of shape (..., 1) "
                       "over the input's tokens");
  }

  SmallVector<int64_t> shape(m.shape.begin(), m.shape.end() - 1);
  if (heads)
    shape.push_back(h);
  shape.push_back(n);
  RefTensor r = RefTensor::zeros(shape);
  std::vector<double> logits(n);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < h; ++j) {
      for (int64_t k = 0; k < n; ++k) {
        double acc = b.data[j * n + k];
        for (int64_t i = 0; i < chunk; ++i)
          acc +=
              m.data[t * d + j * chunk + i] * w.data[(j * n + k) * chunk + i];
        logits[k] = scale ? scale->data[t] * acc : acc;
      }
      double *row = r.data.data() + (t * h + j) * n;
      if (op.getNormalization() == GateNormalization::sigmoid) {
        for (int64_t k = 0; k < n; ++k)
          row[k] = 1 / (1 + std::exp(-logits[k]));
        continue;
      }
      double most = *std::max_element(logits.begin(), logits.end()), sum = 0;
      for (int64_t k = 0; k < n; ++k)
        sum += row[k] = std::exp(logits[k] - most);
      for (int64_t k = 0; k < n; ++k)
        row[k] /= sum;
    }
  return r;
}

namespace {
/// How a mixture or dynamic convolution reads its gate: per token of the
/// input's leading dimensions (broadcast along the gate's size-1 ones), per
/// head of output channels, per stream.
struct GateReader {
  const RefTensor &gate;
  int64_t heads = 1, streams = 0, headWidth = 0;
  /// Strides of the leading dimensions, 0 where the gate is shared.
  SmallVector<int64_t> strides;

  explicit GateReader(const RefTensor &gate) : gate(gate) {}

  /// Checks the gate against the leading shape `lead` of the input and the
  /// `f` output channels.
  LogicalResult init(ArrayRef<int64_t> lead, int64_t f, std::string &error) {
    size_t rank = gate.shape.size();
    if (rank != lead.size() + 1 && rank != lead.size() + 2) {
      error = "the gate " + shapeStr(gate.shape) +
              " is not (..., N) or (..., H, N) over the leading dimensions " +
              shapeStr(lead);
      return failure();
    }
    heads = rank == lead.size() + 2 ? gate.shape[rank - 2] : 1;
    streams = gate.shape.back();
    if (f % heads != 0) {
      error = std::to_string(f) + " output channels do not split into " +
              std::to_string(heads) + " gate heads";
      return failure();
    }
    headWidth = f / heads;
    SmallVector<int64_t> all = stridesOf(gate.shape);
    for (auto [i, size] : llvm::enumerate(lead)) {
      int64_t have = gate.shape[i];
      if (have != size && have != 1) {
        error = "gate dimension " + std::to_string(i) + " is " +
                std::to_string(have) + ", not " + std::to_string(size) +
                " or 1";
        return failure();
      }
      strides.push_back(have == 1 ? 0 : all[i]);
    }
    return success();
  }

  /// The offset of the gate row of the token at `index`, for head 0.
  int64_t rowOf(ArrayRef<int64_t> index) const {
    int64_t at = 0;
    for (auto [i, s] : llvm::zip(index, strides))
      at += i * s;
    return at;
  }
  /// g_k for output channel `o` of the token whose row is at `row`.
  double at(int64_t row, int64_t o, int64_t k) const {
    return gate.data[row + (o / headWidth) * streams + k];
  }
};
} // namespace

FailureOr<RefTensor> interp::mixExperts(const RefTensor &gate,
                                        ArrayRef<RefTensor> experts,
                                        std::string &error) {
  if (experts.empty() || experts[0].shape.empty())
    return failWith(error, "no experts to mix");
  const RefTensor &first = experts[0];
  for (const RefTensor &e : experts)
    if (e.shape != first.shape)
      return failWith(error, "experts' outputs " + shapeStr(first.shape) +
                                 " and " + shapeStr(e.shape) + " differ");
  ArrayRef<int64_t> lead = ArrayRef<int64_t>(first.shape).drop_back();
  int64_t f = first.shape.back();
  GateReader g(gate);
  if (failed(g.init(lead, f, error)))
    return failure();
  if (g.streams != static_cast<int64_t>(experts.size()))
    return failWith(error, "the gate routes over " + Twine(g.streams) +
                               " streams, not " + Twine(experts.size()));
  RefTensor r = RefTensor::zeros(first.shape);
  int64_t t = 0;
  forEachIndex(lead, [&](ArrayRef<int64_t> index) {
    int64_t row = g.rowOf(index);
    for (int64_t o = 0; o < f; ++o) {
      double acc = 0;
      for (auto [k, e] : llvm::enumerate(experts))
        acc += g.at(row, o, k) * e.data[t * f + o];
      r.data[t * f + o] = acc;
    }
    ++t;
  });
  return r;
}

/// `x Ktilde^T + btilde (+ c)` with `Ktilde = sum_k g_k K_k` and
/// `btilde = sum_k g_k b_k`, the kernel mixed per token (and head) before
/// it is applied. The mixing order does not change the value.
static FailureOr<RefTensor> dynamicConv(DynamicConvOp op,
                                        const KernelArgs &args) {
  const RefTensor &x = *args.valueOf(op.getInput());
  const RefTensor &kernels = *args.valueOf(op.getKernels());
  const RefTensor *bias = args.valueOf(op.getBias());
  const RefTensor *shared = args.valueOf(op.getSharedBias());
  if (x.shape.empty() || kernels.shape.size() != 3 ||
      kernels.shape[2] != x.shape.back())
    return args.fail("kernels " + shapeStr(kernels.shape) +
                     " do not apply to an input of shape " + shapeStr(x.shape));
  int64_t n = kernels.shape[0], f = kernels.shape[1], d = kernels.shape[2];
  if (bias && ArrayRef<int64_t>(bias->shape) != ArrayRef<int64_t>({n, f}))
    return args.fail("the bias " + shapeStr(bias->shape) + " is not (" +
                     Twine(n) + "," + Twine(f) + ")");
  if (shared && ArrayRef<int64_t>(shared->shape) != ArrayRef<int64_t>(f))
    return args.fail("the shared bias " + shapeStr(shared->shape) +
                     " is not (" + Twine(f) + ")");
  ArrayRef<int64_t> lead = ArrayRef<int64_t>(x.shape).drop_back();
  GateReader g(*args.valueOf(op.getGate()));
  if (failed(g.init(lead, f, args.error)))
    return failure();
  if (g.streams != n)
    return args.fail("the gate routes over " + Twine(g.streams) +
                     " streams, but there are " + Twine(n) + " kernels");
  SmallVector<int64_t> shape(lead);
  shape.push_back(f);
  RefTensor r = RefTensor::zeros(shape);
  std::vector<double> mixed(d);
  int64_t t = 0;
  forEachIndex(lead, [&](ArrayRef<int64_t> index) {
    int64_t row = g.rowOf(index);
    for (int64_t o = 0; o < f; ++o) {
      std::fill(mixed.begin(), mixed.end(), 0.0);
      double acc = shared ? shared->data[o] : 0;
      for (int64_t k = 0; k < n; ++k) {
        double gk = g.at(row, o, k);
        for (int64_t i = 0; i < d; ++i)
          mixed[i] += gk * kernels.data[(k * f + o) * d + i];
        if (bias)
          acc += gk * bias->data[k * f + o];
      }
      for (int64_t i = 0; i < d; ++i)
        acc += x.data[t * d + i] * mixed[i];
      r.data[t * f + o] = acc;
    }
    ++t;
  });
  return r;
}

FailureOr<RefTensor> interp::computeMixingOp(Operation *op,
                                             const KernelArgs &args) {
  return llvm::TypeSwitch<Operation *, FailureOr<RefTensor>>(op)
      .Case([&](LinearOp l) {
        return linear(args[0], args[1], args.valueOf(l.getBias()), args.error);
      })
      .Case([&](MatmulOp m) { return matmul(m, args); })
      .Case([&](LayerNormOp l) {
        return layerNorm(args[0], args[1], args[2],
                         l.getEps().convertToDouble(), args.error);
      })
      .Case([&](GateOp g) { return gate(g, args); })
      .Case([&](DynamicConvOp c) { return dynamicConv(c, args); })
      .Default([&](Operation *) -> FailureOr<RefTensor> {
        return args.fail("not a layer or mixing op");
      });
}
