//===- Reference.cpp - The models of models.md written in libtorch ----------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>

using torch::Tensor;
namespace F = torch::nn::functional;


namespace mixtest {

std::string Config::json() const {
  auto num = [](int64_t x) { return std::to_string(x); };
  std::string s = "{\"arch\": \"" + arch + "\", \"vocab_size\": " + num(v) +
                  ", \"n_positions\": " + num(std::max<int64_t>(16, seq)) +
                  ", \"n_layer\": " + num(l) +
                  ", \"d_model\": " + num(d) + ", \"n_head\": " + num(h) +
                  ", \"d_ff\": " + num(f);
  if (arch == "cmollm")
    s += ", \"cmollm\": {\"streams\": " + num(n) + ", \"gating\": \"" + gating +
         "\", \"gate_heads\": " + num(gateHeads) + "}";
  if (arch == "parascale")
    s += ", \"parascale\": {\"streams\": " + num(p) +
         ", \"prefix_tokens\": " + num(prefix) +
         ", \"smoothing\": " + std::to_string(smoothing) + "}";
  if (arch == "altup")
    s += ", \"altup\": {\"blocks\": " + num(k) + ", \"schedule\": \"" +
         schedule + "\"}";
  return s + "}";
}

namespace {

/// How the model's matrix products round their operands (Config::bf16 and
/// Config::tf32Reference of the model being evaluated).
enum class Rounding { None, BF16, TF32 };
Rounding roundProducts = Rounding::None;

/// \p x rounded to bfloat16 (through float32, as the compiled code rounds
/// its float32 values), back in x's type.
Tensor roundToBF16(const Tensor &x) {
  return x.to(torch::kFloat32).to(torch::kBFloat16).to(x.scalar_type());
}

/// \p x rounded to TF32 through float32: 11 significant bits, to nearest,
/// ties away from zero (cvt.rna.tf32.f32, as the tensor cores take float32
/// operands), back in x's type. Worked out from frexp in float64, not from
/// the bit pattern as the CUDA emulator does.
Tensor roundToTF32(const Tensor &x) {
  auto [mantissa, exponent] =
      torch::frexp(x.to(torch::kFloat32).to(torch::kFloat64));
  // x = mantissa 2^exponent with 1/2 <= |mantissa| < 1: keep 11 bits of it.
  Tensor scaled = mantissa * 2048;
  Tensor kept = torch::sign(scaled) * torch::floor(scaled.abs() + 0.5) / 2048;
  return torch::ldexp(kept, exponent).to(x.scalar_type());
}

/// \p x rounded as roundProducts says.
Tensor roundOperand(const Tensor &x) {
  switch (roundProducts) {
  case Rounding::BF16:
    return roundToBF16(x);
  case Rounding::TF32:
    return roundToTF32(x);
  case Rounding::None:
    break;
  }
  return x;
}

/// torch::matmul whose three products (forward, and the two of its
/// backward) take operands rounded as roundProducts says, as every matrix
/// product of a step compiled with --precision bf16 does, or of a cuda
/// package on the tensor cores.
struct RoundedProduct : torch::autograd::Function<RoundedProduct> {
  static Tensor forward(torch::autograd::AutogradContext *ctx, Tensor a,
                        Tensor b) {
    ctx->save_for_backward({a, b});
    return torch::matmul(roundOperand(a), roundOperand(b));
  }
  static torch::autograd::tensor_list
  backward(torch::autograd::AutogradContext *ctx,
           torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    Tensor a = roundOperand(saved[0]), b = roundOperand(saved[1]);
    Tensor g = roundOperand(grads[0]);
    Tensor ga = torch::matmul(g, b.transpose(-1, -2));
    Tensor gb = torch::matmul(a.transpose(-1, -2), g);
    // Sum over the dimensions the product broadcast.
    return {at::sum_to(ga, a.sizes()), at::sum_to(gb, b.sizes())};
  }
};

/// The model's matrix product (rounding its operands under bf16 or TF32).
Tensor product(const Tensor &a, const Tensor &b) {
  return roundProducts != Rounding::None ? RoundedProduct::apply(a, b)
                                         : torch::matmul(a, b);
}

Tensor layerNorm(const Tensor &x, const Params &p, const std::string &name) {
  Tensor mu = x.mean(-1, true);
  Tensor var = (x - mu).pow(2).mean(-1, true);
  return (x - mu) / torch::sqrt(var + 1e-5) * p.at(name + ".weight") +
         p.at(name + ".bias");
}

Tensor gpt2Gelu(const Tensor &u) {
  return 0.5 * u *
         (1 + torch::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u.pow(3))));
}

