//===- Error.h - The runtime's error type -----------------------*- C++ -*-===//
//
// Every runtime failure is a mixrt::Error carrying one line that names the
// file, the tensor or key, and what was expected; tools print it and exit
// non-zero.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_ERROR_H
#define MIXRT_ERROR_H

#include <sstream>
#include <stdexcept>
#include <string>

namespace mixrt {

/// A user-facing runtime error; what() is a complete one-line message.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Concatenates the arguments with operator<< into one string.
template <typename... Args> std::string concat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

/// Throws an Error whose message is the concatenation of the arguments.
template <typename... Args> [[noreturn]] void fail(const Args &...args) {
  throw Error(concat(args...));
}

/// Quotes a name for a message: 'name'.
inline std::string quote(const std::string &name) { return "'" + name + "'"; }

} // namespace mixrt

#endif // MIXRT_ERROR_H
