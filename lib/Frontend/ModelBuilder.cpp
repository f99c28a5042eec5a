//===- ModelBuilder.cpp - Model spec to mix IR ----------------------------===//
//
// Emits the forward pass and loss of dense GPT-2, cMoLLM (four gatings),
// ParaScale and AltUp exactly as docs/models.md §2-5 write them.
//
//===----------------------------------------------------------------------===//

#include "mix/Frontend/ModelBuilder.h"

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mix;

namespace {
class ModelBuilder {
public:
  ModelBuilder(MLIRContext *ctx, const ModelSpec &spec, int64_t batch,
               int64_t seq, int64_t streamShards, int64_t decodeBatch,
               int64_t prefillChunk)
      : b(ctx), loc(b.getUnknownLoc()), spec(spec), batch(batch), seq(seq),
        streamShards(streamShards), decodeBatch(decodeBatch),
        prefillChunk(prefillChunk) {}

  OwningOpRef<ModuleOp> build();

private:
  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  static ArrayRef<int64_t> shape(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  Value param(const std::string &name) {
    auto it = params.find(name);
    assert(it != params.end() && "parameter missing from the table");
    return it->second;
  }
  /// A location naming the model part, so diagnostics and IR dumps say
  /// which layer an op belongs to.
  Location at(const std::string &what) {
    return NameLoc::get(b.getStringAttr(what));
  }

  Value constant(ArrayRef<int64_t> shp, double value) {
    auto type = f32(shp);
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type, b.getFloatAttr(b.getF32Type(), value)));
  }

  Value linear(Value x, const std::string &name, bool bias = true) {
    Value w = param(name + ".weight");
    SmallVector<int64_t> out(shape(x).drop_back());
    out.push_back(shape(w)[0]);
    Value bv = bias ? param(name + ".bias") : Value();
    return LinearOp::create(b, at(name), f32(out), x, w, bv);
  }

  Value layerNorm(Value x, const std::string &name) {
    return LayerNormOp::create(b, at(name), x.getType(), x,
                               param(name + ".weight"), param(name + ".bias"),
                               b.getF64FloatAttr(spec.layerNormEps));
  }

  template <typename OpTy> Value binary(Value lhs, Value rhs) {
    SmallVector<int64_t> out;
    for (auto [a, c] : llvm::zip(shape(lhs), shape(rhs)))
      out.push_back(std::max(a, c));
    return OpTy::create(b, loc, f32(out), lhs, rhs);
  }

  /// Channels [offset, offset+1) of the last dimension, keeping the rank.
  Value lastChannel(Value x, int64_t offset) {
    ArrayRef<int64_t> s = shape(x);
    SmallVector<OpFoldResult> offsets(s.size(), b.getIndexAttr(0)), sizes,
        strides(s.size(), b.getIndexAttr(1));
    for (int64_t d : s)
      sizes.push_back(b.getIndexAttr(d));
    offsets.back() = b.getIndexAttr(offset);
    sizes.back() = b.getIndexAttr(1);
    return tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
  }

  /// A bias of shape (d) as (1, ..., 1, d), to add to a rank-`rank` tensor.
  Value expandBias(Value bias, int64_t rank) {
    SmallVector<int64_t> s(rank, 1);
    s.back() = shape(bias)[0];
    SmallVector<ReassociationIndices> groups(1);
    for (int64_t i = 0; i < rank; ++i)
      groups[0].push_back(i);
    return tensor::ExpandShapeOp::create(b, loc, f32(s), bias, groups);
  }

  Value block(Value x, int64_t l, Value &aux);
  Value attention(Value a, const std::string &p);
  Value ffn(Value m, const std::string &p, Value &aux);
  Value cmollmFFN(Value m, const std::string &p, Value &aux);
  Value contextMean(Value m);
  /// The layers, the final norm and (ParaScale, AltUp) the streams'
  /// combination: the embedded tokens \p x to the final hidden state, with
  /// the balance losses of the layers that have one.
  Value trunk(Value x, SmallVector<Value> &auxes);
  /// The function's argument types: the parameters (this rank's part of
  /// the stream-sharded ones), then \p extra.
  SmallVector<Type> parameterTypes(ArrayRef<Type> extra);
  /// Names \p fn's first arguments after the parameters (and marks the
  /// sharded ones) and makes them the values param() returns.
  void bindParameters(func::FuncOp fn);
  /// @decode (\p len 1) or @prefill (\p len the prefill chunk).
  void buildDecode(StringRef name, int64_t len);

