//===- File.h - Reading files and replacing them atomically -----*- C++ -*-===//
//
// Whole-file and positioned reads with errors naming the path, a writer
// that replaces a file atomically (it writes a temporary file in the same
// directory, fsyncs it and renames it over the target, so a failure at any
// point leaves the previous file untouched), an appending writer for logs,
// and an advisory file lock.
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

/// Removes the temporary files that AtomicFileWriter(\p path) objects left
/// next to \p path when their process was killed before commit() or its
/// own cleanup; returns how many. Only for a caller that knows no other
/// process is writing \p path (see FileLock).
int removeTemporaryFiles(const std::string &path);

/// A file written by appending, for logs kept a line at a time: each
/// append() is a single write(2) where the system allows, so that a process
/// killed at any moment leaves whole lines and at most one partial last
/// line.
class AppendFile {
public:
  /// Opens \p path for appending, creating it; with \p truncate, empties
  /// it. Throws Error "PATH: cannot open for writing: REASON".
  AppendFile(const std::string &path, bool truncate);
  ~AppendFile();
  AppendFile(const AppendFile &) = delete;
  AppendFile &operator=(const AppendFile &) = delete;

  void append(const std::string &data);
  /// Shortens the file to its first \p size bytes.
  void truncate(uint64_t size);
  /// Flushes what was appended to disk.
  void sync();

private:
  std::string path;
  int fd = -1;
};

/// An exclusive advisory lock (flock(2)) on a file, created if missing and
/// holding the locking process's id; released on destruction, and by the
/// system when the process dies, however it dies.
class FileLock {
public:
  explicit FileLock(const std::string &path);
  ~FileLock();
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;

  /// Takes the lock without waiting; false if another process holds it
  /// (getHolder() then says which, if it can). True without a lock on a
  /// file system that has none.
  bool tryLock();
  /// The process id recorded in the file, or "unknown".
  std::string getHolder() const;

private:
  std::string path;
  int fd = -1;
};

} // namespace mixrt

#endif // MIXRT_FILE_H
