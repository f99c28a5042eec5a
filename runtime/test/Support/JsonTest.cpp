//===- JsonTest.cpp - Tests of the JSON reader and writer -----------------===//
//
// The strict grammar (what RFC 8259 allows and nothing more), exact
// integers, UTF-8 handling, error positions and the writer's round trip.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Json.h"

#include "TestUtil.h"

#include <cmath>

using namespace mixrt;
using namespace mixrt::json;
using mixrt::test::failsWith;

namespace {

TEST(JsonTest, ParsesEveryKindKeepingObjectOrder) {
  Value v = parse(R"( {"z": null, "b": true, "n": -1.5e2, "s": "x",
                       "a": [1, [], {}], "o": {"k": false}} )");
  ASSERT_TRUE(v.isObject());
  const Value::Object &members = v.getObject();
  ASSERT_EQ(members.size(), 6u);
  EXPECT_EQ(members[0].key, "z");
  EXPECT_EQ(members[5].key, "o");
  EXPECT_TRUE(v.find("z")->isNull());
  EXPECT_TRUE(v.find("b")->getBool());
  EXPECT_EQ(v.find("n")->getNumber(), -150.0);
  EXPECT_FALSE(v.find("n")->isInteger());
  EXPECT_EQ(v.find("s")->getString(), "x");
  EXPECT_EQ(v.find("a")->getArray().size(), 3u);
  EXPECT_FALSE(v.find("o")->find("k")->getBool());
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(JsonTest, KeepsIntegersExact) {
  // 2^53 + 1 is not a double; it must survive as an integer.
  Value v = parse("[9007199254740993, -9223372036854775808, 0, -0]");
  EXPECT_EQ(v.getArray()[0].getInteger(), 9007199254740993);
  EXPECT_EQ(v.getArray()[1].getInteger(), INT64_MIN);
  EXPECT_EQ(v.getArray()[2].getInteger(), 0);
  EXPECT_TRUE(v.getArray()[3].isInteger());
  // Too large for int64: a number, but not an integer.
  Value big = parse("18446744073709551616");
  EXPECT_TRUE(big.isNumber());
  EXPECT_FALSE(big.isInteger());
  EXPECT_TRUE(failsWith([&] { big.getInteger(); }, {"expected an integer"}));
  EXPECT_FALSE(parse("1.0").isInteger());
  EXPECT_FALSE(parse("1e2").isInteger());
}

TEST(JsonTest, DecodesEscapesAndUtf8) {
  Value v = parse(R"("a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00é")");
  EXPECT_EQ(v.getString(), "a\"b\\c/d\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80"
                           "\xC3\xA9");
}

TEST(JsonTest, RecordsLines) {
  Value v = parse("{\n\"a\":\n  [1,\n 2]}");
  EXPECT_EQ(v.getLine(), 1);
  EXPECT_EQ(v.find("a")->getLine(), 3);
  EXPECT_EQ(v.find("a")->getArray()[1].getLine(), 4);
}

TEST(JsonTest, ReportsLineAndColumn) {
  try {
    parse("{\n  \"a\": 1,\n  \"b\" 2\n}");
    FAIL() << "no error";
  } catch (const ParseError &e) {
    EXPECT_EQ(e.line, 3);
    EXPECT_EQ(e.column, 7);
    EXPECT_STREQ(e.what(),
                 "line 3, column 7: expected ':' after an object key");
  }
}

TEST(JsonTest, RejectsWhatRfc8259Rejects) {
  const char *bad[] = {
      "",
      "   ",
      "[1,]",
      "{\"a\":1,}",
      "// c\n1",
      "'a'",
      "01",
      "-",
      "1.",
      ".5",
      "1e",
      "+1",
      "NaN",
      "Infinity",
      "tru",
      "nul",
      "\"abc",
      "\"a\x01\"",
      "\"\\x\"",
      "\"\\u12\"",
      "[1 2]",
      "{\"a\" 1}",
      "{1: 2}",
      "1 2",
      "\"\\ud800\"",
      "\"\\udc00\"",
      "\"\xC3\"",
      "\"\xC0\xAF\"",
      "\"\xED\xA0\x80\"",
      "\"\xF5\x80\x80\x80\"",
      "1e400",
      "[",
  };
  for (const char *text : bad)
    EXPECT_THROW(parse(text), ParseError) << "accepted: " << text;
}

TEST(JsonTest, RejectsDuplicateKeysUnlessAllowed) {
  EXPECT_TRUE(failsWith([] { parse(R"({"a": 1, "a": 2})"); },
                        {"line 1, column 10", "duplicate key \"a\""}));
  ParseOptions options;
  options.allowDuplicateKeys = true;
  Value v = parse(R"({"a": 1, "a": 2})", options);
  EXPECT_EQ(v.getObject().size(), 2u);
}

TEST(JsonTest, LimitsNesting) {
  std::string deep(200, '[');
  deep += std::string(200, ']');
  EXPECT_TRUE(failsWith([&] { parse(deep); }, {"nesting deeper than 128"}));
  std::string fine(100, '[');
  fine += std::string(100, ']');
  EXPECT_NO_THROW(parse(fine));
}

TEST(JsonTest, TypedAccessorsNameTheKinds) {
  Value v = parse("[1]");
  EXPECT_TRUE(
      failsWith([&] { v.getObject(); }, {"expected an object, got an array"}));
  EXPECT_TRUE(failsWith([&] { v.getArray()[0].getString(); },
                        {"expected a string, got a number"}));
}

TEST(JsonTest, WritesCompactJsonThatParsesBack) {
  Value::Object object;
  object.push_back({"s", Value("q\"\\\n\x01é")});
  object.push_back({"i", Value(int64_t{-42})});
  object.push_back({"d", Value(0.1)});
  object.push_back({"a", Value(Value::Array{Value(true), Value()})});
  Value v{std::move(object)};
  std::string text = write(v);
  EXPECT_EQ(text, "{\"s\":\"q\\\"\\\\\\n\\u0001\xC3\xA9\",\"i\":-42,\"d\":0.1,"
                  "\"a\":[true,null]}");
  Value back = parse(text);
  EXPECT_EQ(back.find("s")->getString(), "q\"\\\n\x01\xC3\xA9");
  EXPECT_EQ(back.find("i")->getInteger(), -42);
  EXPECT_EQ(back.find("d")->getNumber(), 0.1);
}

TEST(JsonTest, WritesDoublesThatRoundTripExactly) {
  for (double d : {1.0 / 3.0, 1e-300, 6.02214076e23, -0.015625}) {
    Value back = parse(write(Value(d)));
    EXPECT_EQ(back.getNumber(), d);
  }
}

TEST(JsonTest, RefusesToWriteNonFiniteNumbers) {
  EXPECT_TRUE(failsWith([] { write(Value(std::nan(""))); }, {"non-finite"}));
  EXPECT_TRUE(failsWith([] { write(Value(HUGE_VAL)); }, {"non-finite"}));
}

TEST(JsonTest, RejectsUnsignedIntegersPastInt64) {
  EXPECT_TRUE(failsWith([] { Value v(UINT64_MAX); }, {"does not fit"}));
}

} // namespace
