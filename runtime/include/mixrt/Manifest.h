//===- Manifest.h - The package manifest (manifest.json) --------*- C++ -*-===//
//
// Reads MODEL.mixpkg/manifest.json (docs/package.md): the format tag and
// version, the batch shape, the spec fields the runtime needs and the
// parameter table with each parameter's shape and initialiser.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_MANIFEST_H
#define MIXRT_MANIFEST_H

#include "mixrt/Json.h"

#include <cstdint>
#include "mixrt/PackageABI.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mixrt {

/// The manifest format version this runtime reads.
constexpr int64_t kManifestFormatVersion = MIX_PACKAGE_FORMAT_VERSION;

enum class InitKind { Normal, Uniform, Zeros, Ones, Identity };

/// "normal", "uniform", "zeros", "ones" or "identity".
const char *getInitKindName(InitKind kind);

/// One entry of the manifest's parameter table.
struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  InitKind init = InitKind::Zeros;
  /// The standard deviation of a normal initialiser.
  double std = 0;
  /// The half-width of a uniform initialiser on [-bound, bound].
  double bound = 0;
  /// Whether AdamW weight decay applies.
  bool decay = false;
  /// The ranks dimension 0 is split over (stream_shards; 1: replicated).
  /// Rank r's code sees part r of the tensor, which is contiguous.
  int64_t streamShards = 1;
};

struct Manifest {
  /// The package directory and its manifest.json, as given.
  std::string packagePath;
  std::string manifestPath;
  /// The manifest as parsed, to compare with the copy compiled into the
  /// library (CompiledModel).
  std::string text;

  std::string target;
  /// The operands of the step's matrix products: "fp32", "tf32" or "bf16"
  /// (mixc --precision, --gpu-matmul); accumulation, parameters and
  /// optimizer state are fp32 in every case.
  std::string precision = "fp32";
  /// How the products' operands are kept in memory: "fp32", or "bf16"
  /// (mixc --precision bf16; the manifest's optional `operands`).
  std::string operands = "fp32";
  int64_t batch = 0;
  int64_t seq = 0;
  /// spec.vocab_size, spec.init.seed and spec.init.std.
  int64_t vocabSize = 0;
  uint64_t seed = 0;
  double initStd = 0;
  /// The whole model spec, for the parts not read above.
  json::Value spec;
  /// Every parameter, in the order of the compiled code's arguments.
  std::vector<ParamInfo> params;
  /// The ranks the package's stream kernels are sharded over (mixc
  /// --stream-shards; 1 for an ordinary package): it runs under exactly
  /// that many ranks, each computing its own streams on the same batch.
  int64_t streamShards = 1;
  /// The compiled library relative to the package; absent until the
  /// lowering produces code.
  std::optional<std::string> library;
  /// The hyperparameters the compiled @adamw was built with (`adamw`,
  /// required with a library): the bias corrections the runtime passes in,
  /// 1 - beta1^t and 1 - beta2^t, take the betas from here.
  struct AdamW {
    double beta1 = 0, beta2 = 0, epsilon = 0, weightDecay = 0,
           maxGradNorm = 0;
  };
  std::optional<AdamW> adamw;
  /// The library's FNV-1a 64-bit hash, 16 lowercase hex digits
  /// (library_fnv1a64), when the manifest records it.
  std::optional<std::string> libraryChecksum;
  /// Each entry point's argument sizes in bytes and how many of them are
  /// inputs (entries.<name>.arg_bytes / num_inputs), where the manifest
  /// records them; a cuda package needs them to move its arguments.
  /// `updated` lists the inputs the entry point writes over, in place
  /// (entries.<name>.updated_inputs), which a device copies back too.
  struct EntryArgs {
    std::vector<uint64_t> bytes;
    size_t numInputs = 0;
    std::vector<size_t> updated;
  };
  std::map<std::string, EntryArgs> entryArgs;
  /// The decode step (entries.decode), when the package has one: the
  /// sequences a call advances, the positions its state holds (the spec's
  /// n_positions), and the state's buffers in the order mix_decode takes
  /// them, each float32 of the given shape.
  struct Decode {
    int64_t batch = 0, positions = 0;
    /// The positions one call of mix_prefill takes (entries.prefill.chunk);
    /// 0 when the package has no prefill step.
    int64_t prefillChunk = 0;
    struct State {
      std::string name;
      std::vector<int64_t> shape;
      size_t numElements = 0;
    };
    std::vector<State> state;
  };
  std::optional<Decode> decode;
};

/// Parses and validates manifest \p text; \p manifestPath names it in
/// errors ("path:line: key: problem").
Manifest parseManifest(const std::string &text,
                       const std::string &manifestPath);

/// Reads \p packagePath/manifest.json.
Manifest readManifest(const std::string &packagePath);

} // namespace mixrt

#endif // MIXRT_MANIFEST_H
