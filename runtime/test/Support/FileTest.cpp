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

} // namespace
