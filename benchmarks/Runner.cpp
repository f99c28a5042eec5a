//===- Runner.cpp - Running and timing the child processes ----------------===//
//
// Re-executes this binary with --child options, reads the RESULT lines and
// the other load of the machine meanwhile, and measures again if needed.
//
//===----------------------------------------------------------------------===//

#include "Runner.h"

#include "BenchSupport.h"
#include "Machine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/wait.h>

using namespace mixbench;
namespace fs = std::filesystem;

std::vector<Result> mixbench::runChild(const std::string &args,
                                       const fs::path &log,
                                       std::string &error) {
  std::string cmd = shellQuote(fs::read_symlink("/proc/self/exe").string()) +
                    " " + args + " 2>>" + shellQuote(log.string());
  std::ofstream(log, std::ios::app) << "$ " << cmd << "\n";
  std::vector<Result> out;
  FILE *pipe = popen(cmd.c_str(), "r");
  if (!pipe) {
    error = "cannot start: " + cmd;
    return out;
  }
  char buf[4096];
  std::ofstream raw(log, std::ios::app);
  CpuClock before = CpuClock::now();
  while (std::fgets(buf, sizeof buf, pipe)) {
    std::string line = buf;
    raw << line;
    if (line.rfind("RESULT ", 0) != 0)
      continue;
    Result r;
    std::istringstream is(line.substr(7));
    std::string kv;
    while (is >> kv) {
      size_t eq = kv.find('=');
      if (eq != std::string::npos)
        r[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    out.push_back(r);
  }
  int status = pclose(pipe);
  double other = otherLoad(before, CpuClock::now());
  raw << "other_load=" << other << "\n";
  for (Result &r : out)
    r["other_load"] = std::to_string(other);
  if (status != 0 || out.empty()) {
    error = "child failed (exit status " +
            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
            "); see " + log.string();
    out.clear();
  }
  return out;
}

double mixbench::num(const Result &r, const std::string &k) {
  auto it = r.find(k);
  return it == r.end() ? NAN : std::atof(it->second.c_str());
}

std::vector<Result> mixbench::medianRound(std::vector<Result> rounds) {
  std::vector<Result> out;
  if (rounds.empty())
    return out;
  std::sort(rounds.begin(), rounds.end(), [](const Result &a, const Result &b) {
    return num(a, "median_s") < num(b, "median_s");
  });
  out.push_back(rounds[(rounds.size() - 1) / 2]);
  return out;
}

std::string Runner::stepArgs(int steps, int warmup) {
  return " --steps " + std::to_string(steps) + " --warmup " +
         std::to_string(warmup);
}

std::string TorchThreads::args() const {
  std::string n = std::to_string(intra);
  return (bf16 ? " --bf16-threads " : " --torch-threads ") + n +
         " --blas-threads " + std::to_string(blas);
}

std::string TorchThreads::describe() const {
  return "intra-op " + std::to_string(intra) +
         (bf16 ? std::string() : ", OpenBLAS " + std::to_string(blas));
}

TorchThreads Runner::fastestThreads(const std::string &args, bool bf16) {
  std::vector<TorchThreads> settings;
  int blasMax = *std::max_element(o.blasThreads.begin(), o.blasThreads.end());
  for (int intra : bf16 ? o.bf16Threads : o.torchThreads)
    for (int blas : bf16 ? std::vector<int>{blasMax} : o.blasThreads)
      settings.push_back({intra, blas, bf16});
  if (settings.size() == 1)
    return settings[0];
  // A probe: bf16 steps take seconds on CPUs without AVX-512 BF16.
  std::string probe = bf16 ? stepArgs(1, 1) : stepArgs(3, 1);
  TorchThreads best = settings[0];
  double bestTime = INFINITY;
  std::cerr << "mix-bench:   libtorch " << (bf16 ? "bf16" : "fp32")
            << " threads:";
  for (const TorchThreads &t : settings) {
    if (o.maxWait > 0)
      waitForIdle(o.maxOtherLoad, o.maxWait);
    std::string err;
    std::vector<Result> r = run(args + t.args() + probe, err);
    double s = r.empty() ? NAN : num(r[0], "median_s");
    std::cerr << " [" << t.describe() << "] "
              << (std::isnan(s) ? std::string("failed") : fmt("%.3f s", s));
    if (s < bestTime) {
      bestTime = s;
      best = t;
    }
  }
  std::cerr << "; fastest: " << best.describe() << "\n";
  return best;
}

std::vector<std::vector<Result>>
Runner::measured(const std::vector<std::string> &args, std::string &err,
                 double &other) {
  std::vector<std::vector<Result>> out;
  for (int attempt = 0;; ++attempt) {
    if (o.maxWait > 0)
      waitForIdle(o.maxOtherLoad, o.maxWait);
    out.clear();
    other = 0;
    for (const std::string &a : args) {
      out.push_back(runChild(a, log, err));
      if (!out.back().empty())
        other = std::max(other, num(out.back()[0], "other_load"));
    }
    if (other <= o.maxOtherLoad || attempt >= o.retries)
      return out;
    std::cerr << "mix-bench:   other processes kept " << fmt("%.2f", other)
              << " cores busy meanwhile: measuring again\n";
  }
}

std::pair<std::vector<Result>, std::vector<Result>>
Runner::alternated(const std::string &compiledArgs,
                   const std::string &torchArgs, std::string &err,
                   double &other) {
  std::vector<Result> compiledRounds, torchRounds;
  other = 0;
  for (int round = 0; round < o.rounds; ++round) {
    double roundOther = 0;
    auto res = measured({compiledArgs, torchArgs}, err, roundOther);
    other = std::max(other, roundOther);
    if (res[0].empty() || res[1].empty())
      return std::make_pair(std::vector<Result>(), std::vector<Result>());
    compiledRounds.push_back(res[0][0]);
    torchRounds.push_back(res[1][0]);
  }
  return std::make_pair(medianRound(compiledRounds), medianRound(torchRounds));
}
