//===- ModelSpec.h - The model spec file (docs/models.md §1) --------------*- C++ -*-===//
//
// The JSON model spec: its fields, with the defaults of models.md §1, a strict parser that
// names the file, line and key of every error, and the parameter table.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_FRONTEND_MODELSPEC_H
#define MIX_FRONTEND_MODELSPEC_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace mix {

enum class Arch { Dense, CMoLLM, ParaScale, AltUp };
enum class Gating { Simple, ContextAware, MultiHead, Adaptive };

struct ModelSpec {
  Arch arch = Arch::Dense;
  int64_t vocabSize = 0, nPositions = 0, nLayer = 0, dModel = 0, nHead = 0,
          dFF = 0;
  double layerNormEps = 1e-5;
  struct {
    int64_t streams = 4;
    Gating gating = Gating::Simple;
    int64_t gateHeads = 4;
    double balanceAlpha = 0.01;
  } cmollm;
  struct {
    int64_t streams = 4, prefixTokens = 48;
    double smoothing = 0.01;
  } parascale;
  struct {
    int64_t blocks = 2;
    bool alternating = true;
  } altup;
  struct {
    int64_t seed = 0;
    double std = 0.02;
  } init;

  /// The spec with every default filled in, as docs/models.md §1 writes it.
  llvm::json::Value toJSON() const;
};

llvm::StringRef archName(Arch arch);
llvm::StringRef gatingName(Gating gating);

/// Parses and validates a spec. Errors read `FILE:LINE: message` and name
/// the key. A Hugging Face GPT-2 config.json is read as the spec it
/// describes (translateHuggingFaceConfig), its notes added to \p notes.
llvm::Expected<ModelSpec>
parseModelSpec(llvm::StringRef text, llvm::StringRef filename,
               std::vector<std::string> *notes = nullptr);

/// Whether \p text is a Hugging Face GPT-2 config.json rather than a model
/// spec: a JSON object without "arch" that has "model_type" or "n_embd".
bool isHuggingFaceConfig(llvm::StringRef text);

/// The model spec, as JSON text, that the Hugging Face GPT2Config \p text
/// (read from \p file) describes: n_embd is d_model, n_inner d_ff (null:
/// 4 n_embd), layer_norm_epsilon layer_norm_eps, initializer_range
/// init.std, and an added section "mixc" holds "arch" (dense when absent),
/// its section and "init". A key transformers writes that mixc ignores
/// (dropouts, token ids, ...) adds a note naming it and why; one that
/// changes what the model computes in a way mixc does not follow is an
/// error naming it.
llvm::Expected<std::string>
translateHuggingFaceConfig(llvm::StringRef text, llvm::StringRef file,
                           std::vector<std::string> &notes);

/// Checks the compile-time shapes against the spec (S <= n_positions, ...).
llvm::Error checkShapes(const ModelSpec &spec, int64_t batch, int64_t seq);

/// One parameter: its docs/models.md §6 name, shape, initialiser and weight decay.
struct ParamInfo {
  std::string name;
  llvm::SmallVector<int64_t> shape;
  enum class Init { Normal, Uniform, Zeros, Ones, Identity } init;
  /// Standard deviation (Normal) or bound (Uniform).
  double scale = 0;
  bool decay = false;
  /// One slice a cMoLLM stream along dimension 0 (`mlp.kernels`,
  /// `mlp.kernel_bias`): what `mixc --stream-shards` splits over ranks.
  bool perStream = false;
  int64_t numElements() const;
};

/// Every parameter of the model, in the order the compiled code takes them.
std::vector<ParamInfo> paramTable(const ModelSpec &spec);

/// One buffer of the state a decode step carries from one position to the
/// next (docs/decoding.md): a layer's cached keys or values, or the running
/// sum of a context gate's prefix mean.
struct DecodeStateInfo {
  std::string name;
  llvm::SmallVector<int64_t> shape;
  int64_t numElements() const;
};

/// The decode state of \p batch sequences, in the order @decode takes it:
/// per layer `h.L.attn.k_cache` and `h.L.attn.v_cache`, (rows, n_head,
/// n_positions, d/n_head) with rows = batch (ParaScale: streams * batch,
/// stream-major), then for context_aware and adaptive gating
/// `h.L.mlp.context_sum`, (batch, 1, d).
std::vector<DecodeStateInfo> decodeStateTable(const ModelSpec &spec,
                                              int64_t batch);

} // namespace mix
} // namespace mlir

#endif // MIX_FRONTEND_MODELSPEC_H
