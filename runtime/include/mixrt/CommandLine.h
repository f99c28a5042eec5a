//===- CommandLine.h - A small subcommand argument parser -------*- C++ -*-===//
//
// Parses `tool command POSITIONAL... --option VALUE...` against a
// description of the command, and prints its usage. Unknown options,
// missing or repeated options, missing values and bad numbers are Errors.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_COMMANDLINE_H
#define MIXRT_COMMANDLINE_H

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mixrt {

/// What a subcommand accepts. Every option takes one value.
struct CommandSpec {
  struct Positional {
    std::string name;
    std::string help;
  };
  struct Option {
    std::string flag; ///< Without the leading "--".
    std::string metavar;
    std::string help;
    bool required = false;
  };
  std::string tool;
  std::string name;
  std::string summary;
  std::vector<Positional> positionals;
  std::vector<Option> options;
};

/// The arguments of one invocation of a subcommand.
class ParsedArgs {
public:
  explicit ParsedArgs(std::string command) : command(std::move(command)) {}

  /// True when --help or -h was given; nothing else was checked then.
  bool help = false;
  std::vector<std::string> positionals;

  /// The value of option \p flag; throws Error when it was not given.
  const std::string &get(const std::string &flag) const;
  std::optional<std::string> getOptional(const std::string &flag) const;
  /// The value of \p flag as an integer in [min, max], or as a finite
  /// number; throws Error naming the option otherwise.
  int64_t getInteger(const std::string &flag, int64_t min = INT64_MIN,
                     int64_t max = INT64_MAX) const;
  double getNumber(const std::string &flag) const;

  void set(const std::string &flag, std::string value);

private:
  std::string command;
  std::map<std::string, std::string> values;
};

/// Parses \p args (the words after the command name) against \p spec.
ParsedArgs parseArgs(const CommandSpec &spec,
                     const std::vector<std::string> &args);

/// The usage text of \p spec, ending in a newline.
std::string formatUsage(const CommandSpec &spec);

/// Strict conversions of a whole word; \p what names it in the message.
int64_t parseInteger(const std::string &text, const std::string &what);
double parseNumber(const std::string &text, const std::string &what);

/// A tool's main: answers `TOOL --version` with the project's version, git
/// revision and LLVM version, else runs `run` on the arguments after the
/// program name and turns every exception into one line `TOOL: error: ...`
/// and exit code 1.
int runToolMain(const char *tool, int argc, char **argv,
                int (*run)(const std::vector<std::string> &));

/// What runs a subcommand on its parsed arguments; returns the exit status.
using CommandBody = int (*)(const ParsedArgs &);

/// Runs the subcommand words[0] of a tool with the words after it. With no
/// words, \p printUsage writes the tool's usage to stderr (status 1); with
/// --help, -h or help, to stdout (status 0). Otherwise \p select gives the
/// command's spec and body (throwing Error for an unknown command); --help
/// after the command prints its usage, else the body runs.
int runSubcommand(
    const std::vector<std::string> &words, void (*printUsage)(std::ostream &),
    std::pair<CommandSpec, CommandBody> (*select)(const std::string &command));

} // namespace mixrt

#endif // MIXRT_COMMANDLINE_H
