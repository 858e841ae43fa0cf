// The JSON reader on large objects: every duplicate member is found wherever it sits, and
// distinct members are never taken for duplicates (the check keeps a set of keys once an
// object grows past a few members, so large objects read in linear time).
#include <gtest/gtest.h>

#include <string>

#include "runtime/common/error.h"
#include "runtime/common/json_value.h"

using namespace loom;

namespace {

// {"k0": 0, "k1": 1, ...} with `n` members, one per line, then `tail` before the brace.
std::string object_text(int n, const std::string& tail = "") {
  std::string s = "{";
  for (int i = 0; i < n; ++i)
    s += (i ? ",\n\"k" : "\n\"k") + std::to_string(i) + "\": " + std::to_string(i);
  return s + tail + "}";
}

std::string error_of(const std::string& text) {
  try {
    parse_json(text, "metadata.json");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace

TEST(JsonValue, ALargeObjectKeepsEveryMemberInOrder) {
  JsonValue v = parse_json(object_text(100000), "metadata.json");
  ASSERT_EQ(v.members.size(), 100000u);
  EXPECT_EQ(v.members[0].first, "k0");
  EXPECT_EQ(v.members[99999].first, "k99999");
  EXPECT_EQ(v.members[99999].second.text, "99999");
}

TEST(JsonValue, ADuplicateAtTheEndOfALargeObjectIsFound) {
  // Line 100002: the duplicate of the first member, after 100000 distinct ones.
  std::string e = error_of(object_text(100000, ",\n\"k0\": 7"));
  EXPECT_NE(e.find("metadata.json: line 100002, column 5: malformed JSON: duplicate member \"k0\""),
            std::string::npos)
      << e;
  EXPECT_NE(error_of(object_text(100000, ",\n\"k99999\": 7")).find("duplicate member \"k99999\""),
            std::string::npos);
  EXPECT_NE(error_of(object_text(100000, ",\n\"k15\": 7")).find("duplicate member \"k15\""),
            std::string::npos);
}

TEST(JsonValue, DuplicatesAreFoundInSmallAndMidSizedObjects) {
  for (int n : {1, 2, 15, 16, 17, 40}) {
    for (int dup : {0, n - 1}) {
      std::string e = error_of(object_text(n, ",\n\"k" + std::to_string(dup) + "\": 1"));
      EXPECT_NE(e.find("duplicate member \"k" + std::to_string(dup) + "\""), std::string::npos)
          << n << " members: " << e;
    }
    EXPECT_NO_THROW(parse_json(object_text(n, ",\n\"other\": 1"), "metadata.json")) << n;
  }
}

TEST(JsonValue, EachObjectHasItsOwnMembers) {
  // The same names in nested and sibling objects are not duplicates.
  std::string inner = object_text(40);
  std::string text =
      "{\"a\": " + inner + ", \"b\": [" + inner + ", " + inner + "], \"k0\": " + inner + "}";
  JsonValue v = parse_json(text, "metadata.json");
  ASSERT_EQ(v.members.size(), 3u);
  EXPECT_EQ(v.members[2].second.members.size(), 40u);
}
