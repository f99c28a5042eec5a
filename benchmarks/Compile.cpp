//===- Compile.cpp - Compiling the benchmark models with mixc -------------===//
//
// Runs mixc on a model's spec unless an up-to-date package is there, and
// reads the mixing order from mixc's proved IR.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"

#include "BenchSupport.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>

using namespace mixbench;
namespace fs = std::filesystem;

Package mixbench::compile(const Options &o, const ModelConfig &c, bool bf16) {
  Package p;
  p.dir = fs::path(o.work) / c.size /
          (c.name + (c.l == 1 ? "-l1" : "") + (bf16 ? "-bf16" : ""));
  p.pkg = p.dir / "m.mixpkg";
  fs::create_directories(p.dir);
  std::string spec = c.json();
  std::string cmd = shellQuote(o.mixc) + " " +
                    shellQuote((p.dir / "spec.json").string()) + " --batch " +
                    std::to_string(c.b) + " --seq " + std::to_string(c.s) +
                    (bf16 ? " --precision bf16" : "");
  fs::path manifest = p.pkg / "manifest.json";
  bool fresh = fs::exists(manifest) && readFile(p.dir / "spec.json") == spec &&
               readFile(p.dir / "cmd.txt") == cmd &&
               fs::last_write_time(manifest) > fs::last_write_time(o.mixc);
  if (!fresh) {
    std::ofstream(p.dir / "spec.json") << spec;
    std::cerr << "mix-bench: compiling " << c.size << "/" << c.name
              << (c.l == 1 ? " (1 layer)" : "") << (bf16 ? " (bf16)" : "")
              << "\n";
    std::string full = cmd + " -o " + shellQuote(p.pkg.string()) + " >" +
                       shellQuote((p.dir / "mixc.log").string()) + " 2>&1";
    auto t0 = Clock::now();
    if (std::system(full.c_str()) != 0) {
      p.error = "mixc failed; see " + (p.dir / "mixc.log").string();
      return p;
    }
    std::ofstream(p.dir / "compile_s.txt") << seconds(t0, Clock::now()) << "\n";
    std::ofstream(p.dir / "cmd.txt") << cmd;
  }
  if (c.arch == "cmollm") {
    // The mixing order of the proved model: "order apply_then_mix" etc.
    std::string emit = cmd + " --emit=proved 2>/dev/null";
    FILE *pipe = popen(emit.c_str(), "r");
    std::string text;
    char buf[4096];
    while (pipe && std::fgets(buf, sizeof buf, pipe))
      text += buf;
    if (pipe)
      pclose(pipe);
    std::smatch mt;
    std::set<std::string> orders;
    std::string::const_iterator it = text.begin();
    std::regex re("order ([a-z_]+)");
    while (std::regex_search(it, text.cend(), mt, re)) {
      orders.insert(mt[1]);
      it = mt.suffix().first;
    }
    for (auto &s : orders)
      p.order += (p.order.empty() ? "" : "+") + s;
    if (p.order.empty())
      p.order = c.streams == 1 ? "folded to dense" : "?";
  }
  return p;
}
