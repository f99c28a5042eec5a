//===- InputFiles.h - Checks on the tools' input files ----------*- C++ -*-===//
//
// What mixc and mix-opt check of an input before they read or parse it.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_FRONTEND_INPUTFILES_H
#define MIX_FRONTEND_INPUTFILES_H

#include "llvm/Support/Error.h"

namespace mlir {
namespace mix {

/// Fails unless `path` may be opened for reading without waiting: a named
/// FIFO (or a socket) is refused, since opening one blocks until a writer
/// comes. Regular files, devices and the pipes of /dev and /proc
/// (/dev/stdin, a shell's <(...)) are fine; so is "-", standard input.
llvm::Error checkReadableInput(llvm::StringRef path);

/// Fails if MLIR text nests regions, parenthesised or bracketed lists, or
/// angle-bracketed types and attributes more than `maxDepth` levels deep:
/// MLIR's parser recurses once a level, and thousands of levels overflow
/// its stack. Brackets inside string literals and `//` comments do not
/// count, nor do the `>` of `->`, `>=` and `<=`. Not for bytecode.
llvm::Error checkNesting(llvm::StringRef text, llvm::StringRef name,
                         int maxDepth = 1000);

} // namespace mix
} // namespace mlir

#endif // MIX_FRONTEND_INPUTFILES_H