Tensor linear(const Tensor &x, const Params &p, const std::string &name) {
  return product(x, p.at(name + ".weight").t()) + p.at(name + ".bias");
}

/// c[b,s] = mean over t <= s of m[b,t] (docs/models.md §3), written as a product with
/// a lower-triangular averaging matrix rather than a cumulative sum.
Tensor causalPrefixMean(const Tensor &m) {
  int64_t s = m.size(1);
  Tensor avg = torch::ones({s, s}, m.options()).tril();
  avg = avg / avg.sum(-1, true);
  return product(avg, m);
}

/// Causal self-attention; for ParaScale, stream p's learned prefix keys and
/// values go in front of the real ones and every query sees all of them.
Tensor attention(const Tensor &a, const Params &p, const std::string &pre,
                 const Config &c, int64_t streams) {
  int64_t rows = a.size(0), s = a.size(1), dh = c.d / c.h;
  auto qkv = linear(a, p, pre + "attn.c_attn").split(c.d, -1);
  auto heads = [&](const Tensor &t) {
    return t.view({rows, s, c.h, dh}).transpose(1, 2);
  };
  Tensor q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
  Tensor mask = torch::ones({s, s}, torch::kBool).triu(1);
  if (c.arch == "parascale") {
    int64_t b = rows / streams;
    auto perRow = [&](const Tensor &prefix) { // (P,h,T,dh) -> (P*B,h,T,dh)
      return prefix.unsqueeze(1)
          .expand({streams, b, c.h, c.prefix, dh})
          .reshape({rows, c.h, c.prefix, dh});
    };
    k = torch::cat({perRow(p.at(pre + "attn.prefix_k")), k}, 2);
    v = torch::cat({perRow(p.at(pre + "attn.prefix_v")), v}, 2);
    mask = torch::cat({torch::zeros({s, c.prefix}, torch::kBool), mask}, 1);
  }
  auto attnProduct = [&](const Tensor &x, const Tensor &y) {
    return c.fusedAttention ? torch::matmul(x, y) : product(x, y);
  };
  Tensor att = attnProduct(q, k.transpose(-1, -2)) / std::sqrt(double(dh));
  att = att.masked_fill(mask, -INFINITY).softmax(-1);
  Tensor o = attnProduct(att, v).transpose(1, 2).reshape({rows, s, c.d});
  return linear(o, p, pre + "attn.c_proj");
}

/// The cMoLLM FFN of docs/models.md §3 in its MoE form; appends the balance loss.
Tensor mixtureFfn(const Tensor &m, const Params &p, const std::string &pre,
                  const Config &c, std::vector<Tensor> &auxes) {
  int64_t b = m.size(0), s = m.size(1);
  Tensor k = p.at(pre + "mlp.kernels"), kb = p.at(pre + "mlp.kernel_bias");
  Tensor outs = torch::einsum("bsd,kfd->bskf", {m, k}) + kb; // (B,S,N,f)
  Tensor u, pk, shift, magnitude;
  if (c.gating == "multi_head") {
    int64_t hh = c.gateHeads;
    Tensor mh = m.view({b, s, hh, c.d / hh});
    Tensor g =
        (torch::einsum("bshe,hne->bshn", {mh, p.at(pre + "mlp.gate.weight")}) +
         p.at(pre + "mlp.gate.bias"))
            .softmax(-1);
    u = torch::einsum("bshn,bsnhc->bshc",
                      {g, outs.view({b, s, c.n, hh, c.f / hh})})
            .reshape({b, s, c.f});
    pk = g.mean({1, 2});
  } else {
    Tensor logits;
    if (c.gating == "simple") {
      logits = linear(m, p, pre + "mlp.gate");
    } else if (c.gating == "context_aware") {
      Tensor ctx = causalPrefixMean(m);
      Tensor mod = torch::sigmoid(
          linear(torch::relu(linear(ctx, p, pre + "mlp.ctx.fc1")), p,
                 pre + "mlp.ctx.fc2"));
      logits = linear(layerNorm(m * mod, p, pre + "mlp.gate_ln"), p,
                      pre + "mlp.gate");
    } else { // adaptive
      Tensor ctx = causalPrefixMean(m);
      Tensor a = linear(torch::relu(linear(ctx, p, pre + "mlp.adapt.fc1")), p,
                        pre + "mlp.adapt.fc2");
      Tensor sensitivity = 2 * torch::sigmoid(a.select(-1, 0)).unsqueeze(-1);
      shift = torch::tanh(a.select(-1, 1)).unsqueeze(-1);
      magnitude = 2 * torch::sigmoid(a.select(-1, 2)).unsqueeze(-1);
      logits = sensitivity * linear(m, p, pre + "mlp.gate");
    }
    Tensor g = logits.softmax(-1);
    u = torch::einsum("bsn,bsnf->bsf", {g, outs});
    pk = g.mean(1);
  }
  auxes.push_back((0.01 * double(c.n) * pk.pow(2).sum(-1)).mean());
  if (c.gating == "adaptive")
    return magnitude * product(gpt2Gelu(u + shift),
                               p.at(pre + "mlp.c_proj.weight").t()) +
           p.at(pre + "mlp.c_proj.bias");
  return linear(gpt2Gelu(u), p, pre + "mlp.c_proj");
}

