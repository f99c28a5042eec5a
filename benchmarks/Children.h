//===- Children.h - The child processes of mix-bench ------------*- C++ -*-===//
//
// Each side of a row runs in a process of its own and prints its results
// as RESULT lines on stdout for the driver to read.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_CHILDREN_H
#define MIXBENCH_CHILDREN_H

#include "Options.h"

#include <cmath>
#include <vector>

namespace mixbench {

/// Runs the child \p o.child names; returns the process's exit status
/// (2 for an unknown child, 1 with the message of an exception).
int runChildProcess(const Options &o);

struct StepStats {
  std::vector<double> times;
  double loss0 = NAN, ce0 = NAN, aux0 = NAN, lossLast = NAN;
  long rss0 = 0;
};

/// Prints \p s as the RESULT line of \p side.
void printResult(const char *side, const StepStats &s);

/// The compiled side: the package's @grad then @adamw.
int childCompiled(const Options &o);

/// Names the BLAS libtorch's fp32 products reach, on stderr; returns false
/// if it is not OpenBLAS.
bool reportBlas();

/// Sets OpenBLAS's thread count (libtorch's fp32 products), if libtorch's
/// BLAS is OpenBLAS.
void setBlasThreads(int threads);

/// The libtorch side, fp32 or under bf16 autocast (--bf16-autocast).
int childTorch(const Options &o);

/// The mixture layer alone in libtorch, and OpenBLAS GEMMs.
int childLayer(const Options &o);

} // namespace mixbench

#endif // MIXBENCH_CHILDREN_H
