//===- Package.h - Writing MODEL.mixpkg -------------------------*- C++ -*-===//
//
// Writes a compiled package: the manifest (docs/package.md) and the
// compiled artefacts, atomically.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_PACKAGE_PACKAGE_H
#define MIX_PACKAGE_PACKAGE_H

#include "mix/Frontend/ModelSpec.h"
#include "mixrt/PackageABI.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace mix {

/// The version of the manifest format this compiler writes.
inline constexpr int64_t kPackageFormatVersion = MIX_PACKAGE_FORMAT_VERSION;
/// The compiler's version, recorded in every manifest.
inline constexpr llvm::StringLiteral kCompilerVersion = "mixc 0.1.0";

struct PackageContents {
  const ModelSpec &spec;
  int64_t batch, seq;
  llvm::StringRef target;
  /// The compiled module, kept in the package as `model.mlir`.
  ModuleOp module;
  /// The shared library's file name inside the package, if there is one.
  std::string library;
  /// Each entry point's arguments, in bytes, and how many of them are
  /// inputs (the rest are outputs): what a runtime needs to move them to
  /// and from a device. Recorded as entries.<name>.arg_bytes/num_inputs.
  /// `updated` lists the inputs the entry point writes over, in place
  /// (entries.<name>.updated_inputs).
  struct EntryArgs {
    std::vector<int64_t> bytes;
    int64_t numInputs = 0;
    std::vector<int64_t> updated = {};
  };
  std::map<std::string, EntryArgs> entryArgs = {};
  /// The ranks the stream kernels are sharded over (mixc --stream-shards):
  /// recorded as `stream_shards`, at the top and on each sharded parameter.
  int64_t streamShards = 1;
  /// The operands of the matrix products (`precision`): "fp32", "tf32" or
  /// "bf16" (mixc --precision, --gpu-matmul).
  std::string precision = "fp32";
  /// How the products' operands are kept in memory: "fp32", or "bf16"
  /// (mixc --precision bf16; written to the manifest as `operands` only
  /// then).
  std::string operands = "fp32";
  /// The hyperparameters @adamw was compiled with (`adamw`), from its
  /// kAdamWHyperparametersAttr; required with a library.
  struct AdamW {
    double beta1, beta2, epsilon, weightDecay, maxGradNorm;
  };
  std::optional<AdamW> adamw = {};
  /// A cuda package whose kernels run on the CUDA emulator, on the CPU
  /// (mixc --emulate): recorded as `"emulated": true`.
  bool emulated = false;
  /// The sequences one call of @decode advances (mixc --decode-batch); 0
  /// when the package has no decode step. Recorded, with the state's
  /// buffers (decodeStateTable), as entries.decode.
  int64_t decodeBatch = 0;
  /// The positions one call of @prefill takes (mixc --prefill-chunk); 0
  /// when there is none. Recorded as entries.prefill.
  int64_t prefillChunk = 0;
};

/// The manifest of a package, as JSON.
llvm::json::Value manifestJSON(const PackageContents &contents);

/// C source defining `const char mix_package_manifest[]`: the manifest as
/// JSON, less the library's checksum, compiled into the package's library.
/// The runtime compares manifest.json with it before running the code, so
/// that an edited manifest cannot describe buffers the code does not have.
std::string getManifestSource(const PackageContents &contents);

/// Checks that a package may be written at `path`: nothing is there yet, or
/// a package directory (one with a manifest.json) that it will replace. A
/// symbolic link, a file or any other directory is refused, so that `-o`
/// never deletes what is not a package.
llvm::Error checkPackageDestination(llvm::StringRef path);

/// Writes the package directory at `path`: built next to it under a
/// temporary name and renamed into place, replacing an older package only
/// once the new one is complete.
/// `writeArtifacts(dir)` writes the compiled code into the package
/// directory being built.
llvm::Error writePackage(
    llvm::StringRef path, const PackageContents &contents,
    llvm::function_ref<llvm::Error(llvm::StringRef dir)> writeArtifacts);

} // namespace mix
} // namespace mlir

#endif // MIX_PACKAGE_PACKAGE_H
