//===- Version.h - What every tool answers to --version ---------*- C++ -*-===//
//
// The project's version, the git revision it was built from and the LLVM
// it was built against (build/include/mix/Version.inc, written by
// cmake/GenerateVersion.cmake at every build), as one line. Plain C++, so
// that the runtime's tools, which link no LLVM, share it.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_VERSION_H
#define MIX_VERSION_H

#include "mix/Version.inc"

#include <string>

namespace mix {

/// "TOOL 0.1.0 (git 5f68fc4a1b2c, LLVM 22.1.8)".
inline std::string versionLine(const char *tool) {
  return std::string(tool) + " " MIX_VERSION_STRING " (git " MIX_GIT_REVISION
                             ", LLVM " MIX_LLVM_VERSION ")";
}

} // namespace mix

#endif // MIX_VERSION_H
