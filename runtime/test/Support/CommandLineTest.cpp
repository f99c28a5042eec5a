//===- CommandLineTest.cpp - Tests of the argument parser -----------------===//
//
// Options in both spellings, help, and every way a command line can be
// wrong.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CommandLine.h"

#include "TestUtil.h"

using namespace mixrt;
using mixrt::test::failsWith;

namespace {

CommandSpec spec() {
  return {"tool",
          "cmd",
          "Does things.",
          {{"PKG", "the package"}},
          {{"out", "FILE", "where to write", true},
           {"steps", "N", "how many steps", false}}};
}

ParsedArgs parse(std::vector<std::string> args) {
  return parseArgs(spec(), args);
}

TEST(CommandLineTest, ParsesBothOptionSpellings) {
  ParsedArgs args = parse({"--out", "a.st", "pkg", "--steps=12"});
  EXPECT_FALSE(args.help);
  EXPECT_EQ(args.positionals, std::vector<std::string>{"pkg"});
  EXPECT_EQ(args.get("out"), "a.st");
  EXPECT_EQ(args.getInteger("steps", 1), 12);
  EXPECT_FALSE(parse({"pkg", "--out", "x"}).getOptional("steps"));
}

TEST(CommandLineTest, DoubleDashEndsOptions) {
  ParsedArgs args = parse({"--out", "x", "--", "--pkg"});
  EXPECT_EQ(args.positionals, std::vector<std::string>{"--pkg"});
}

TEST(CommandLineTest, HelpWinsOverEverythingElse) {
  EXPECT_TRUE(parse({"--bogus", "--help"}).help);
  EXPECT_TRUE(parse({"-h"}).help);
}

TEST(CommandLineTest, RejectsBadCommandLines) {
  EXPECT_TRUE(failsWith(
      [] {
        parse({"pkg", "--out", "x", "--outt", "y"});
      },
      {"cmd: unknown option '--outt'", "tool cmd --help"}));
  EXPECT_TRUE(failsWith(
      [] {
        parse({"pkg", "-o", "x"});
      },
      {"unknown option '-o'"}));
  EXPECT_TRUE(failsWith(
      [] {
        parse({"pkg", "--out"});
      },
      {"cmd: option --out needs a value (FILE)"}));
  EXPECT_TRUE(
      failsWith([] { parse({"pkg"}); }, {"cmd: missing option --out FILE"}));
  EXPECT_TRUE(failsWith(
      [] {
        parse({"pkg", "--out", "a", "--out=b"});
      },
      {"option --out given more than once"}));
  EXPECT_TRUE(failsWith(
      [] {
        parse({"--out", "a"});
      },
      {"expected 1 argument (PKG), got 0"}));
  EXPECT_TRUE(failsWith(
      [] {
        parse({"a", "b", "--out", "a"});
      },
      {"expected 1 argument (PKG), got 2"}));
}

TEST(CommandLineTest, FlagsTakeNoValue) {
  CommandSpec withFlag = spec();
  withFlag.options.push_back({"resume", "", "a flag", false});
  EXPECT_TRUE(parseArgs(withFlag, {"pkg", "--out", "a", "--resume"})
                  .getOptional("resume"));
  EXPECT_TRUE(failsWith(
      [&] {
        parseArgs(withFlag, {"pkg", "--out", "a", "--resume=no"});
      },
      {"cmd: option --resume takes no value, got 'no'"}));
}

TEST(CommandLineTest, RejectsBadNumbers) {
  for (const char *bad : {"", "x", "12x", "1.5", " 3", "0x10"})
    EXPECT_TRUE(failsWith(
        [&] {
          parse({"p", "--out", "o", "--steps", bad}).getInteger("steps");
        },
        {"cmd: option --steps: expected an integer"}))
        << bad;
  EXPECT_TRUE(failsWith(
      [] {
        parse({"p", "--out", "o", "--steps", "99999999999999999999"})
            .getInteger("steps");
      },
      {"out of range"}));
  EXPECT_TRUE(failsWith(
      [] {
        parse({"p", "--out", "o", "--steps", "0"}).getInteger("steps", 1);
      },
      {"0 is outside [1, "}));
  EXPECT_EQ(parse({"p", "--out", "o", "--steps", "-3"}).getInteger("steps"),
            -3);
  EXPECT_EQ(parseNumber("2.5e-3", "x"), 2.5e-3);
  EXPECT_TRUE(failsWith([] { parseNumber("nan", "lr"); },
                        {"lr: expected a number, got 'nan'"}));
  EXPECT_TRUE(
      failsWith([] { parseNumber("1e999", "lr"); }, {"expected a number"}));
}

TEST(CommandLineTest, UsageListsEveryArgument) {
  std::string usage = formatUsage(spec());
  EXPECT_EQ(usage.find("usage: tool cmd PKG --out FILE [--steps N]\n"), 0u)
      << usage;
  for (const char *part : {"Does things.", "  PKG", "the package", "--out FILE",
                           "where to write", "--steps N", "--help"})
    EXPECT_NE(usage.find(part), std::string::npos) << part;
}

TEST(CommandLineTest, UsageShowsAFlagWithoutAValue) {
  CommandSpec withFlag = spec();
  withFlag.options.push_back({"resume", "", "continue", false});
  std::string usage = formatUsage(withFlag);
  EXPECT_EQ(usage.find("usage: tool cmd PKG --out FILE [--steps N] "
                       "[--resume]\n"),
            0u)
      << usage;
  EXPECT_NE(usage.find("\n  --resume    continue\n"), std::string::npos)
      << usage;
}

} // namespace