  /// The decode step's state: its values in decodeStateTable() order, read
  /// (and replaced by their updates) in that order as the layers are
  /// built. Null outside @decode.
  struct DecodeState {
    Value position;
    SmallVector<Value> values;
    unsigned next = 0;
    /// The next state value; \p index receives its place, to update it.
    Value take(unsigned &index) {
      index = next;
      return values[next++];
    }
  };
  DecodeState *decode = nullptr;

  OpBuilder b;
  Location loc;
  const ModelSpec &spec;
  int64_t batch, seq, streamShards, decodeBatch, prefillChunk;
  llvm::StringMap<Value> params;
};
} // namespace

Value ModelBuilder::attention(Value a, const std::string &p) {
  Value qkv = linear(a, p + "attn.c_attn");
  SmallVector<int64_t> out(shape(a));
  Value pk, pv;
  if (spec.arch == Arch::ParaScale) {
    pk = param(p + "attn.prefix_k");
    pv = param(p + "attn.prefix_v");
  }
  Value o;
  if (decode) {
    // A decode step: the new position against the layer's cache.
    unsigned k, v;
    Value kCache = decode->take(k), vCache = decode->take(v);
    auto step = CachedAttentionOp::create(
        b, at(p + "attn"),
        TypeRange{f32(out), kCache.getType(), vCache.getType()}, qkv, kCache,
        vCache, decode->position, pk, pv, b.getI64IntegerAttr(spec.nHead));
    decode->values[k] = step.getNewKCache();
    decode->values[v] = step.getNewVCache();
    o = step.getResult();
  } else {
    o = AttentionOp::create(b, at(p + "attn"), f32(out), qkv, pk, pv,
                            b.getI64IntegerAttr(spec.nHead));
  }
  return linear(o, p + "attn.c_proj");
}

Value ModelBuilder::cmollmFFN(Value m, const std::string &p, Value &aux) {
  int64_t n = spec.cmollm.streams, f = spec.dFF;
  SmallVector<int64_t> lead(shape(m).drop_back());
  auto gateType = [&](bool heads) {
    SmallVector<int64_t> s(lead);
    if (heads)
      s.push_back(spec.cmollm.gateHeads);
    s.push_back(n);
    return f32(s);
  };
  Location gl = at(p + "mlp.gate");
  Value gw = param(p + "mlp.gate.weight"), gb = param(p + "mlp.gate.bias");
  Value g, shift, magnitude;
  switch (spec.cmollm.gating) {
  case Gating::Simple:
    g = GateOp::create(b, gl, gateType(false), GatingKind::simple,
                       GateNormalization::softmax, m, gw, gb, Value(), Value(),
                       Value(), Value(), nullptr);
    break;
  case Gating::MultiHead:
    g = GateOp::create(b, gl, gateType(true), GatingKind::multi_head,
                       GateNormalization::softmax, m, gw, gb, Value(), Value(),
                       Value(), Value(), nullptr);
    break;
  case Gating::ContextAware: {
    Value c = contextMean(m);
    Value h = ReluOp::create(b, loc, linear(c, p + "mlp.ctx.fc1"));
    Value mod = SigmoidOp::create(b, loc, linear(h, p + "mlp.ctx.fc2"));
    g = GateOp::create(b, gl, gateType(false), GatingKind::context_aware,
                       GateNormalization::softmax, m, gw, gb, mod,
                       param(p + "mlp.gate_ln.weight"),
                       param(p + "mlp.gate_ln.bias"), Value(),
                       b.getF64FloatAttr(spec.layerNormEps));
    break;
  }
  case Gating::Adaptive: {
    Value c = contextMean(m);
    Value h = ReluOp::create(b, loc, linear(c, p + "mlp.adapt.fc1"));
    Value a = linear(h, p + "mlp.adapt.fc2");
    SmallVector<int64_t> one(lead);
    one.push_back(1);
    Value two = constant(SmallVector<int64_t>(one.size(), 1), 2.0);
    Value sens =
        binary<MulOp>(two, SigmoidOp::create(b, loc, lastChannel(a, 0)));
    shift = TanhOp::create(b, loc, lastChannel(a, 1));
    magnitude =
        binary<MulOp>(two, SigmoidOp::create(b, loc, lastChannel(a, 2)));
    g = GateOp::create(b, gl, gateType(false), GatingKind::adaptive,
                       GateNormalization::softmax, m, gw, gb, Value(), Value(),
                       Value(), sens, nullptr);
    break;
  }
  }
  SmallVector<int64_t> us(lead);
  us.push_back(f);
  Value u;
  if (streamShards == 1) {
    u = MixtureOp::create(b, at(p + "mlp"), f32(us), m, g,
                          param(p + "mlp.kernels"),
                          param(p + "mlp.kernel_bias"), Value());
  } else {
    // This rank's streams' share of the mixture (Megatron-style: the input
    // and gate are replicated, their gradients summed over the ranks; the
    // partial sums of U are summed over the ranks).
    Location ml = at(p + "mlp.shard");
    Value mine = GradAllReduceOp::create(b, ml, m.getType(), m);
    Value gate = GradAllReduceOp::create(b, ml, g.getType(), g);
    SmallVector<int64_t> gs(shape(g));
    gs.back() /= streamShards;
    gate =
        RankSliceOp::create(b, ml, f32(gs), gate,
                            static_cast<int64_t>(gs.size()) - 1, streamShards);
    Value partial = MixtureOp::create(b, at(p + "mlp"), f32(us), mine, gate,
                                      param(p + "mlp.kernels"),
                                      param(p + "mlp.kernel_bias"), Value());
    u = AllReduceOp::create(b, ml, partial.getType(), partial);
  }
  if (shift)
    u = binary<AddOp>(u, shift);
  Value act = GeluOp::create(b, loc, u);
  Value y;
  if (magnitude) {
    y = binary<MulOp>(magnitude, linear(act, p + "mlp.c_proj", false));
    y = binary<AddOp>(
        y, expandBias(param(p + "mlp.c_proj.bias"), shape(y).size()));
  } else {
    y = linear(act, p + "mlp.c_proj");
  }
  aux = BalanceLossOp::create(b, at(p + "mlp.balance"), f32({}), g,
                              b.getF64FloatAttr(spec.cmollm.balanceAlpha));
  return y;
}

