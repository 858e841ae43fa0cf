// Documents never hold a bare `inf` or `nan` (issue 17): a literal made in code (the editor's
// spreadsheet, the builder API) that is infinite or NaN is saved as text every JSON reader
// takes, and loading it back refuses it naming the place instead of failing to parse the file.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "compiler/graph/document_json.h"
#include "compiler/graph/literal.h"
#include "runtime/common/error.h"

namespace loom::graph {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(LiteralSpecialFloats, NumberTextNeverSpellsABareInfOrNan) {
  EXPECT_EQ(number_text(Literal::real(kInf)), "1e999");
  EXPECT_EQ(number_text(Literal::real(-kInf)), "-1e999");
  EXPECT_EQ(number_text(Literal::real(std::nan(""))), "null");
  EXPECT_EQ(number_text(Literal::real(-0.0)), "-0.0");
  EXPECT_EQ(number_text(Literal::real(0.1)), "0.1");
}

const char* kDoc = R"({"format": "loom-graph", "version": 2, "name": "d",
 "kernels": [{"name": "k", "params": [{"name": "c", "kind": "value", "type": "f64"}],
   "nodes": []}],
 "pipelines": [{"name": "step", "launches": [{"kernel": "k", "args": {"c": 1.5}}]}]})";

TEST(LiteralSpecialFloats, AnInfiniteLiteralSavesAsANumberThatLoadsBackAsInfinity) {
  Document doc = load_document(kDoc, "d.loom.json");
  doc.pipelines.at(0).launches.at(0).args.at(0).second = Literal::real(-kInf);
  std::string text = save_document(doc);
  EXPECT_NE(text.find(R"("c": -1e999)"), std::string::npos) << text;
  Document back = load_document(text, "d.loom.json");
  const Literal& c = back.pipelines.at(0).launches.at(0).args.at(0).second;
  EXPECT_EQ(c.kind, Literal::Kind::Float);
  EXPECT_EQ(c.f, -kInf);
  EXPECT_EQ(save_document(back), text);
}

TEST(LiteralSpecialFloats, ANanLiteralSavesAsNullWhichLoadingRefusesByLine) {
  Document doc = load_document(kDoc, "d.loom.json");
  doc.pipelines.at(0).launches.at(0).args.at(0).second = Literal::real(std::nan(""));
  std::string text = save_document(doc);
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  try {
    load_document(text, "d.loom.json");
    FAIL() << "loaded";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("d.loom.json"), std::string::npos) << m;
    EXPECT_NE(m.find("line "), std::string::npos) << m;
    EXPECT_NE(m.find("null is not a value"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace loom::graph
