//===- BenchModel.cpp - Benchmark configurations and the libtorch baseline ===//
//
// The baseline follows docs/models.md §2-5 term by term (the float64 reference of
// runtime/test/Torch/Reference.cpp is its check of meaning); here it is
// written for speed in float32.
//
//===----------------------------------------------------------------------===//

#include "BenchModel.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

using torch::Tensor;
namespace F = torch::nn::functional;

namespace mixbench {

std::string ModelConfig::json() const {
  auto num = [](int64_t x) { return std::to_string(x); };
  std::ostringstream os;
  os << "{\"arch\": \"" << arch << "\", \"vocab_size\": " << v
     << ", \"n_positions\": " << s << ", \"n_layer\": " << l
     << ", \"d_model\": " << d << ", \"n_head\": " << h << ", \"d_ff\": " << f;
  if (arch == "cmollm")
    os << ", \"cmollm\": {\"streams\": " << num(streams) << ", \"gating\": \""
       << gating << "\", \"gate_heads\": " << num(gateHeads)
       << ", \"balance_alpha\": " << balanceAlpha << "}";
  if (arch == "parascale")
    os << ", \"parascale\": {\"streams\": " << num(pStreams)
       << ", \"prefix_tokens\": " << num(prefixTokens)
       << ", \"smoothing\": " << smoothing << "}";
  if (arch == "altup")
    os << ", \"altup\": {\"blocks\": " << num(blocks) << ", \"schedule\": \""
       << schedule << "\"}";
  os << ", \"init\": {\"seed\": 0, \"std\": 0.02}}\n";
  return os.str();
}

std::string ModelConfig::encode() const {
  std::ostringstream os;
  os << "name=" << name << ",arch=" << arch << ",gating=" << gating
     << ",streams=" << streams << ",gate_heads=" << gateHeads
     << ",alpha=" << balanceAlpha << ",p=" << pStreams
     << ",prefix=" << prefixTokens << ",smoothing=" << smoothing
     << ",blocks=" << blocks << ",schedule=" << schedule << ",size=" << size
     << ",l=" << l << ",d=" << d << ",h=" << h << ",f=" << f << ",s=" << s
     << ",b=" << b << ",v=" << v;
  return os.str();
}

ModelConfig ModelConfig::decode(const std::string &text) {
  ModelConfig c;
  std::istringstream is(text);
  std::string item;
  while (std::getline(is, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw std::runtime_error("bad model encoding: " + text);
    std::string k = item.substr(0, eq), val = item.substr(eq + 1);
    auto i = [&] { return std::stoll(val); };
    if (k == "name") c.name = val;
    else if (k == "arch") c.arch = val;
    else if (k == "gating") c.gating = val;
    else if (k == "streams") c.streams = i();
    else if (k == "gate_heads") c.gateHeads = i();
    else if (k == "alpha") c.balanceAlpha = std::stod(val);
    else if (k == "p") c.pStreams = i();
    else if (k == "prefix") c.prefixTokens = i();
    else if (k == "smoothing") c.smoothing = std::stod(val);
    else if (k == "blocks") c.blocks = i();
    else if (k == "schedule") c.schedule = val;
    else if (k == "size") c.size = val;
    else if (k == "l") c.l = i();
    else if (k == "d") c.d = i();
    else if (k == "h") c.h = i();
    else if (k == "f") c.f = i();
    else if (k == "s") c.s = i();
    else if (k == "b") c.b = i();
    else if (k == "v") c.v = i();
    else throw std::runtime_error("bad model key " + k);
  }
  return c;
}

double ModelConfig::forwardFlopsPerToken() const {
  double dd = double(d), ff = double(f);
  double keys = double(s) + (arch == "parascale" ? double(prefixTokens) : 0);
  // q, k, v and the output projection; scores q k^T and att @ v over every
  // key (both sides compute the full S x S matrix and mask it).
  double attn = 2 * (3 * dd * dd + dd * dd) + 2 * 2 * keys * dd;
  double ffn = 2 * 2 * dd * ff;
  if (arch == "cmollm") {
    double n = double(streams);
    // N up-projections (the MoE form, and apply-then-mix alike), the
    // shared down-projection and the gate.
    ffn = 2 * n * dd * ff + 2 * ff * dd + 2 * dd * n;
  }
  double block = attn + ffn;
  double total = double(l) * block;
  if (arch == "parascale") {
    double p = double(pStreams);
    total = p * total + 2 * p * dd * dd + 2 * dd * p; // aggregation MLP
  }
  if (arch == "altup")
    total += double(l) * 2 * double(blocks * blocks) * dd; // predictions
  return total + 2 * dd * double(v);                       // tied logits
}

ModelConfig withSize(ModelConfig c, const std::string &size) {
  c.size = size;
  if (size == "small") {
    c.l = 4; c.d = 256; c.h = 4; c.f = 1024; c.s = 256; c.b = 8; c.v = 256;
  } else if (size == "wide") {
    c.l = 2; c.d = 768; c.h = 12; c.f = 3072; c.s = 256; c.b = 4; c.v = 256;
  } else {
    throw std::runtime_error("unknown size '" + size +
                             "' (expected small or wide)");
  }
  return c;
}

std::vector<ModelConfig> benchmarkModels(const std::string &size) {
  std::vector<ModelConfig> out;
  ModelConfig dense;
  out.push_back(withSize(dense, size));
  for (const char *gating : {"simple", "multi_head"})
    for (int64_t n : {1, 2, 4, 8}) {
      ModelConfig c;
      c.arch = "cmollm";
      c.gating = gating;
      c.streams = n;
      c.name = "cmollm-n" + std::to_string(n) + "-" + gating;
      out.push_back(withSize(c, size));
    }
  ModelConfig ps;
  ps.arch = "parascale";
  ps.pStreams = 4;
  ps.name = "parascale-p4";
  out.push_back(withSize(ps, size));
  ModelConfig au;
  au.arch = "altup";
  au.blocks = 2;
  au.name = "altup-k2";
  out.push_back(withSize(au, size));
  return out;
}

//===----------------------------------------------------------------------===//
// The baseline
//===----------------------------------------------------------------------===//

TorchModel::TorchModel(const ModelConfig &config,
                       std::map<std::string, Tensor> params)
    : c(config), p(std::move(params)) {
  if (c.arch == "cmollm" && c.gating != "simple" && c.gating != "multi_head")
    throw std::runtime_error("the baseline implements the simple and "
                             "multi_head gatings, not " + c.gating);
  causal = torch::full({c.s, c.s}, -INFINITY).triu(1);
  if (c.arch == "parascale")
    prefixed = torch::cat({torch::zeros({c.s, c.prefixTokens}), causal}, 1);
}

std::vector<Tensor>
TorchModel::parameters(const std::vector<std::string> &names) const {
  std::vector<Tensor> out;
  for (const std::string &n : names)
    out.push_back(p.at(n));
  return out;
}

Tensor TorchModel::ln(const Tensor &x, const std::string &name) const {
  return F::layer_norm(x, F::LayerNormFuncOptions({c.d})
                              .weight(p.at(name + ".weight"))
                              .bias(p.at(name + ".bias"))
                              .eps(1e-5));
}

Tensor TorchModel::lin(const Tensor &x, const std::string &name) const {
  return F::linear(x, p.at(name + ".weight"), p.at(name + ".bias"));
}

/// Causal self-attention over (rows, S, d); ParaScale's learned prefix keys
/// and values go in front of stream p's real ones.
Tensor TorchModel::attention(const Tensor &a, const std::string &pre,
                             int64_t streams) const {
  int64_t rows = a.size(0), s = a.size(1), h = c.h, dh = c.d / c.h;
  // (rows, S, 3, h, dh) -> (3, rows, h, S, dh): one copy for q, k and v.
  Tensor qkv = lin(a, pre + "attn.c_attn")
                   .view({rows, s, 3, h, dh})
                   .permute({2, 0, 3, 1, 4})
                   .contiguous();
  Tensor q = qkv[0].view({rows * h, s, dh});
  Tensor k = qkv[1].view({rows * h, s, dh});
  Tensor v = qkv[2].view({rows * h, s, dh});
  Tensor mask = causal;
  if (c.arch == "parascale") {
    int64_t b = rows / streams, t = c.prefixTokens;
    auto perRow = [&](const Tensor &prefix) { // (P,h,T,dh) -> (P*B*h,T,dh)
      return prefix.unsqueeze(1)
          .expand({streams, b, h, t, dh})
          .reshape({rows * h, t, dh});
    };
    k = torch::cat({perRow(p.at(pre + "attn.prefix_k")), k}, 1);
    v = torch::cat({perRow(p.at(pre + "attn.prefix_v")), v}, 1);
    mask = prefixed;
  }
  // mask + (q k^T) / sqrt(dh) in one product.
  Tensor att = torch::baddbmm(mask, q, k.transpose(1, 2), 1.0,
                              1.0 / std::sqrt(double(dh)))
                   .softmax(-1);
  Tensor o = torch::bmm(att, v).view({rows, h, s, dh}).transpose(1, 2).reshape(
      {rows, s, c.d});
  return lin(o, pre + "attn.c_proj");
}

/// The FFN: dense, or cMoLLM's mixture in its MoE form (every stream's
/// up-projection as one product against the stacked kernels, then the
/// gate-weighted sum), appending the balance loss.
Tensor TorchModel::ffn(const Tensor &m, const std::string &pre,
                       std::vector<Tensor> &auxes) const {
  if (c.arch != "cmollm")
    return lin(torch::gelu(lin(m, pre + "mlp.c_fc"), "tanh"),
               pre + "mlp.c_proj");
  int64_t b = m.size(0), s = m.size(1), t = b * s, n = c.streams;
  Tensor m2 = m.reshape({t, c.d});
  Tensor kernels = p.at(pre + "mlp.kernels"), bias = p.at(pre + "mlp.kernel_bias");
  Tensor outs = F::linear(m2, kernels.view({n * c.f, c.d}),
                          bias.view({n * c.f}))
                    .view({t, n, c.f}); // (T,N,f)
  Tensor u, pk;
  if (c.gating == "multi_head") {
    int64_t hh = c.gateHeads;
    Tensor g = (torch::einsum("the,hne->thn",
                              {m2.view({t, hh, c.d / hh}),
                               p.at(pre + "mlp.gate.weight")}) +
                p.at(pre + "mlp.gate.bias"))
                   .softmax(-1); // (T,H,N)
    u = torch::einsum("thn,tnhc->thc",
                      {g, outs.view({t, n, hh, c.f / hh})})
            .reshape({t, c.f});
    pk = g.view({b, s, hh, n}).mean({1, 2});
  } else {
    Tensor g = lin(m2, pre + "mlp.gate").softmax(-1); // (T,N)
    u = torch::einsum("tn,tnf->tf", {g, outs});
    pk = g.view({b, s, n}).mean(1);
  }
  auxes.push_back((c.balanceAlpha * double(n) * pk.pow(2).sum(-1)).mean());
  return lin(torch::gelu(u, "tanh"), pre + "mlp.c_proj").view({b, s, c.d});
}

Tensor TorchModel::block(const Tensor &x, int64_t layer, int64_t streams,
                         std::vector<Tensor> &auxes) const {
  std::string pre = "h." + std::to_string(layer) + ".";
  Tensor h = x + attention(ln(x, pre + "ln_1"), pre, streams);
  return h + ffn(ln(h, pre + "ln_2"), pre, auxes);
}

Losses TorchModel::loss(const Tensor &tokens, const Tensor &targets) {
  int64_t b = tokens.size(0), s = tokens.size(1);
  Tensor wte = p.at("wte.weight");
  Tensor x = F::embedding(tokens, wte) + p.at("wpe.weight").slice(0, 0, s);
  std::vector<Tensor> auxes;
  Tensor z;
  if (c.arch == "parascale") {
    int64_t np = c.pStreams;
    Tensor rows = x.repeat({np, 1, 1}); // stream-major: row p*B + b
    for (int64_t l = 0; l < c.l; ++l)
      rows = block(rows, l, np, auxes);
    Tensor zs = ln(rows, "ln_f").view({np, b, s, c.d});
    Tensor cat = zs.permute({1, 2, 0, 3}).reshape({b, s, np * c.d});
    Tensor w = lin(F::silu(lin(cat, "agg.fc1")), "agg.fc2").softmax(-1);
    w = (1 - c.smoothing) * w + c.smoothing / double(np); // (B,S,P)
    z = torch::einsum("bsp,pbsd->bsd", {w, zs});
  } else if (c.arch == "altup") {
    int64_t k = c.blocks;
    Tensor state = x.unsqueeze(0).expand({k, b, s, c.d}); // (K,B,S,d)
    for (int64_t l = 0; l < c.l; ++l) {
      std::string pre = "h." + std::to_string(l) + ".altup.";
      int64_t j = c.schedule == "alternating" ? l % k : 0;
      Tensor xhat = torch::matmul(p.at(pre + "predict"), state.reshape({k, -1}))
                        .view({k, b, s, c.d});
      Tensor xtil = block(state[j], l, 1, auxes);
      state = xhat + p.at(pre + "correct").view({k, 1, 1, 1}) * (xtil - xhat[j]);
    }
    z = ln(state.mean(0), "ln_f");
  } else {
    for (int64_t l = 0; l < c.l; ++l)
      x = block(x, l, 1, auxes);
    z = ln(x, "ln_f");
  }
  Tensor logits = F::linear(z, wte);
  Tensor ce = F::cross_entropy(logits.view({-1, c.v}).to(torch::kFloat32),
                               targets.flatten());
  Tensor aux = auxes.empty() ? torch::zeros({}) : torch::stack(auxes).mean();
  return {ce + aux, ce, aux};
}

} // namespace mixbench
