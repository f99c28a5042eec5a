//===- FileTest.cpp - Tests of file reading and atomic replacement --------===//
//
// Reads report the path; an atomic write either replaces the file whole or
// leaves the previous file and no temporary behind, whatever fails.
//
//===----------------------------------------------------------------------===//

#include "mixrt/File.h"

#include "TestUtil.h"

#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mixrt;
using mixrt::test::failsWith;
using mixrt::test::readBytes;
using mixrt::test::TempDir;
using mixrt::test::writeBytes;

namespace {

TEST(FileTest, ReadsWholeFiles) {
  TempDir dir;
  std::string bytes("a\0b\xFF", 4);
  writeBytes(dir.file("f"), bytes);
  EXPECT_EQ(readFile(dir.file("f")), bytes);
}

TEST(FileTest, ReadErrorsNameThePath) {
  TempDir dir;
  EXPECT_TRUE(failsWith([&] { readFile(dir.file("absent")); },
                        {dir.file("absent"), "cannot open"}));
  EXPECT_TRUE(failsWith([&] { readFile(dir.path.string()); },
                        {dir.path.string(), "not a regular file"}));
}

TEST(FileTest, ShortReadsAreTruncation) {
  TempDir dir;
  writeBytes(dir.file("f"), "0123456789");
  InputFile file(dir.file("f"));
  EXPECT_EQ(file.getSize(), 10u);
  char buffer[8];
  file.readAt(6, buffer, 4);
  EXPECT_EQ(std::string(buffer, 4), "6789");
  EXPECT_TRUE(failsWith([&] { file.readAt(6, buffer, 5); },
                        {dir.file("f"), "truncated"}));
}

TEST(AtomicFileWriterTest, CommitReplacesTheFile) {
  TempDir dir;
  writeBytes(dir.file("out"), "old contents");
  AtomicFileWriter writer(dir.file("out"));
  writer.write("new ");
  writer.write("data");
  // Nothing is visible before the commit.
  EXPECT_EQ(readBytes(dir.file("out")), "old contents");
  writer.commit();
  EXPECT_EQ(readBytes(dir.file("out")), "new data");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out"});
}

TEST(AtomicFileWriterTest, AbandonedWriteLeavesTheOldFile) {
  TempDir dir;
  writeBytes(dir.file("out"), "old contents");
  {
    AtomicFileWriter writer(dir.file("out"));
    writer.write("partial");
    // Destroyed without commit, as when an exception unwinds.
  }
  EXPECT_EQ(readBytes(dir.file("out")), "old contents");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out"});
}

TEST(AtomicFileWriterTest, MissingDirectoryIsAnError) {
  TempDir dir;
  std::string path = dir.file("no/such/dir/out");
  EXPECT_TRUE(failsWith([&] { AtomicFileWriter writer(path); },
                        {path, "cannot create a temporary file"}));
  EXPECT_TRUE(dir.list().empty());
}

TEST(AtomicFileWriterTest, FailedRenameLeavesTheTargetAndNoTemporary) {
  TempDir dir;
  // A non-empty directory where the file should go: rename must fail.
  std::filesystem::create_directory(dir.file("out"));
  writeBytes(dir.file("out/keep"), "kept");
  AtomicFileWriter writer(dir.file("out"));
  writer.write("data");
  EXPECT_TRUE(failsWith([&] { writer.commit(); },
                        {dir.file("out"), "cannot replace the file"}));
  EXPECT_EQ(readBytes(dir.file("out/keep")), "kept");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out"});
}

TEST(AtomicFileWriterTest, FailedWriteMidwayLeavesTheOldFile) {
  TempDir dir;
  writeBytes(dir.file("out"), "old contents");
  // Limit file sizes so the write fails with EFBIG part of the way through.
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 1 << 20)
    GTEST_SKIP() << "file size limit already set";
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool failed = false;
  std::string message;
  try {
    AtomicFileWriter writer(dir.file("out"));
    writer.write(std::string(3000, 'x'));
    writer.write(std::string(3000, 'y'));
    writer.commit();
  } catch (const Error &e) {
    failed = true;
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, oldHandler);
  EXPECT_TRUE(failed);
  EXPECT_NE(message.find("write error"), std::string::npos) << message;
  EXPECT_EQ(readBytes(dir.file("out")), "old contents");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out"});
}

