//===- Environment.h - Switches read from the environment -------*- C++ -*-===//
//
// The MIXRT_* variables that turn a behaviour on (1) or off (0), read one
// way, with one message for a value that is neither.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_ENVIRONMENT_H
#define MIXRT_ENVIRONMENT_H

#include <optional>

namespace mixrt {

/// The switch \p name: nothing when it is unset or empty, true for "1",
/// false for "0". Anything else is an Error, "NAME is 'VALUE', expected 1
/// (WHENON) or 0 (WHENOFF)", a meaning left out where it is empty.
std::optional<bool> readSwitch(const char *name, const char *whenOn,
                               const char *whenOff);

} // namespace mixrt

#endif // MIXRT_ENVIRONMENT_H