/// The causal prefix mean of the gates' context. In a decode step of Q
/// positions from `position`, the running sum of the positions before
/// (the layer's state) plus the prefix sums of the new ones, times
/// 1 / (position + 1 + i) as the prefix mean's decomposition rounds it; the
/// state becomes the sum through the last new position.
Value ModelBuilder::contextMean(Value m) {
  if (!decode)
    return PrefixMeanOp::create(b, loc, m);
  ArrayRef<int64_t> ms = shape(m);
  int64_t len = ms[1];
  unsigned index;
  Value before = decode->take(index);
  Value sums = m;
  if (len > 1) {
    sums = CumsumOp::create(b, loc, m.getType(), m, 1, /*reverse=*/false);
    decode->values[index] = binary<AddOp>(
        before, ReduceSumOp::create(b, loc, f32({ms[0], 1, ms[2]}), m,
                                    b.getDenseI64ArrayAttr({1})));
  }
  Value sum = binary<AddOp>(before, sums);
  if (len == 1)
    decode->values[index] = sum;
  SmallVector<float> inverse;
  for (int64_t i = 1; i <= spec.nPositions; ++i)
    inverse.push_back(1.0f / static_cast<float>(i));
  auto table = f32({1, spec.nPositions, 1});
  Value inverses = arith::ConstantOp::create(
      b, loc, table, DenseElementsAttr::get(table, ArrayRef<float>(inverse)));
  Value scale = DynamicSliceOp::create(b, loc, f32({1, len, 1}), inverses,
                                       decode->position, 1);
  return binary<MulOp>(sum, scale);
}

Value ModelBuilder::ffn(Value m, const std::string &p, Value &aux) {
  if (spec.arch == Arch::CMoLLM)
    return cmollmFFN(m, p, aux);
  Value h = GeluOp::create(b, loc, linear(m, p + "mlp.c_fc"));
  return linear(h, p + "mlp.c_proj");
}

Value ModelBuilder::block(Value x, int64_t l, Value &aux) {
  std::string p = llvm::formatv("h.{0}.", l).str();
  Value a = layerNorm(x, p + "ln_1");
  x = binary<AddOp>(x, attention(a, p));
  Value m = layerNorm(x, p + "ln_2");
  return binary<AddOp>(x, ffn(m, p, aux));
}

SmallVector<Type> ModelBuilder::parameterTypes(ArrayRef<Type> extra) {
  SmallVector<Type> inputs;
  for (const ParamInfo &pi : paramTable(spec)) {
    SmallVector<int64_t> s(pi.shape);
    if (pi.perStream)
      s[0] /= streamShards;
    inputs.push_back(f32(s));
  }
  llvm::append_range(inputs, extra);
  return inputs;
}

