//===- Runner.h - Running and timing the child processes --------*- C++ -*-===//
//
// The driver's side of the children: their RESULT lines, measured again
// while the machine was busy, and rounds of compiled and libtorch in turn.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_RUNNER_H
#define MIXBENCH_RUNNER_H

#include "Options.h"

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mixbench {

using Result = std::map<std::string, std::string>;

/// Runs this executable with \p args; returns its RESULT lines, each as
/// key=value pairs (empty on failure, with the reason in \p error).
std::vector<Result> runChild(const std::string &args,
                             const std::filesystem::path &log,
                             std::string &error);

/// The number under key \p k of \p r (NaN if there is none).
double num(const Result &r, const std::string &k);

/// The median of a side's rounds by median step time (the lower middle of
/// an even count); empty when there were none.
std::vector<Result> medianRound(std::vector<Result> rounds);

/// The children of the driver, measured on an idle enough machine; each
/// child's stderr goes to \p log.
class Runner {
public:
  Runner(const Options &o, std::filesystem::path log)
      : o(o), log(std::move(log)) {}

  /// " --steps N --warmup W".
  static std::string stepArgs(int steps, int warmup);
  /// The libtorch children's thread options.
  std::string threadArgs() const;

  /// Runs the children one after the other, again (up to --retries times)
  /// if other processes kept more than --max-other-load cores busy.
  std::vector<std::vector<Result>>
  measured(const std::vector<std::string> &args, std::string &err,
           double &other);

  /// The compiled and the libtorch child alternately, --rounds times; each
  /// side's median round by median step time, both empty if a round failed.
  /// \p other is the most other load any round saw.
  std::pair<std::vector<Result>, std::vector<Result>>
  alternated(const std::string &compiledArgs, const std::string &torchArgs,
             std::string &err, double &other);

  /// One child, measured once.
  std::vector<Result> run(const std::string &args, std::string &err) {
    return runChild(args, log, err);
  }

private:
  const Options &o;
  std::filesystem::path log;
};

} // namespace mixbench

#endif // MIXBENCH_RUNNER_H
