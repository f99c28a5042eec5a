//===- Library.h - Checks of a package's shared library ---------*- C++ -*-===//
//
// What CompiledModel checks of a package's library before and after dlopen,
// and the allocator setting its code runs best with.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_LIB_EXEC_LIBRARY_H
#define MIXRT_LIB_EXEC_LIBRARY_H

#include "mixrt/Manifest.h"

#include <string>

namespace mixrt::detail {

/// Checks the library file \p path before dlopen: its checksum against the
/// manifest's, and that its ELF tables and segments lie inside the file.
void checkLibraryFile(const std::string &path, const Manifest &manifest);

/// Why the loaded library \p handle was not compiled for \p manifest (its
/// compiled-in manifest differs, is malformed or missing); empty if it was.
std::string checkEmbeddedManifest(void *handle, const Manifest &manifest);

/// Keeps freed memory in the process for the compiled code's next step.
void keepFreedMemory();

} // namespace mixrt::detail

#endif // MIXRT_LIB_EXEC_LIBRARY_H