TEST(AtomicFileWriterTest, ReadOnlyDirectoryIsAnError) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root writes to read-only directories";
  TempDir dir;
  writeBytes(dir.file("out"), "old contents");
  std::filesystem::permissions(dir.path,
                               std::filesystem::perms::owner_read |
                                   std::filesystem::perms::owner_exec);
  EXPECT_TRUE(failsWith([&] { AtomicFileWriter writer(dir.file("out")); },
                        {dir.file("out"), "cannot create a temporary file"}));
  EXPECT_EQ(readBytes(dir.file("out")), "old contents");
}

TEST(AtomicFileWriterTest, NewFilesGetTheUmaskMode) {
  TempDir dir;
  mode_t old = ::umask(022);
  AtomicFileWriter writer(dir.file("out"));
  writer.commit();
  ::umask(old);
  struct stat st;
  ASSERT_EQ(::stat(dir.file("out").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(AtomicFileWriterTest, UseAfterCommitIsAnError) {
  TempDir dir;
  AtomicFileWriter writer(dir.file("out"));
  writer.commit();
  EXPECT_TRUE(failsWith([&] { writer.write("x"); }, {"after the file was"}));
  EXPECT_TRUE(failsWith([&] { writer.commit(); }, {"after the file was"}));
}

TEST(AtomicFileWriterTest, TemporaryFilesOfKilledWritersAreRemoved) {
  TempDir dir;
  writeBytes(dir.file("out"), "good");
  // What writers killed before commit() leave behind, beside files that
  // only look alike.
  writeBytes(dir.file(".out.tmp.123.0"), "partial");
  writeBytes(dir.file(".out.tmp.456.7"), "partial");
  writeBytes(dir.file(".other.tmp.123.0"), "keep");
  writeBytes(dir.file("out.tmp.1.0"), "keep");
  {
    // An uncommitted writer of this process leaves nothing either.
    AtomicFileWriter writer(dir.file("out"));
    writer.write("new");
  }
  EXPECT_EQ(removeTemporaryFiles(dir.file("out")), 2);
  EXPECT_EQ(dir.list(), (std::vector<std::string>{".other.tmp.123.0", "out",
                                                  "out.tmp.1.0"}));
  EXPECT_EQ(readBytes(dir.file("out")), "good");
  EXPECT_EQ(removeTemporaryFiles(dir.file("missing/out")), 0);
}

TEST(AppendFileTest, AppendsTruncatesAndSyncs) {
  TempDir dir;
  writeBytes(dir.file("log"), "old\n");
  {
    AppendFile log(dir.file("log"), /*truncate=*/false);
    log.append("a\n");
    log.append("bb\n");
    log.sync();
  }
  EXPECT_EQ(readBytes(dir.file("log")), "old\na\nbb\n");
  {
    AppendFile log(dir.file("log"), /*truncate=*/false);
    log.truncate(6);
    // Appends go to the new end.
    log.append("c\n");
  }
  EXPECT_EQ(readBytes(dir.file("log")), "old\na\nc\n");
  {
    AppendFile log(dir.file("log"), /*truncate=*/true);
    log.append("fresh\n");
  }
  EXPECT_EQ(readBytes(dir.file("log")), "fresh\n");
}

TEST(AppendFileTest, OpenErrorsNameThePath) {
  TempDir dir;
  EXPECT_TRUE(failsWith(
      [&] { AppendFile log(dir.path.string(), false); },
      {dir.path.string(), ": cannot open for writing: ", "Is a directory"}));
  EXPECT_TRUE(failsWith([&] { AppendFile log(dir.file("no/log"), true); },
                        {dir.file("no/log"), "cannot open for writing"}));
}

TEST(FileLockTest, OneHolderAtATime) {
  TempDir dir;
  std::string path = dir.file("lock");
  {
    FileLock first(path);
    ASSERT_TRUE(first.tryLock());
    // flock locks belong to open files: a second one is refused even in
    // the same process, and says who holds the lock.
    FileLock second(path);
    EXPECT_FALSE(second.tryLock());
    EXPECT_EQ(second.getHolder(), std::to_string(::getpid()));
  }
  // Released with its holder.
  FileLock third(path);
  EXPECT_TRUE(third.tryLock());
  writeBytes(path, "garbage");
  EXPECT_EQ(third.getHolder(), "unknown");
}

} // namespace
