//===- Progress.h - A progress bar for long work on stderr ------*- C++ -*-===//
//
// Reports how far a long job (tokenizing a large corpus) has come: on a
// terminal, one line redrawn in place with a bar, the fraction, the rate
// and the time left; elsewhere (a log file), a plain line at every tenth.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_PROGRESS_H
#define MIXRT_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace mixrt {

class Progress {
public:
  /// Reports on \p out the progress of \p label, a job of \p total units
  /// (bytes: the rate is printed in MB/s). \p terminal says whether \p out
  /// is a terminal (a bar redrawn in place) or not (a line a tenth).
  Progress(std::string label, uint64_t total, std::FILE *out, bool terminal);
  /// For stderr, a terminal when isatty(2) says so.
  Progress(std::string label, uint64_t total);
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// \p n more units are done (the count stops at the total).
  void advance(uint64_t n);
  /// Ends the report with a line that says how long the whole job took.
  void finish();

private:
  void draw(bool last);

  std::string label;
  uint64_t total;
  uint64_t done = 0;
  std::FILE *out;
  bool terminal;
  bool finished = false;
  int lastTenth = 0;
  std::chrono::steady_clock::time_point start, lastDraw;
};

} // namespace mixrt

#endif // MIXRT_PROGRESS_H
