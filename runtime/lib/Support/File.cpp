//===- File.cpp - Reading files and replacing them atomically -------------===//
//
// POSIX file access: positioned reads that report short files, the
// temporary-file + fsync + rename protocol for atomic replacement, appends
// of whole lines, and flock(2).
//
//===----------------------------------------------------------------------===//

#include "mixrt/File.h"
#include "mixrt/Error.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace mixrt;

static std::string systemError() { return std::strerror(errno); }

static std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

InputFile::InputFile(const std::string &path) : path(path) {
  // O_NONBLOCK: a FIFO is refused below instead of waiting for a writer;
  // reads of a regular file do not block either way.
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    fail(path, ": cannot open: ", systemError());
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string reason = systemError();
    ::close(fd);
    fail(path, ": cannot stat: ", reason);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, ": not a regular file");
  }
  size = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd >= 0)
    ::close(fd);
}

void InputFile::readAt(uint64_t offset, void *buffer, size_t length) const {
  char *out = static_cast<char *>(buffer);
  while (length > 0) {
    ssize_t n = ::pread(fd, out, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      fail(path, ": read error: ", systemError());
    if (n == 0)
      fail(path, ": file is truncated (unexpected end of file at byte ", offset,
           ")");
    out += n;
    offset += static_cast<uint64_t>(n);
    length -= static_cast<size_t>(n);
  }
}

std::string mixrt::readFile(const std::string &path) {
  InputFile file(path);
  std::string data(file.getSize(), '\0');
  file.readAt(0, data.data(), data.size());
  return data;
}

//===----------------------------------------------------------------------===//
// Atomic writing
//===----------------------------------------------------------------------===//

/// The name of \p path's temporary files up to the process id:
/// ".BASE.tmp.".
static std::string temporaryPrefix(const std::string &path) {
  return "." + path.substr(path.rfind('/') + 1) + ".tmp.";
}

AtomicFileWriter::AtomicFileWriter(const std::string &path) : path(path) {
  if (path.empty())
    fail("cannot write a file with an empty name");
  std::string base = path.substr(path.rfind('/') + 1);
  if (base.empty())
    fail(path, ": cannot write: the path names a directory");
  // O_EXCL with a name unique to this process and writer; the mode honours
  // the umask as a plain create would.
  static std::atomic<unsigned> counter{0};
  std::string prefix = directoryOf(path) + "/" + temporaryPrefix(path) +
                       std::to_string(::getpid()) + ".";
  for (int attempt = 0; fd < 0; ++attempt) {
    tempPath = prefix + std::to_string(counter++);
    fd =
        ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 100)) {
      std::string reason = systemError();
      tempPath.clear();
      fail(path, ": cannot create a temporary file next to it: ", reason);
    }
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed)
    discard();
}

void AtomicFileWriter::discard() {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
  if (!tempPath.empty())
    ::unlink(tempPath.c_str());
  tempPath.clear();
}

void AtomicFileWriter::write(const void *data, size_t length) {
  if (fd < 0)
    fail(path, ": write after the file was committed or discarded");
  const char *in = static_cast<const char *>(data);
  while (length > 0) {
    ssize_t n = ::write(fd, in, length);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      std::string reason = systemError();
      discard();
      fail(path, ": write error: ", reason);
    }
    in += n;
    length -= static_cast<size_t>(n);
  }
}

void AtomicFileWriter::commit() {
  if (fd < 0)
    fail(path, ": commit after the file was committed or discarded");
  if (::fsync(fd) != 0) {
    std::string reason = systemError();
    discard();
    fail(path, ": cannot flush to disk: ", reason);
  }
  int closeResult = ::close(fd);
  fd = -1;
  if (closeResult != 0) {
    std::string reason = systemError();
    discard();
    fail(path, ": write error on close: ", reason);
  }
  if (::rename(tempPath.c_str(), path.c_str()) != 0) {
    std::string reason = systemError();
    discard();
    fail(path, ": cannot replace the file: ", reason);
  }
  committed = true;
  tempPath.clear();
  // Make the rename itself durable.
  int dirFd = ::open(directoryOf(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}

int mixrt::removeTemporaryFiles(const std::string &path) {
  std::string directory = directoryOf(path);
  std::string prefix = temporaryPrefix(path);
  DIR *dir = ::opendir(directory.c_str());
  if (!dir)
    return 0;
  std::vector<std::string> names;
  while (const dirent *entry = ::readdir(dir))
    if (std::strncmp(entry->d_name, prefix.c_str(), prefix.size()) == 0)
      names.push_back(entry->d_name);
  ::closedir(dir);
  int removed = 0;
  for (const std::string &name : names)
    removed += ::unlink((directory + "/" + name).c_str()) == 0;
  return removed;
}

//===----------------------------------------------------------------------===//
// Appending
//===----------------------------------------------------------------------===//

AppendFile::AppendFile(const std::string &path, bool truncate) : path(path) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  if (truncate)
    flags |= O_TRUNC;
  fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0)
    fail(path, ": cannot open for writing: ", systemError());
}

AppendFile::~AppendFile() {
  if (fd >= 0)
    ::close(fd);
}

void AppendFile::append(const std::string &data) {
  const char *in = data.data();
  size_t length = data.size();
  while (length > 0) {
    ssize_t n = ::write(fd, in, length);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      fail(path, ": write error: ", systemError());
    in += n;
    length -= static_cast<size_t>(n);
  }
}

void AppendFile::truncate(uint64_t size) {
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0)
    fail(path, ": cannot truncate to ", size, " bytes: ", systemError());
}

void AppendFile::sync() {
  if (::fsync(fd) != 0)
    fail(path, ": cannot flush to disk: ", systemError());
}

//===----------------------------------------------------------------------===//
// Locking
//===----------------------------------------------------------------------===//

FileLock::FileLock(const std::string &path) : path(path) {
  fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    fail(path, ": cannot open the lock file: ", systemError());
}

FileLock::~FileLock() {
  // Closing the descriptor releases the lock; the file stays for the next
  // run (removing it would race with a process about to lock it).
  if (fd >= 0)
    ::close(fd);
}

bool FileLock::tryLock() {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR)
      continue;
    if (errno == EWOULDBLOCK)
      return false;
    // A file system without locks: go on unlocked, as before locks were.
    if (errno == ENOLCK || errno == EOPNOTSUPP)
      return true;
    fail(path, ": cannot lock: ", systemError());
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0)
    (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return true;
}

std::string FileLock::getHolder() const {
  char buffer[32] = {};
  ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string pid(buffer, n > 0 ? size_t(n) : 0);
  while (!pid.empty() && pid.back() == '\n')
    pid.pop_back();
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos)
    return "unknown";
  return pid;
}