/// One pre-LayerNorm transformer block (docs/models.md §2).
Tensor block(const Tensor &x, const Params &p, int64_t l, const Config &c,
             int64_t streams, std::vector<Tensor> &auxes) {
  std::string pre = "h." + std::to_string(l) + ".";
  Tensor h = x + attention(layerNorm(x, p, pre + "ln_1"), p, pre, c, streams);
  Tensor m = layerNorm(h, p, pre + "ln_2");
  if (c.arch == "cmollm")
    return h + mixtureFfn(m, p, pre, c, auxes);
  return h + linear(gpt2Gelu(linear(m, p, pre + "mlp.c_fc")), p,
                    pre + "mlp.c_proj");
}

} // namespace

Losses referenceLoss(const Params &p, const Tensor &tok, const Tensor &tgt,
                     const Config &c) {
  roundProducts = c.bf16            ? Rounding::BF16
                  : c.tf32Reference ? Rounding::TF32
                                    : Rounding::None;
  int64_t b = tok.size(0), s = tok.size(1);
  Tensor x =
      p.at("wte.weight").index_select(0, tok.flatten()).view({b, s, c.d}) +
      p.at("wpe.weight").slice(0, 0, s);
  std::vector<Tensor> auxes;
  Tensor z;
  if (c.arch == "parascale") {
    // Streams replicate the batch, stream-major (row p*B + b).
    Tensor rows = x.repeat({c.p, 1, 1});
    for (int64_t l = 0; l < c.l; ++l)
      rows = block(rows, p, l, c, c.p, auxes);
    Tensor zs = layerNorm(rows, p, "ln_f").view({c.p, b, s, c.d});
    Tensor cat = zs.permute({1, 2, 0, 3}).reshape({b, s, c.p * c.d});
    Tensor w =
        linear(F::silu(linear(cat, p, "agg.fc1")), p, "agg.fc2").softmax(-1);
    w = (1 - c.smoothing) * w + c.smoothing / double(c.p); // (B,S,P)
    z = torch::einsum("bsp,pbsd->bsd", {w, zs});
  } else if (c.arch == "altup") {
    std::vector<Tensor> blocks(c.k, x);
    for (int64_t l = 0; l < c.l; ++l) {
      std::string pre = "h." + std::to_string(l) + ".altup.";
      int64_t j = c.schedule == "alternating" ? l % c.k : 0;
      Tensor predict = p.at(pre + "predict"), correct = p.at(pre + "correct");
      std::vector<Tensor> xhat;
      for (int64_t i = 0; i < c.k; ++i) {
        Tensor sum = torch::zeros_like(x);
        for (int64_t q = 0; q < c.k; ++q)
          sum = sum + predict[i][q] * blocks[q];
        xhat.push_back(sum);
      }
      Tensor xtil = block(blocks[j], p, l, c, 1, auxes);
      for (int64_t i = 0; i < c.k; ++i)
        blocks[i] = xhat[i] + correct[i] * (xtil - xhat[j]);
    }
    z = layerNorm(torch::stack(blocks).mean(0), p, "ln_f");
  } else {
    for (int64_t l = 0; l < c.l; ++l)
      x = block(x, p, l, c, 1, auxes);
    z = layerNorm(x, p, "ln_f");
  }
  Tensor logits = product(z, p.at("wte.weight").t());
  Tensor ce = F::cross_entropy(logits.view({-1, c.v}), tgt.flatten());
  Tensor aux = auxes.empty() ? torch::zeros({}, torch::kFloat64)
                             : torch::stack(auxes).mean();
  return {ce + aux, ce, aux};
}

} // namespace mixtest
