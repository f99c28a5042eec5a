//===- CPUCodegen.h - The CPU target's own code generation ------*- C++ -*-===//
//
// What only the CPU target does on top of the shared code generation
// (mix/Codegen/Codegen.h): bf16 products, loop nests outlined and split over
// threads, and the support code every CPU package is compiled with.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_TARGET_CPU_CPUCODEGEN_H
#define MIX_TARGET_CPU_CPUCODEGEN_H

#include "mix/Codegen/Codegen.h"

namespace mlir {
namespace mix {

/// Moves every top-level loop nest of every function into a function of its
/// own, called in its place; constants are cloned in, other values passed.
/// With \p threadRanges, a parallel nest worth running on several threads
/// (isThreadable in OutlineLoopNests.cpp) becomes `@f(t0, t1, args...)`,
/// running iterations [t0, t1) of its outer loop, marked kThreadedAttr.
void outlineLoopNests(ModuleOp module, bool threadRanges = false);

/// The most arguments (besides the range) and the fewest iterations of a
/// loop nest run on several threads.
inline constexpr size_t kMaxParallelArgs = MIX_MAX_PARALLEL_ARGS;
inline constexpr int64_t kMinParallelWork = 16384;
/// Marks a function outlined with a range of iterations (threadable).
inline constexpr llvm::StringLiteral kThreadedAttr = "mix.threaded";

/// In the LLVM dialect: replaces each call of a function marked
/// kThreadedAttr, `f(t0, t1, args...)`, by
/// `mix_parallel_for(&f, t0, t1, nargs, packed args)`, which splits
/// [t0, t1) over the OpenMP threads of the support code.
void parallelizeOutlinedCalls(ModuleOp module);

/// On tensors: makes every f32 linalg.matmul / linalg.batch_matmul take its
/// operands rounded to bf16, accumulating in f32 (mixc --precision bf16).
void roundMatmulOperandsToBF16(FunctionOpInterface function);

/// The C source linked into every package: `mixrt_matmul`,
/// `mixrt_batch_matmul` (see convertMatmulsToLibraryCalls) and `memrefCopy`.
/// (The fused attention, `mixrt_flash_attention`, is a second file of
/// getCPUSupportCode().)
const char *getSupportSource();

/// The CPU package's support code: getSupportSource() and oneDNN.
SupportCode getCPUSupportCode();

} // namespace mix
} // namespace mlir

#endif // MIX_TARGET_CPU_CPUCODEGEN_H
