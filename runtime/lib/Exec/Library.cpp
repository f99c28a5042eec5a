//===- Library.cpp - Checks of a package's shared library -----------------===//
//
// The library file against the manifest's checksum and its own ELF header
// before dlopen; the manifest compiled into it against manifest.json after.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Json.h"
#include "mixrt/PackageABI.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <malloc.h>
#include <sys/stat.h>

using namespace mixrt;

/// Checks the library file before dlopen sees it: dlopen maps the segments
/// an ELF header describes without comparing them with the file's size, so
/// a truncated library is a SIGBUS, not an error. Also compares the file
/// with the checksum the manifest records, which catches any corruption.
void mixrt::detail::checkLibraryFile(const std::string &path,
                                     const Manifest &manifest) {
  const char *recompile = "; recompile the package with mixc";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
    fail(path, ": the package's compiled code is missing", recompile);
  std::string bytes = readFile(path);
  if (manifest.libraryChecksum) {
    char actual[17];
    std::snprintf(actual, sizeof actual, "%016" PRIx64, fnv1a64(bytes));
    if (*manifest.libraryChecksum != actual)
      fail(path,
           ": the compiled code is corrupted or was replaced: its "
           "FNV-1a checksum is ",
           actual, ", expected ", *manifest.libraryChecksum, " (",
           manifest.manifestPath, ")", recompile);
  }
  Elf64_Ehdr header;
  if (bytes.size() < sizeof header ||
      std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    fail(path, ": not a shared library (", bytes.size(),
         " bytes without an ELF header)", recompile);
  // Other classes and byte orders are dlopen's to reject, with its message.
  if (bytes[EI_CLASS] != ELFCLASS64)
    return;
  std::memcpy(&header, bytes.data(), sizeof header);
  auto within = [&](uint64_t offset, uint64_t count, uint64_t size) {
    uint64_t end;
    return !__builtin_mul_overflow(count, size, &end) &&
           !__builtin_add_overflow(offset, end, &end) && end <= bytes.size();
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !within(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr)) ||
      !within(header.e_shoff, header.e_shnum, header.e_shentsize))
    fail(path,
         ": the compiled code is truncated or corrupted (its ELF "
         "header describes tables past the end of the ",
         bytes.size(), "-byte file)", recompile);
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, bytes.data() + header.e_phoff + i * sizeof segment,
                sizeof segment);
    if (!within(segment.p_offset, 1, segment.p_filesz))
      fail(path, ": the compiled code is truncated: segment ", i,
           " ends at byte ", segment.p_offset + segment.p_filesz,
           ", past the end of the ", bytes.size(), "-byte file", recompile);
  }
}

/// The compiled code allocates its step's buffers with malloc at each call
/// and frees them before returning, the same sizes every step. glibc hands
/// large blocks back to the kernel when they are freed (munmap, or trimming
/// the heap), so every step faulted them in again, zeroed page by page:
/// about 5% of a small training step in the kernel. Keeping freed memory
/// for reuse costs nothing in peak size, which the step sets anyway.
void mixrt::detail::keepFreedMemory() {
  static bool done = [] {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
    return true;
  }();
  (void)done;
}

/// Sorts every object's members by key, so that two documents that differ
/// only in the order of their keys write the same.
static void sortKeys(json::Value &value) {
  if (value.isArray())
    for (json::Value &element : value.getArray())
      sortKeys(element);
  if (!value.isObject())
    return;
  json::Value::Object &members = value.getObject();
  for (json::Member &member : members)
    sortKeys(member.value);
  std::stable_sort(members.begin(), members.end(),
                   [](const json::Member &a, const json::Member &b) {
                     return a.key < b.key;
                   });
}

/// The manifest without the library's checksum (which mixc adds after
/// compiling the library), as compact JSON with sorted keys.
static std::string withoutChecksum(json::Value value) {
  if (value.isObject()) {
    json::Value::Object &members = value.getObject();
    members.erase(std::remove_if(members.begin(), members.end(),
                                 [](const json::Member &m) {
                                   return m.key == "library_fnv1a64";
                                 }),
                  members.end());
  }
  sortKeys(value);
  return json::write(value);
}

std::string mixrt::detail::checkEmbeddedManifest(void *handle,
                                                 const Manifest &manifest) {
  const char *embedded =
      static_cast<const char *>(::dlsym(handle, MIX_PACKAGE_MANIFEST_SYMBOL));
  std::string why;
  if (!embedded)
    why = "has no manifest compiled in (an older mixc made it)";
  else {
    try {
      if (withoutChecksum(json::parse(embedded)) !=
          withoutChecksum(json::parse(manifest.text)))
        why = concat("was compiled for another manifest than ",
                     manifest.manifestPath,
                     " (was the manifest edited after mixc wrote it?)");
    } catch (const json::ParseError &e) {
      why = concat("has a malformed manifest compiled in: ", e.what());
    }
  }
  return why;
}
