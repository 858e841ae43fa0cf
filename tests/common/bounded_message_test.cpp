// Error messages quote user text (names, paths, formulas) within bounds: a 10 MB identifier
// must not make a 10 MB message (issue 17), while ordinary messages stay exactly as written.
#include <gtest/gtest.h>

#include <string>

#include "runtime/common/bounded_message.h"
#include "runtime/common/error.h"

namespace loom {
namespace {

const size_t kHuge = size_t{10} << 20;  // 10 MB

// Whether `s` is well-formed UTF-8 (a cut must never split a character).
bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

TEST(BoundedMessage, OrdinaryMessagesAreUnchanged) {
  std::string path(190, 'p');
  std::string m = "cannot open '" + path + "': no such file\n  line two\twith a tab";
  EXPECT_EQ(bounded_message(m), m);
  Error e(Place{"doc.loom.json", "k", 3, "a"}, "unknown field 'rho'");
  EXPECT_STREQ(e.what(), "doc.loom.json: kernel 'k': node 3: pin 'a': unknown field 'rho'");
  EXPECT_EQ(e.message(), "unknown field 'rho'");
}

TEST(BoundedMessage, AHugeNameIsQuotedByItsStartEndAndLength) {
  std::string name(kHuge, 'x');
  name.replace(0, 5, "start");
  name.replace(name.size() - 3, 3, "end");
  Error e(Place{"doc.loom.json", name, 7, name},
          "unknown field '" + name + "'; fields: '" + name + "'");
  std::string m = e.what();
  EXPECT_LT(m.size(), 1000u) << m.size();
  EXPECT_NE(m.find("kernel 'start"), std::string::npos) << m;
  EXPECT_NE(m.find("...(10485760 characters)...xxxxxxxxxxxxxend': node 7"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown field 'startxx"), std::string::npos) << m;
  EXPECT_NE(m.find("xxend'; fields"), std::string::npos) << m;  // the quote still closes
  EXPECT_LT(e.message().size(), 600u);
  // Bounding twice changes nothing more: re-placed errors stay the same.
  EXPECT_EQ(bounded_message(e.message()), e.message());
}

TEST(BoundedMessage, AHugeFormulaWithSpacesIsCutAsAWhole) {
  std::string formula;
  while (formula.size() < kHuge) formula += "a + ";
  Error e(Place{"doc.loom.json", "k", 2, "expr"}, "formula '" + formula + "': bad");
  std::string m = e.what();
  EXPECT_LE(m.size(), 8192u + 100u) << m.size();
  EXPECT_NE(m.find("message cut"), std::string::npos);
  EXPECT_EQ(m.rfind("doc.loom.json: kernel 'k': node 2: pin 'expr': formula 'a + a", 0), 0u);
}

TEST(BoundedMessage, CutsNeverSplitACharacter) {
  for (size_t pad = 0; pad < 4; ++pad) {
    std::string name = std::string(pad, 'a');
    while (name.size() < 100000) name += "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";  // é € 😀
    std::string m = Error(Place{}, "name '" + name + "'").what();
    EXPECT_LT(m.size(), 400u);
    EXPECT_TRUE(valid_utf8(m)) << pad;
    std::string spaced;
    while (spaced.size() < 100000) spaced += std::string(pad, 'b') + " \xe2\x82\xac\xc3\xa9";
    m = Error(Place{}, spaced).what();
    EXPECT_TRUE(valid_utf8(m)) << pad;
  }
}

}  // namespace
}  // namespace loom
