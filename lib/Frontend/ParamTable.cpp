//===- ParamTable.cpp - The parameters of a model (docs/models.md §6) ---------------===//
//
// Names, shapes, initialisers and weight decay of every parameter of a
// model, in the order the compiled code takes them.
//
//===----------------------------------------------------------------------===//

#include "mix/Frontend/ModelSpec.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mix;

int64_t ParamInfo::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {
class TableBuilder {
public:
  explicit TableBuilder(const ModelSpec &spec) : spec(spec) {}

  void add(std::string name, llvm::SmallVector<int64_t> shape,
           ParamInfo::Init init, double scale = 0) {
    ParamInfo p;
    p.name = std::move(name);
    p.shape = std::move(shape);
    p.init = init;
    p.scale = scale;
    p.decay = p.shape.size() >= 2;
    table.push_back(std::move(p));
  }

  /// A torch.nn.Linear: weight normal(0, std), bias zeros.
  void linear(const std::string &name, int64_t out, int64_t in, double std) {
    add(name + ".weight", {out, in}, ParamInfo::Init::Normal, std);
    add(name + ".bias", {out}, ParamInfo::Init::Zeros);
  }

  /// A Linear whose weight and bias start at zero (ctx.fc2, adapt.fc2).
  void zeroLinear(const std::string &name, int64_t out, int64_t in) {
    add(name + ".weight", {out, in}, ParamInfo::Init::Zeros);
    add(name + ".bias", {out}, ParamInfo::Init::Zeros);
  }

  void layerNorm(const std::string &name, int64_t d) {
    add(name + ".weight", {d}, ParamInfo::Init::Ones);
    add(name + ".bias", {d}, ParamInfo::Init::Zeros);
  }

  std::vector<ParamInfo> build();

private:
  const ModelSpec &spec;
  std::vector<ParamInfo> table;
};
} // namespace

std::vector<ParamInfo> TableBuilder::build() {
  int64_t v = spec.vocabSize, d = spec.dModel, f = spec.dFF, l = spec.nLayer;
  int64_t h = spec.nHead;
  double std = spec.init.std;
  double projStd = std / std::sqrt(2.0 * static_cast<double>(l));
  add("wte.weight", {v, d}, ParamInfo::Init::Normal, std);
  add("wpe.weight", {spec.nPositions, d}, ParamInfo::Init::Normal, std);
  for (int64_t i = 0; i < l; ++i) {
    std::string p = llvm::formatv("h.{0}.", i).str();
    layerNorm(p + "ln_1", d);
    linear(p + "attn.c_attn", 3 * d, d, std);
    linear(p + "attn.c_proj", d, d, projStd);
    if (spec.arch == Arch::ParaScale) {
      int64_t np = spec.parascale.streams, t = spec.parascale.prefixTokens;
      add(p + "attn.prefix_k", {np, h, t, d / h}, ParamInfo::Init::Normal, std);
      add(p + "attn.prefix_v", {np, h, t, d / h}, ParamInfo::Init::Normal, std);
    }
    layerNorm(p + "ln_2", d);
    if (spec.arch == Arch::CMoLLM) {
      int64_t n = spec.cmollm.streams;
      add(p + "mlp.kernels", {n, f, d}, ParamInfo::Init::Uniform,
          std::sqrt(6.0 / static_cast<double>(d + f)));
      add(p + "mlp.kernel_bias", {n, f}, ParamInfo::Init::Zeros);
      table[table.size() - 2].perStream = true;
      table.back().perStream = true;
      if (spec.cmollm.gating == Gating::MultiHead) {
        int64_t gh = spec.cmollm.gateHeads;
        add(p + "mlp.gate.weight", {gh, n, d / gh}, ParamInfo::Init::Normal,
            std);
        add(p + "mlp.gate.bias", {gh, n}, ParamInfo::Init::Zeros);
      } else {
        linear(p + "mlp.gate", n, d, std);
      }
      if (spec.cmollm.gating == Gating::ContextAware) {
        linear(p + "mlp.ctx.fc1", d / 4, d, std);
        zeroLinear(p + "mlp.ctx.fc2", d, d / 4);
        layerNorm(p + "mlp.gate_ln", d);
      }
      if (spec.cmollm.gating == Gating::Adaptive) {
        linear(p + "mlp.adapt.fc1", d / 4, d, std);
        zeroLinear(p + "mlp.adapt.fc2", 3, d / 4);
      }
    } else {
      linear(p + "mlp.c_fc", f, d, std);
    }
    linear(p + "mlp.c_proj", d, f, projStd);
    if (spec.arch == Arch::AltUp) {
      int64_t k = spec.altup.blocks;
      add(p + "altup.predict", {k, k}, ParamInfo::Init::Identity);
      add(p + "altup.correct", {k}, ParamInfo::Init::Ones);
    }
  }
  layerNorm("ln_f", d);
  if (spec.arch == Arch::ParaScale) {
    int64_t np = spec.parascale.streams;
    linear("agg.fc1", d, np * d, std);
    linear("agg.fc2", np, d, std);
  }
  return std::move(table);
}

std::vector<ParamInfo> mlir::mix::paramTable(const ModelSpec &spec) {
  return TableBuilder(spec).build();
}

int64_t DecodeStateInfo::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<DecodeStateInfo> mlir::mix::decodeStateTable(const ModelSpec &spec,
                                                         int64_t batch) {
  int64_t rows =
      spec.arch == Arch::ParaScale ? spec.parascale.streams * batch : batch;
  int64_t dh = spec.dModel / spec.nHead;
  bool context = spec.arch == Arch::CMoLLM &&
                 (spec.cmollm.gating == Gating::ContextAware ||
                  spec.cmollm.gating == Gating::Adaptive);
  std::vector<DecodeStateInfo> table;
  for (int64_t l = 0; l < spec.nLayer; ++l) {
    std::string p = "h." + std::to_string(l) + ".";
    for (const char *what : {"attn.k_cache", "attn.v_cache"})
      table.push_back({p + what, {rows, spec.nHead, spec.nPositions, dh}});
    if (context)
      table.push_back({p + "mlp.context_sum", {batch, 1, spec.dModel}});
  }
  return table;
}
