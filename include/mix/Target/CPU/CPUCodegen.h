//===- CPUCodegen.h - Linalg on tensors to a shared library -----*- C++ -*-===//
//
// The CPU back end: bufferization and lowering to the LLVM dialect, packed
// entry points for the runtime, and native code in a shared library.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_TARGET_CPU_CPUCODEGEN_H
#define MIX_TARGET_CPU_CPUCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

#include "llvm/Support/Error.h"

namespace mlir {
namespace mix {

/// Adds the dialects and interface models the CPU back end needs (for
/// bufferization and the lowering to LLVM) to `registry`.
void registerCPUCodegenDialects(DialectRegistry &registry);

/// The symbol of the packed entry point of function `name`: `mix_<name>`.
std::string entryPointSymbol(llvm::StringRef name);

/// Bufferizes `module` (linalg, tensor, arith, math, scf on tensors) and
/// lowers it to the LLVM dialect. Every function takes bare pointers to its
/// operands and then to its results (results become out-parameters).
LogicalResult lowerToLLVMDialect(ModuleOp module);

/// Adds `llvm.func @mix_<name>(!llvm.ptr)` for each function `name`: it
/// reads the function's pointer arguments from an array and calls it, so
/// the runtime can call any entry point through one C signature,
/// `void (void **)`.
LogicalResult addPackedEntryPoints(ModuleOp module,
                                   llvm::ArrayRef<std::string> names);

/// Translates an LLVM-dialect module to LLVM IR, optimises it for the host
/// CPU, and links it into the shared library `path`.
llvm::Error emitSharedLibrary(ModuleOp module, llvm::StringRef path);

} // namespace mix
} // namespace mlir

#endif // MIX_TARGET_CPU_CPUCODEGEN_H
