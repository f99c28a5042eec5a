//===- Json.h - A small strict JSON reader and writer -----------*- C++ -*-===//
//
// RFC 8259 JSON for safetensors headers and package manifests: strict grammar,
// valid UTF-8, objects kept in file order, integers kept exact, and every
// value remembers the line it started on for error messages.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_JSON_H
#define MIXRT_JSON_H

#include "mixrt/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace mixrt {
namespace json {

struct Member;

/// One JSON value. Numbers written without a fraction or exponent that fit
/// in int64 are also kept as exact integers.
class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  using Array = std::vector<Value>;
  using Object = std::vector<Member>;

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : kind(Kind::Bool), boolValue(b) {}
  Value(double d) : kind(Kind::Number), number(d) {}
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                             int> = 0>
  Value(T i) : kind(Kind::Number), exact(true) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t))
      if (i > static_cast<T>(INT64_MAX))
        fail("JSON integer ", i, " does not fit in int64");
    integer = static_cast<int64_t>(i);
    number = static_cast<double>(i);
  }
  Value(std::string s) : kind(Kind::String), string(std::move(s)) {}
  Value(const char *s) : Value(std::string(s)) {}
  Value(Array a);
  Value(Object o);

  Kind getKind() const { return kind; }
  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }
  /// A number written as an integer that fits in int64.
  bool isInteger() const { return kind == Kind::Number && exact; }

  bool getBool() const;
  double getNumber() const;
  int64_t getInteger() const;
  const std::string &getString() const;
  const Array &getArray() const;
  const Object &getObject() const;
  Array &getArray();
  Object &getObject();

  /// The member of an object named \p key, or null when there is none.
  const Value *find(std::string_view key) const;

  /// The 1-based line the value started on (0 when built in memory).
  int getLine() const { return line; }
  void setLine(int l) { line = l; }

  /// "null", "a boolean", "a number", "a string", "an array", "an object".
  static const char *describe(Kind kind);

private:
  Kind kind = Kind::Null;
  bool boolValue = false;
  bool exact = false;
  int64_t integer = 0;
  double number = 0;
  std::string string;
  Array array;
  Object object;
  int line = 0;
};

struct Member {
  std::string key;
  Value value;
};

/// A syntax error; what() is "line L, column C: reason".
class ParseError : public Error {
public:
  ParseError(int line, int column, const std::string &reason);
  int line, column;
  std::string reason;
};

struct ParseOptions {
  /// Keep duplicate object keys instead of rejecting them (safetensors
  /// headers reject duplicates themselves, naming the tensor).
  bool allowDuplicateKeys = false;
  /// Nesting deeper than this is rejected rather than risking the stack.
  int maxDepth = 128;
};

/// Parses one JSON document (surrounding whitespace allowed); throws
/// ParseError.
Value parse(std::string_view text, const ParseOptions &options = {});

/// Writes \p value as compact JSON; throws Error on a non-finite number.
std::string write(const Value &value);

} // namespace json
} // namespace mixrt

#endif // MIXRT_JSON_H
