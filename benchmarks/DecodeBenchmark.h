//===- DecodeBenchmark.h - Sampling: the decode step against libtorch -*- C++
//-*-===//
//
// mix-bench --decode: tokens per second of autoregressive decoding through
// a package's decode step (its key-value cache), through its whole forward
// a token (what mix-run generate did before the decode step), and through
// the same model in libtorch eager with a key-value cache, as a user
// would write it.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_DECODEBENCHMARK_H
#define MIXBENCH_DECODEBENCHMARK_H

#include "Options.h"

#include <string>

namespace mixbench {

/// Runs the decode benchmark and returns its table (markdown); false in
/// \p ok if a row's logits disagreed with libtorch's.
std::string benchmarkDecode(const Options &o, bool &ok);

} // namespace mixbench

#endif // MIXBENCH_DECODEBENCHMARK_H