void ModelBuilder::bindParameters(func::FuncOp fn) {
  std::vector<ParamInfo> table = paramTable(spec);
  for (auto [i, pi] : llvm::enumerate(table)) {
    fn.setArgAttr(i, kParamNameAttr, b.getStringAttr(pi.name));
    if (pi.perStream && streamShards > 1)
      fn.setArgAttr(i, kStreamShardsAttr, b.getI64IntegerAttr(streamShards));
  }
  params.clear();
  for (auto [i, pi] : llvm::enumerate(table))
    params[pi.name] = fn.getArgument(i);
}

Value ModelBuilder::trunk(Value x, SmallVector<Value> &auxes) {
  ArrayRef<int64_t> xs0 = shape(x);
  int64_t rows = xs0[0], len = xs0[1], d = spec.dModel;
  switch (spec.arch) {
  case Arch::Dense:
  case Arch::CMoLLM:
    for (int64_t l = 0; l < spec.nLayer; ++l) {
      Value aux;
      x = block(x, l, aux);
      if (aux)
        auxes.push_back(aux);
    }
    return layerNorm(x, "ln_f");
  case Arch::ParaScale: {
    int64_t np = spec.parascale.streams;
    Value xs = ReplicateStreamsOp::create(
        b, at("streams"), f32({np * rows, len, d}), x, b.getI64IntegerAttr(np));
    for (int64_t l = 0; l < spec.nLayer; ++l) {
      Value unused;
      xs = block(xs, l, unused);
    }
    Value zs = layerNorm(xs, "ln_f");
    return AggregateStreamsOp::create(
        b, at("agg"), f32({rows, len, d}), zs, param("agg.fc1.weight"),
        param("agg.fc1.bias"), param("agg.fc2.weight"), param("agg.fc2.bias"),
        b.getF64FloatAttr(spec.parascale.smoothing));
  }
  case Arch::AltUp: {
    int64_t k = spec.altup.blocks;
    Value xs = ReplicateStreamsOp::create(
        b, at("altup"), f32({k * rows, len, d}), x, b.getI64IntegerAttr(k));
    for (int64_t l = 0; l < spec.nLayer; ++l) {
      std::string p = llvm::formatv("h.{0}.", l).str();
      int64_t j = spec.altup.alternating ? l % k : 0;
      Value xhat = AltUpPredictOp::create(b, at(p + "altup"), xs.getType(), xs,
                                          param(p + "altup.predict"));
      Value active = SelectStreamOp::create(
          b, at(p + "altup"), f32({rows, len, d}), xs, b.getI64IntegerAttr(j),
          b.getI64IntegerAttr(k));
      Value unused;
      Value xtil = block(active, l, unused);
      xs = AltUpCorrectOp::create(b, at(p + "altup"), xs.getType(), xhat, xtil,
                                  param(p + "altup.correct"),
                                  b.getI64IntegerAttr(j));
    }
    Value mean = MeanStreamsOp::create(b, at("altup"), f32({rows, len, d}), xs,
                                       b.getI64IntegerAttr(k));
    return layerNorm(mean, "ln_f");
  }
  }
  llvm_unreachable("unknown architecture");
}

OwningOpRef<ModuleOp> ModelBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  size_t numParams = paramTable(spec).size();
  auto tokenType = RankedTensorType::get({batch, seq}, b.getI32Type());
  Type scalar = f32({});
  auto func = func::FuncOp::create(
      b, loc, "forward",
      b.getFunctionType(parameterTypes({tokenType, tokenType}),
                        {scalar, scalar, scalar}));
  func.setArgAttr(numParams, kParamNameAttr, b.getStringAttr("tokens"));
  func.setArgAttr(numParams + 1, kParamNameAttr, b.getStringAttr("targets"));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  bindParameters(func);
  Value tokens = entry->getArgument(numParams);
  Value targets = entry->getArgument(numParams + 1);

  int64_t d = spec.dModel;
  Value x =
      EmbeddingOp::create(b, at("embedding"), f32({batch, seq, d}), tokens,
                          param("wte.weight"), param("wpe.weight"));
  SmallVector<Value> auxes;
  Value z = trunk(x, auxes);
  // Tied embeddings: logits = z wte^T.
  Value logits =
      LinearOp::create(b, at("lm_head"), f32({batch, seq, spec.vocabSize}), z,
                       param("wte.weight"), Value());
  Value ce = CrossEntropyOp::create(b, at("loss"), scalar, logits, targets);
  Value aux;
  if (auxes.empty()) {
    aux = constant({}, 0.0);
  } else {
    aux = auxes.front();
    for (Value a : llvm::drop_begin(auxes))
      aux = binary<AddOp>(aux, a);
    aux = binary<MulOp>(aux, constant({}, 1.0 / auxes.size()));
  }
  Value loss = binary<AddOp>(ce, aux);
  func::ReturnOp::create(b, loc, ValueRange{loss, ce, aux});

  // @logits: the same arguments, returning the next-token logits (B,S,V)
  // for sampling; what only the loss needs is dead there and folds away.
  b.setInsertionPointToEnd(module->getBody());
  auto logitsFn = cast<func::FuncOp>(b.clone(*func));
  logitsFn.setSymName("logits");
  auto ret = cast<func::ReturnOp>(logitsFn.getBody().front().getTerminator());
  CrossEntropyOp lossOp;
  logitsFn.walk([&](CrossEntropyOp op) { lossOp = op; });
  Value out = lossOp.getLogits();
  b.setInsertionPoint(ret);
  func::ReturnOp::create(b, loc, out);
  ret.erase();
  logitsFn.setType(b.getFunctionType(func.getArgumentTypes(), out.getType()));

  if (decodeBatch > 0) {
    b.setInsertionPointToEnd(module->getBody());
    buildDecode("decode", 1);
    if (prefillChunk > 1) {
      b.setInsertionPointToEnd(module->getBody());
      buildDecode("prefill", prefillChunk);
    }
  }
  return module;
}

