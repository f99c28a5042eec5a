//===- Codegen.h - Code generation both targets share -----------*- C++ -*-===//
//
// From linalg on tensors to buffers (fusion, rematerialization, in-place
// updates, buffer lifetimes), matrix products as calls of the package's
// support code, the entry points' one C signature, and the LLVM module to a
// shared library: what the CPU and the CUDA targets both use.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_CODEGEN_CODEGEN_H
#define MIX_CODEGEN_CODEGEN_H

#include "mixrt/PackageABI.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir {
namespace mix {

/// Adds the dialects and interface models code generation needs (for
/// bufferization and the lowering to LLVM) to `registry`.
void registerCodegenDialects(DialectRegistry &registry);

/// Attaches one-shot bufferization to `mix.all_reduce`: a copy of the
/// input into a new buffer, summed over the ranks in place by the support
/// code's `mix_comm_all_reduce`.
void registerCollectiveBufferization(DialectRegistry &registry);

/// Attaches one-shot bufferization to the fused ops (`mix.flash_attention`,
/// `mix.fused_cross_entropy` and their gradients): a fresh buffer for each
/// result, written by the op's form on buffers.
void registerFusedOpBufferization(DialectRegistry &registry);

/// The symbol of the packed entry point of function `name`: `mix_<name>`.
std::string entryPointSymbol(llvm::StringRef name);

/// On a function, from bufferization on (mix-record-entry-signatures): the
/// array of its argument types, static identity-layout memrefs, which the
/// lowering to LLVM pointers forgets. Kept on the packed entry point.
inline constexpr llvm::StringLiteral kEntrySignatureAttr =
    "mix.entry_signature";

/// On a function, from bufferization on (mix-record-entry-outputs): how
/// many of its arguments, the last, are the out-parameters its results
/// became.
inline constexpr llvm::StringLiteral kEntryOutputsAttr = "mix.entry_outputs";

/// The memref argument types \p fn records in kEntrySignatureAttr, or
/// failure if it has none (or a malformed one).
FailureOr<SmallVector<MemRefType>> getEntrySignature(Operation *fn);

/// On tensors: fuses elementwise producers into elementwise consumers, and
/// recomputes a small elementwise producer in each of its users when they
/// are all elementwise, so that it is never stored.
/// With \p sharedReadsOnce (the cuda target), a value both the producer
/// and the consumer read whole counts once against kMaxRecomputedReads.
LogicalResult fuseElementwiseOps(FunctionOpInterface function,
                                 bool sharedReadsOnce = false);

/// On tensors, before bufferization: each function result marked
/// `mix.updates = i` is materialized in argument i's buffer and dropped
/// from the results; that argument becomes writable, the function's other
/// tensor arguments read-only. Fails on a malformed mark.
LogicalResult updateArgumentsInPlace(FunctionOpInterface function);

/// The most operations in the body of an elementwise op that is recomputed
/// where it is used rather than stored (fuseElementwiseOps, rematerialize).
constexpr size_t kMaxRecomputedOps = 24;
/// The most whole operands (read an element per iteration) an op may read
/// once elementwise producers are recomputed in it (fuseElementwiseOps):
/// the residual stream, a sum of every earlier block's output, is then
/// stored rather than summed again from all of them in each of its users.
/// 2 measured best: 4 left sums of 5-7 operands in the small dense model's
/// layer norms (its loop nests 20% slower, the step 5%, 2-4 MiB less).
constexpr int64_t kMaxRecomputedReads = 2;

/// On tensors: recomputes zero fills and (with \p elementwise) small
/// elementwise ops right before each of their users but the first
/// (mix-rematerialize).
void rematerialize(FunctionOpInterface function, bool elementwise = true);

/// On tensors: a batched product whose operands are collapses of head
/// transposes, or whose result is expanded and transposed, becomes a
/// `linalg.contract` with two batch dimensions that reads and writes those
/// layouts in place (mix-head-products).
void foldHeadTransposesIntoProducts(FunctionOpInterface function);

/// On buffers, before freeAfterLastUse: a product whose operand is a
/// transposed copy that nothing else reads reads the transposed view of
/// the copy's source instead (the library calls take any strides). With
/// \p generics, linalg.generic readers read the source through their
/// indexing maps composed with the permutation.
void readTransposedOperandsInPlace(FunctionOpInterface function,
                                   bool generics = false);

/// On buffers: ops that compute a buffer which a linalg.transpose then
/// copies into a fresh one, or a memref.copy into a view of another buffer,
/// compute it in that destination instead, through its transposed or
/// reshaped view.
void writeTransposedResultsInPlace(FunctionOpInterface function);

/// On buffers: moves each `memref.dealloc` of a buffer allocated in the
/// same block to just after the block's last use of the buffer or of any
/// memref derived from it (the deallocation pipeline frees at the end of
/// the block, which kept every buffer of a step until it returned).
void freeAfterLastUse(FunctionOpInterface function);

/// On buffers: a result copied into its out-parameter at the end is
/// computed in the out-parameter instead (mix-write-results-in-place).
void writeResultsInPlace(FunctionOpInterface function);

/// On buffers: moves each `memref.alloc` without operands to just before
/// the first operation of its block that uses it (mix-allocate-at-first-use).
void allocateAtFirstUse(FunctionOpInterface function);

/// On buffers: emits a remark on each allocating function with its peak of
/// live buffer bytes and a note for each of the \p largest buffers live
/// there (mix-report-peak-memory).
void reportPeakMemory(FunctionOpInterface function, unsigned largest = 8);

/// Rewrites `add(matmul(A, B), X)` on tensors, where the product accumulates
/// into zeros and has no other use, into a product accumulating into X.
LogicalResult foldSumsIntoAccumulators(FunctionOpInterface function);

/// Replaces f32 linalg.matmul / linalg.batch_matmul on memrefs by calls of
/// `<prefix>matmul` / `<prefix>batch_matmul` (C += A B, in the package's
/// support code: on the CPU a oneDNN matmul primitive cached per call site,
/// on CUDA a cuBLASLt matmul). Each call's first argument numbers its site.
/// Products of bf16 operands into f32 call `<prefix>matmul_bf16` /
/// `<prefix>batch_matmul_bf16`. With \p overwriteZeros, a product into an
/// accumulator zero-filled just before calls the `_set` form (C = A B,
/// `<prefix>matmul_set[_bf16]`) and the fill is dropped. With \p fuseBias,
/// a 2-d product into an accumulator just filled with a row vector in every
/// row (a linear layer's bias) calls `<prefix>matmul_bias[_bf16]` (C = A B
/// + bias, oneDNN's bias argument or cuBLASLt's BIAS epilogue) and the fill
/// is dropped. With \p fuseBiasGrad, a 2-d `_set` product whose A is the
/// transpose of a matrix whose column sums (a bias gradient, into a zero
/// fill) come before it calls `<prefix>matmul_set_bgrad`, which writes
/// those sums too (cuBLASLt's BGRADB epilogue), and the sum and its fill
/// are dropped. With \p fuseGelu, a `_bias` product U followed by the GELU
/// of U into H calls `<prefix>matmul_bias_gelu`, which writes H and U
/// (cuBLASLt's GELU_AUX_BIAS epilogue, U its auxiliary output), and a 2-d
/// `_set` product C = dH whose only reader multiplies it by the GELU's
/// derivative at U into dU calls `<prefix>matmul_set_dgelu`, which writes
/// dU (the DGELU epilogue, U its auxiliary input); U's 2-d view comes last,
/// and the GELU's op (and dH) go.
/// With \p triangular, a product marked `mix.triangle` (mix-causal-products)
/// calls `<prefix>[batch_]matmul_tri[_set][_bf16]`, which takes the kind
/// and diagonal last and skips the triangle's blocks. Fails (with an error)
/// when a form's symbol in \p module is something else.
LogicalResult convertMatmulsToLibraryCalls(
    ModuleOp module, llvm::StringRef prefix = MIXRT_CPU_MATMUL_PREFIX,
    bool overwriteZeros = false, bool fuseBias = false,
    bool fuseBiasGrad = false, bool fuseGelu = false, bool triangular = false);

/// What the host code of a package is linked with.
struct SupportCode {
  /// C source compiled into the library.
  const char *source = "";
  /// Extra compiler flags (include paths) and libraries (-L, -l, -rpath).
  std::vector<std::string> compileFlags, linkFlags;
  /// More C source, appended to `source` (the package's manifest:
  /// getManifestSource).
  std::string extraSource;
  /// Headers the C files include, as (path under an include directory,
  /// text); the directory is on the include path when they are compiled.
  std::vector<std::pair<std::string, std::string>> headers;
  /// More C files compiled and linked with `source`, as (file name, text).
  std::vector<std::pair<std::string, std::string>> sources;
  /// Functions the compiled code calls that read the pointers they are
  /// given only during the call (the CUDA target's kernel launch): the
  /// stack space built for such a call is freed after it
  /// (scopeCallAllocas).
  std::vector<std::string> nonCapturingCalls;
};

/// In every block but a function's entry, brackets the allocas that serve
/// only a call to one of \p nonCapturingCalls with llvm.stacksave and
/// llvm.stackrestore, so that a loop of such calls does not grow the stack.
void scopeCallAllocas(llvm::Module &module,
                      llvm::ArrayRef<std::string> nonCapturingCalls);

/// Translates an LLVM-dialect module to LLVM IR, optimises it for the host
/// CPU, and links it with \p support into the shared library `path`.
llvm::Error emitSharedLibrary(ModuleOp module, llvm::StringRef path,
                              unsigned optLevel, TimingScope &timing,
                              const SupportCode &support);

} // namespace mix
} // namespace mlir

#endif // MIX_CODEGEN_CODEGEN_H
