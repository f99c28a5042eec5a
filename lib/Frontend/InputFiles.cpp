//===- InputFiles.cpp - Checks on the tools' input files ------------------===//
//
// What mixc and mix-opt check of an input before they read or parse it.
//
//===----------------------------------------------------------------------===//

#include "mix/Frontend/InputFiles.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir::mix;

llvm::Error mlir::mix::checkReadableInput(llvm::StringRef path) {
  if (path == "-")
    return llvm::Error::success();
  llvm::sys::fs::file_status status;
  // A path that cannot be examined is left to the open, which names why.
  if (llvm::sys::fs::status(path, status))
    return llvm::Error::success();
  switch (status.type()) {
  case llvm::sys::fs::file_type::fifo_file:
    // Pipes already open (standard input, process substitution) do not
    // block; a FIFO in the file system waits for a writer.
    if (path.starts_with("/dev/") || path.starts_with("/proc/"))
      return llvm::Error::success();
    break;
  case llvm::sys::fs::file_type::socket_file:
  case llvm::sys::fs::file_type::directory_file:
    break;
  default:
    return llvm::Error::success();
  }
  return llvm::createStringError(std::errc::invalid_argument,
                                 "cannot read '%s': not a regular file",
                                 path.str().c_str());
}

llvm::Error mlir::mix::checkNesting(llvm::StringRef text, llvm::StringRef name,
                                    int maxDepth) {
  int depth = 0, line = 1;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    char next = i + 1 < e ? text[i + 1] : '\0';
    switch (c) {
    case '\n':
      ++line;
      break;
    case '"':
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (next == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '<':
      if (next == '=')
        break;
      [[fallthrough]];
    case '{':
    case '(':
    case '[':
      if (++depth > maxDepth)
        return llvm::createStringError(
            std::errc::invalid_argument,
            "%s:%d: nested more than %d levels deep (regions, lists, types "
            "and attributes)",
            name.str().c_str(), line, maxDepth);
      break;
    case '>':
      if (next == '=' || (i > 0 && text[i - 1] == '-'))
        break;
      [[fallthrough]];
    case '}':
    case ')':
    case ']':
      depth = depth > 0 ? depth - 1 : 0;
      break;
    default:
      break;
    }
  }
  return llvm::Error::success();
}