/// @decode(params..., tokens (Bd,1), position, state...) -> (logits (Bd,1,V),
/// state...): one new token of each of Bd sequences at `position`, every
/// earlier position's keys and values (and context sums) in the state. The
/// updated state is written over the state arguments (mix.updates).
/// @prefill is the same for \p len new tokens a sequence, at positions
/// `position .. position + len - 1`.
void ModelBuilder::buildDecode(StringRef name, int64_t len) {
  size_t numParams = paramTable(spec).size();
  std::vector<DecodeStateInfo> table = decodeStateTable(spec, decodeBatch);
  SmallVector<Type> extra{
      RankedTensorType::get({decodeBatch, len}, b.getI32Type()),
      RankedTensorType::get({}, b.getI32Type())};
  SmallVector<Type> stateTypes;
  for (const DecodeStateInfo &s : table)
    stateTypes.push_back(f32(s.shape));
  llvm::append_range(extra, stateTypes);
  auto logitsType = f32({decodeBatch, len, spec.vocabSize});
  SmallVector<Type> results{logitsType};
  llvm::append_range(results, stateTypes);
  auto fn = func::FuncOp::create(
      b, loc, name, b.getFunctionType(parameterTypes(extra), results));
  fn.setArgAttr(numParams, kParamNameAttr, b.getStringAttr("tokens"));
  fn.setArgAttr(numParams + 1, kParamNameAttr, b.getStringAttr("position"));
  for (auto [i, s] : llvm::enumerate(table)) {
    unsigned arg = numParams + 2 + i;
    fn.setArgAttr(arg, kParamNameAttr, b.getStringAttr(s.name));
    fn.setResultAttr(1 + i, kUpdatesAttr, b.getI64IntegerAttr(arg));
  }
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  bindParameters(fn);
  DecodeState state;
  state.position = entry->getArgument(numParams + 1);
  for (size_t i = 0; i < table.size(); ++i)
    state.values.push_back(entry->getArgument(numParams + 2 + i));
  decode = &state;

  int64_t d = spec.dModel;
  Value wpe = DynamicSliceOp::create(b, at("embedding"), f32({len, d}),
                                     param("wpe.weight"), state.position, 0);
  Value x = EmbeddingOp::create(b, at("embedding"), f32({decodeBatch, len, d}),
                                entry->getArgument(numParams),
                                param("wte.weight"), wpe);
  SmallVector<Value> unused;
  Value z = trunk(x, unused);
  assert(state.next == state.values.size() && "decode state left unread");
  Value logits = LinearOp::create(b, at("lm_head"), logitsType, z,
                                  param("wte.weight"), Value());
  SmallVector<Value> returned{logits};
  llvm::append_range(returned, state.values);
  func::ReturnOp::create(b, loc, returned);
  decode = nullptr;
}

OwningOpRef<ModuleOp>
mlir::mix::buildModel(MLIRContext *context, const ModelSpec &spec,
                      int64_t batch, int64_t seq, int64_t streamShards,
                      int64_t decodeBatch, int64_t prefillChunk) {
  assert((streamShards == 1 || (spec.arch == Arch::CMoLLM &&
                                spec.cmollm.streams % streamShards == 0)) &&
         "stream shards must divide the cMoLLM streams");
  return ModelBuilder(context, spec, batch, seq, streamShards, decodeBatch,
                      prefillChunk)
      .build();
}
