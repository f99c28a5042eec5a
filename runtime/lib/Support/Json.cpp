//===- Json.cpp - A small strict JSON reader and writer -------------------===//
//
// A recursive-descent parser of RFC 8259 JSON (no extensions: no comments,
// trailing commas, NaN or single quotes) and a compact writer.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Json.h"

#include <charconv>
#include <cmath>
#include <unordered_set>

using namespace mixrt;
using namespace mixrt::json;

//===----------------------------------------------------------------------===//
// Value
//===----------------------------------------------------------------------===//

Value::Value(Array a) : kind(Kind::Array), array(std::move(a)) {}
Value::Value(Object o) : kind(Kind::Object), object(std::move(o)) {}

const char *Value::describe(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

static void expectKind(Value::Kind actual, Value::Kind expected) {
  if (actual != expected)
    fail("expected ", Value::describe(expected), ", got ",
         Value::describe(actual));
}

bool Value::getBool() const {
  expectKind(kind, Kind::Bool);
  return boolValue;
}

double Value::getNumber() const {
  expectKind(kind, Kind::Number);
  return number;
}

int64_t Value::getInteger() const {
  if (!isInteger())
    fail("expected an integer, got ",
         kind == Kind::Number ? "a non-integral number" : describe(kind));
  return integer;
}

const std::string &Value::getString() const {
  expectKind(kind, Kind::String);
  return string;
}

const Value::Array &Value::getArray() const {
  expectKind(kind, Kind::Array);
  return array;
}

const Value::Object &Value::getObject() const {
  expectKind(kind, Kind::Object);
  return object;
}

Value::Array &Value::getArray() {
  expectKind(kind, Kind::Array);
  return array;
}

Value::Object &Value::getObject() {
  expectKind(kind, Kind::Object);
  return object;
}

const Value *Value::find(std::string_view key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const Member &member : object)
    if (member.key == key)
      return &member.value;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

ParseError::ParseError(int line, int column, const std::string &reason)
    : Error(concat("line ", line, ", column ", column, ": ", reason)),
      line(line), column(column), reason(reason) {}

namespace {
class Parser {
public:
  Parser(std::string_view text, const ParseOptions &options)
      : text(text), options(options) {}

  Value parseDocument() {
    skipWhitespace();
    Value value = parseValue(0);
    skipWhitespace();
    if (pos != text.size())
      error("unexpected text after the JSON value");
    return value;
  }

private:
  /// Newlines only occur in whitespace (strings reject raw control
  /// characters), so skipWhitespace keeps line and lineStart current.
  [[noreturn]] void error(const std::string &reason) {
    throw ParseError(line, static_cast<int>(pos - lineStart) + 1, reason);
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  void skipWhitespace() {
    for (; !atEnd(); ++pos) {
      char c = text[pos];
      if (c == '\n') {
        ++line;
        lineStart = pos + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
    }
  }

  void expect(char c, const char *what) {
    if (peek() != c)
      error(concat("expected ", what));
    ++pos;
  }

  void expectWord(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      error("invalid literal (expected a JSON value)");
    pos += word.size();
  }

  Value parseValue(int depth) {
    if (depth > options.maxDepth)
      error(concat("nesting deeper than ", options.maxDepth, " levels"));
    int startLine = line;
    Value value;
    if (atEnd())
      error("unexpected end of input (expected a JSON value)");
    switch (peek()) {
    case '{':
      value = parseObject(depth);
      break;
    case '[':
      value = parseArray(depth);
      break;
    case '"':
      value = Value(parseString());
      break;
    case 't':
      expectWord("true");
      value = Value(true);
      break;
    case 'f':
      expectWord("false");
      value = Value(false);
      break;
    case 'n':
      expectWord("null");
      break;
    default:
      if (peek() == '-' || (peek() >= '0' && peek() <= '9'))
        value = parseNumber();
      else
        error("unexpected character (expected a JSON value)");
    }
    value.setLine(startLine);
    return value;
  }

  Value parseObject(int depth) {
    ++pos; // '{'
    Value::Object members;
    std::unordered_set<std::string> keys;
    skipWhitespace();
    if (peek() == '}') {
      ++pos;
      return Value(std::move(members));
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"')
        error("expected a string key");
      size_t keyPos = pos;
      std::string key = parseString();
      if (!options.allowDuplicateKeys && !keys.insert(key).second) {
        pos = keyPos;
        error(concat("duplicate key \"", key, "\""));
      }
      skipWhitespace();
      expect(':', "':' after an object key");
      skipWhitespace();
      Value value = parseValue(depth + 1);
      members.push_back(Member{std::move(key), std::move(value)});
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      expect('}', "',' or '}' in an object");
      return Value(std::move(members));
    }
  }

  Value parseArray(int depth) {
    ++pos; // '['
    Value::Array elements;
    skipWhitespace();
    if (peek() == ']') {
      ++pos;
      return Value(std::move(elements));
    }
    while (true) {
      skipWhitespace();
      elements.push_back(parseValue(depth + 1));
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      expect(']', "',' or ']' in an array");
      return Value(std::move(elements));
    }
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  Value parseNumber() {
    size_t start = pos;
    bool integral = true;
    if (peek() == '-')
      ++pos;
    if (peek() == '0') {
      ++pos;
      if (isDigit(peek()))
        error("leading zeros are not allowed in numbers");
    } else if (isDigit(peek())) {
      while (isDigit(peek()))
        ++pos;
    } else {
      error("expected a digit");
    }
    if (peek() == '.') {
      integral = false;
      ++pos;
      if (!isDigit(peek()))
        error("expected a digit after '.'");
      while (isDigit(peek()))
        ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos;
      if (peek() == '+' || peek() == '-')
        ++pos;
      if (!isDigit(peek()))
        error("expected a digit in the exponent");
      while (isDigit(peek()))
        ++pos;
    }
    const char *first = text.data() + start;
    const char *last = text.data() + pos;
    if (integral) {
      int64_t i = 0;
      auto [ptr, ec] = std::from_chars(first, last, i);
      if (ec == std::errc() && ptr == last)
        return Value(i);
      // Too large for int64: keep it as a (non-integer) double below.
    }
    double d = 0;
    auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || ptr != last || !std::isfinite(d)) {
      pos = start;
      error("number out of range");
    }
    return Value(d);
  }

  unsigned parseHex4() {
    unsigned code = 0;
    for (int i = 0; i < 4; ++i, ++pos) {
      char c = peek();
      code <<= 4;
      if (atEnd())
        error("unexpected end of input in a \\u escape");
      if (c >= '0' && c <= '9')
        code |= c - '0';
      else if (c >= 'a' && c <= 'f')
        code |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        code |= c - 'A' + 10;
      else
        error("expected four hex digits after \\u");
    }
    return code;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  /// Copies one UTF-8 encoded character starting at pos, validating it.
  void copyUtf8(std::string &out) {
    auto byte = [&](size_t i) {
      return static_cast<unsigned char>(pos + i < text.size() ? text[pos + i]
                                                              : 0);
    };
    unsigned char lead = byte(0);
    int length;
    unsigned code;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      code = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      code = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      code = lead & 0x07;
    } else {
      error("invalid UTF-8 in a string");
    }
    for (int i = 1; i < length; ++i) {
      if ((byte(i) & 0xC0) != 0x80)
        error("invalid UTF-8 in a string");
      code = (code << 6) | (byte(i) & 0x3F);
    }
    // Reject overlong forms, surrogates and code points past U+10FFFF.
    if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000) ||
        (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF)
      error("invalid UTF-8 in a string");
    out.append(text.substr(pos, length));
    pos += length;
  }

  std::string parseString() {
    ++pos; // '"'
    std::string out;
    while (true) {
      if (atEnd())
        error("unterminated string");
      char c = text[pos];
      if (c == '"') {
        ++pos;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        error("control character in a string (escape it)");
      if (static_cast<unsigned char>(c) >= 0x80) {
        copyUtf8(out);
        continue;
      }
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      ++pos;
      if (atEnd())
        error("unterminated string");
      char escape = text[pos++];
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned code = parseHex4();
        if (code >= 0xDC00 && code <= 0xDFFF)
          error("unpaired low surrogate in a \\u escape");
        if (code >= 0xD800 && code <= 0xDBFF) {
          if (text.substr(pos, 2) != "\\u")
            error("unpaired high surrogate in a \\u escape");
          pos += 2;
          unsigned low = parseHex4();
          if (low < 0xDC00 || low > 0xDFFF)
            error("unpaired high surrogate in a \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, code);
        break;
      }
      default:
        --pos;
        error("invalid escape in a string");
      }
    }
  }

  std::string_view text;
  const ParseOptions &options;
  size_t pos = 0;
  int line = 1;
  size_t lineStart = 0;
};
} // namespace

Value json::parse(std::string_view text, const ParseOptions &options) {
  return Parser(text, options).parseDocument();
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

static void writeString(std::string &out, const std::string &s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        out += "\\u00";
        out += hex[(c >> 4) & 0xF];
        out += hex[c & 0xF];
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

static void writeValue(std::string &out, const Value &value) {
  switch (value.getKind()) {
  case Value::Kind::Null:
    out += "null";
    return;
  case Value::Kind::Bool:
    out += value.getBool() ? "true" : "false";
    return;
  case Value::Kind::Number: {
    char buffer[32];
    std::to_chars_result result;
    if (value.isInteger()) {
      result =
          std::to_chars(buffer, buffer + sizeof(buffer), value.getInteger());
    } else {
      double d = value.getNumber();
      if (!std::isfinite(d))
        fail("cannot write the non-finite number ", d, " as JSON");
      result = std::to_chars(buffer, buffer + sizeof(buffer), d);
    }
    out.append(buffer, result.ptr);
    return;
  }
  case Value::Kind::String:
    writeString(out, value.getString());
    return;
  case Value::Kind::Array: {
    out += '[';
    bool first = true;
    for (const Value &element : value.getArray()) {
      if (!first)
        out += ',';
      first = false;
      writeValue(out, element);
    }
    out += ']';
    return;
  }
  case Value::Kind::Object: {
    out += '{';
    bool first = true;
    for (const Member &member : value.getObject()) {
      if (!first)
        out += ',';
      first = false;
      writeString(out, member.key);
      out += ':';
      writeValue(out, member.value);
    }
    out += '}';
    return;
  }
  }
}

std::string json::write(const Value &value) {
  std::string out;
  writeValue(out, value);
  return out;
}
