//===- Reference.h - The models of models.md written in libtorch --------*- C++ -*-===//
//
// An independent implementation of models.md §2-5 in libtorch, used
// to check the compiled loss and gradients through autograd. It follows the
// text of the spec, not the compiler's IR: the mixture FFN is written in its
// MoE form (every stream's output, then the gate-weighted sum), which the
// compiler rewrites into a dynamic convolution.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TEST_TORCH_REFERENCE_H
#define MIXRT_TEST_TORCH_REFERENCE_H

#include <torch/torch.h>

#include <map>
#include <string>

namespace mixtest {

/// A model configuration small enough to compile and check in seconds.
struct Config {
  std::string name, arch = "dense", gating = "simple", schedule = "alternating";
  int64_t v = 37, l = 2, d = 12, h = 3, f = 20;
  int64_t n = 1, gateHeads = 1; // cmollm
  int64_t p = 1, prefix = 2;    // parascale
  double smoothing = 0.01;      // parascale
  int64_t k = 1;                // altup
  int64_t batch = 2, seq = 5;
  /// OpenMP threads for the compiled code (0: as libtorch has them).
  int64_t threads = 0;
  /// Compile with mixc --precision bf16; the reference then rounds the
  /// operands of its matrix products (torch::matmul, forward and backward)
  /// to bfloat16 as the compiled step does.
  bool bf16 = false;
  /// The reference rounds the operands of its matrix products to TF32 (11
  /// significant bits, to nearest, ties away from zero) as the tensor cores
  /// do for a cuda package's products (mixc --target cuda's default); mixc
  /// is not told.
  bool tf32Reference = false;
  /// The package computes attention in kernels of its own rather than as
  /// matrix products (mixc's default: the CPU's fused attention, in
  /// float32 under --precision bf16 too; the cuda target's flash attention
  /// kernels, which round their tensor-core operands at places of their
  /// own), so the reference does not round the attention's two products
  /// under bf16 or tf32Reference. False with mixcFlags
  /// "--attention decomposed".
  bool fusedAttention = true;
  /// Further mixc options, e.g. "--target cuda --emulate" for a package run
  /// by the CUDA emulator (EmulatedCUDATest.cpp); the reference ignores
  /// them.
  std::string mixcFlags;

  /// The model spec (docs/models.md §1) of this configuration.
  std::string json() const;
};

/// Names the configuration in test output.
inline void PrintTo(const Config &c, std::ostream *os) { *os << c.name; }

using Params = std::map<std::string, torch::Tensor>;

struct Losses {
  torch::Tensor loss, ce, aux;
};

/// The training loss of docs/models.md §2-5 on int64 tokens and targets (B,S).
Losses referenceLoss(const Params &p, const torch::Tensor &tokens,
                     const torch::Tensor &targets, const Config &c);

} // namespace mixtest

#endif // MIXRT_TEST_TORCH_REFERENCE_H
