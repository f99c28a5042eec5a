//===- Progress.cpp - A progress bar for long work on stderr --------------===//

#include "mixrt/Progress.h"

#include <unistd.h>

using namespace mixrt;

Progress::Progress(std::string label, uint64_t total, std::FILE *out,
                   bool terminal)
    : label(std::move(label)), total(total), out(out), terminal(terminal),
      start(std::chrono::steady_clock::now()), lastDraw(start) {
  if (terminal)
    draw(false);
}

Progress::Progress(std::string label, uint64_t total)
    : Progress(std::move(label), total, stderr, ::isatty(STDERR_FILENO)) {}

Progress::~Progress() {
  // An unfinished bar (an error unwound past it) leaves the line it drew,
  // ended, so the error message starts on a line of its own.
  if (!finished && terminal) {
    std::fputc('\n', out);
    std::fflush(out);
  }
}

void Progress::advance(uint64_t n) {
  done = n < total - done ? done + n : total;
  auto now = std::chrono::steady_clock::now();
  if (terminal) {
    if (now - lastDraw >= std::chrono::milliseconds(100)) {
      lastDraw = now;
      draw(false);
    }
    return;
  }
  int tenth = total ? int(10 * done / total) : 10;
  if (tenth > lastTenth && tenth < 10) {
    lastTenth = tenth;
    draw(false);
  }
}

void Progress::finish() {
  if (finished)
    return;
  done = total;
  draw(true);
  finished = true;
}

void Progress::draw(bool last) {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  double fraction = total ? double(done) / double(total) : 1.0;
  double rate = seconds > 0 ? double(done) / 1e6 / seconds : 0.0;
  if (last) {
    std::fprintf(out, "%s%s: %.1f MB in %.1f s (%.1f MB/s)\n",
                 terminal ? "\r\033[K" : "", label.c_str(), double(total) / 1e6,
                 seconds, rate);
    std::fflush(out);
    return;
  }
  if (!terminal) {
    std::fprintf(out, "%s: %3.0f%% (%.1f of %.1f MB, %.1f MB/s)\n",
                 label.c_str(), 100 * fraction, double(done) / 1e6,
                 double(total) / 1e6, rate);
    std::fflush(out);
    return;
  }
  constexpr int kWidth = 30;
  int filled = int(fraction * kWidth);
  std::string bar(size_t(filled), '#');
  bar.append(size_t(kWidth - filled), '.');
  std::string eta;
  if (done > 0 && done < total && seconds > 0.5) {
    double left = seconds * double(total - done) / double(done);
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), ", %.0f s left", left);
    eta = buffer;
  }
  std::fprintf(out, "\r\033[K%s [%s] %3.0f%% %.1f/%.1f MB, %.1f MB/s%s",
               label.c_str(), bar.c_str(), 100 * fraction, double(done) / 1e6,
               double(total) / 1e6, rate, eta.c_str());
  std::fflush(out);
}
