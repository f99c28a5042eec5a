//===- File.h - Reading files and replacing them atomically -----*- C++ -*-===//
//
// Whole-file and positioned reads with errors naming the path, and a writer
// that replaces a file atomically: it writes a temporary file in the same
// directory, fsyncs it and renames it over the target, so a failure at any
// point leaves the previous file untouched.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_FILE_H
#define MIXRT_FILE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace mixrt {

/// Reads the whole of \p path; throws Error naming the path.
std::string readFile(const std::string &path);

/// A regular file open for positioned reads.
class InputFile {
public:
  explicit InputFile(const std::string &path);
  ~InputFile();
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;

  const std::string &getPath() const { return path; }
  uint64_t getSize() const { return size; }
  /// Reads exactly \p length bytes at \p offset; throws on a short read.
  void readAt(uint64_t offset, void *buffer, size_t length) const;

private:
  std::string path;
  int fd = -1;
  uint64_t size = 0;
};

/// Writes a file that appears at its path only when commit() succeeds.
/// Destroying the writer without a successful commit() removes the
/// temporary file and leaves whatever was at the path before.
class AtomicFileWriter {
public:
  explicit AtomicFileWriter(const std::string &path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;

  void write(const void *data, size_t length);
  void write(const std::string &data) { write(data.data(), data.size()); }
  /// Flushes to disk and renames the temporary file over the path.
  void commit();

private:
  void discard();

  std::string path;
  std::string tempPath;
  int fd = -1;
  bool committed = false;
};

} // namespace mixrt

#endif // MIXRT_FILE_H
