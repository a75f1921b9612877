//===- JsonTest.cpp - The runtime's JSON reader ----------------------------===//

#include "Json.h"

#include "gtest/gtest.h"

using namespace braidrt::json;

namespace {

std::optional<Value> parseOk(const std::string &text) {
  std::string error;
  std::optional<Value> value = parse(text, error);
  EXPECT_TRUE(value) << text << ": " << error;
  return value;
}

std::string parseError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(parse(text, error)) << text;
  return error;
}

TEST(RuntimeJson, ReadsValuesOfEveryKind) {
  std::optional<Value> value = parseOk(
      R"( {"a": [1, -2, 3.5, 1e3], "s": "q\"\\\/\n\u00e9\ud83d\ude00",
          "t": true, "f": false, "n": null, "o": {}} )");
  ASSERT_TRUE(value);
  const std::vector<Value> *a = value->getArray("a");
  ASSERT_TRUE(a && a->size() == 4);
  EXPECT_EQ((*a)[0].integer, 1);
  EXPECT_EQ((*a)[1].integer, -2);
  EXPECT_FALSE((*a)[2].integer);
  EXPECT_DOUBLE_EQ((*a)[2].number, 3.5);
  EXPECT_FALSE((*a)[3].integer); // an exponent makes it a float
  EXPECT_DOUBLE_EQ((*a)[3].number, 1000);
  EXPECT_EQ(value->getString("s"), "q\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(value->getBool("t"), true);
  EXPECT_EQ(value->getBool("f"), false);
  EXPECT_EQ(value->get("n")->kind, Value::Kind::Null);
  EXPECT_EQ(value->get("o")->kind, Value::Kind::Object);
  EXPECT_EQ(value->get("missing"), nullptr);
  // Wrong kinds read as absent.
  EXPECT_FALSE(value->getInteger("s"));
  EXPECT_FALSE(value->getString("t"));
}

TEST(RuntimeJson, IntegersOutsideInt64AreFloatsOnly) {
  std::optional<Value> value = parseOk("[9223372036854775807, "
                                       "9223372036854775808]");
  ASSERT_TRUE(value);
  EXPECT_EQ(value->array[0].integer, INT64_MAX);
  EXPECT_FALSE(value->array[1].integer);
}

TEST(RuntimeJson, BoundsNesting) {
  std::string deep(kMaxDepth + 1, '[');
  deep += std::string(kMaxDepth + 1, ']');
  EXPECT_TRUE(parseOk(deep.substr(1, deep.size() - 2)));
  EXPECT_NE(parseError(deep).find("nested deeper than 64 levels"),
            std::string::npos);
  // A million brackets fail fast instead of overflowing the stack.
  EXPECT_NE(parseError(std::string(1000000, '[')).find("nested deeper"),
            std::string::npos);
}

TEST(RuntimeJson, ReportsMalformedDocumentsWithTheirOffset) {
  EXPECT_EQ(parseError("{\"a\": 1,}"), "at byte 8: expected a member name");
  EXPECT_EQ(parseError("[1 2]"), "at byte 3: expected ',' or ']' in an array");
  EXPECT_EQ(parseError("\"abc"), "at byte 4: unterminated string");
  EXPECT_EQ(parseError("{} x"), "at byte 3: trailing characters after the "
                                "document");
  EXPECT_EQ(parseError(""), "at byte 0: unexpected end of the document");
  EXPECT_NE(parseError("\"\\ud800\"").find("unpaired surrogate"),
            std::string::npos);
  EXPECT_NE(parseError("\"a\x01\"").find("control character"),
            std::string::npos);
  EXPECT_NE(parseError("-").find("expected a value"), std::string::npos);
  EXPECT_NE(parseError("1.").find("digits after '.'"), std::string::npos);
  EXPECT_NE(parseError("tru").find("expected a value"), std::string::npos);
}

} // namespace
