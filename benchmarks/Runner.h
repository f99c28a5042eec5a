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

/// A libtorch thread setting: intra-op threads, and OpenBLAS's threads for
/// fp32 products (bf16 autocast does not use OpenBLAS).
struct TorchThreads {
  int intra = 1, blas = 1;
  bool bf16 = false;

  /// The child's options for this setting.
  std::string args() const;
  /// "intra-op 1, OpenBLAS 2" (bf16: "intra-op 2").
  std::string describe() const;
};

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
  /// The fastest libtorch setting for the child \p args (its model and
  /// package, without steps or threads): each combination of
  /// --torch-threads and --blas-threads (bf16: --bf16-threads) times a
  /// short probe, printed, and the lowest median step time wins. The only
  /// setting when there is one; the first if every probe failed.
  TorchThreads fastestThreads(const std::string &args, bool bf16);

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
