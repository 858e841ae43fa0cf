// The spreadsheet's pages against the program's arrays: vector fields by component, matrices
// row by row, ndarrays, the last (short) page, page numbers out of range clamped, element
// indices printed and parsed.
#include <gtest/gtest.h>

#include "compiler/graph/document_json.h"
#include "editor/app/spreadsheet_panel.h"
#include "runtime/common/error.h"

namespace loom::editor {
namespace {

std::string sample(const std::string& name) {
  return std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + name + ".loom.json";
}

ProgramOptions quiet() {
  ProgramOptions o;
  o.backend = Backend::Cpu;
  o.offline_cache = false;
  o.warn = [](const std::string&) {};
  return o;
}

TEST(Spreadsheet, AVectorFieldIsListedByComponent) {
  Program p(quiet());
  p.load_file(sample("mpm88"));
  p.run_pipeline("init");
  ArrayView x = p.array("x");
  SpreadsheetPage page = read_page(p, "x", 3);
  EXPECT_EQ(page.resource, "x");
  EXPECT_EQ(page.columns, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(page.elements, 2048u);
  EXPECT_EQ(page.pages, 8);  // 2048 / 256
  EXPECT_EQ(page.page, 3);
  EXPECT_EQ(page.first, 768u);
  ASSERT_EQ(page.rows, 256u);
  EXPECT_FALSE(page.integer);
  for (size_t r : {size_t{0}, size_t{100}, size_t{255}})
    for (int c = 0; c < 2; ++c)
      EXPECT_EQ(page.at(r, static_cast<size_t>(c)), x.component(768 + r, c)) << r;
}

TEST(Spreadsheet, MatricesAreListedRowByRow) {
  Program p(quiet());
  p.load_file(sample("mpm88"));
  ArrayView c = p.array("C");
  for (size_t i = 0; i < c.elements() * 4; ++i)
    reinterpret_cast<float*>(c.data)[i] = static_cast<float>(i);
  SpreadsheetPage page = read_page(p, "C", 0);
  EXPECT_EQ(page.columns, (std::vector<std::string>{"m00", "m01", "m10", "m11"}));
  // Element 5 is stored column-major: m00 = 20, m10 = 21, m01 = 22, m11 = 23.
  EXPECT_EQ(page.at(5, 0), 20.0);
  EXPECT_EQ(page.at(5, 1), 22.0);
  EXPECT_EQ(page.at(5, 2), 21.0);
  EXPECT_EQ(page.at(5, 3), 23.0);
}

TEST(Spreadsheet, AnNdarrayPagesToItsLastShortPageAndBadPagesAreClamped) {
  graph::Document doc = graph::load_document(R"({"format": "loom-graph", "version": 2,
    "ndarrays": [{"name": "counts", "type": "i32", "shape": [20, 30]}]})",
                                             "sheet.loom.json");
  Program p(quiet());
  p.load(doc);
  ArrayView a = p.array("counts");
  for (int i = 0; i < 600; ++i) reinterpret_cast<int32_t*>(a.data)[i] = 7 * i - 1000;
  EXPECT_EQ(spreadsheet_resources(p.document()), (std::vector<std::string>{"counts"}));

  SpreadsheetPage last = read_page(p, "counts", 2);  // 600 = 256 + 256 + 88
  EXPECT_EQ(last.pages, 3);
  EXPECT_EQ(last.page, 2);
  EXPECT_EQ(last.first, 512u);
  ASSERT_EQ(last.rows, 88u);
  EXPECT_EQ(last.columns, (std::vector<std::string>{"value"}));
  EXPECT_TRUE(last.integer);
  EXPECT_EQ(last.shape, (std::vector<int64_t>{20, 30}));
  for (size_t r = 0; r < last.rows; ++r)
    EXPECT_EQ(last.at(r, 0), 7.0 * static_cast<double>(512 + r) - 1000) << r;

  SpreadsheetPage past = read_page(p, "counts", 99);
  EXPECT_EQ(past.page, 2);
  EXPECT_EQ(past.first, 512u);
  EXPECT_EQ(past.rows, 88u);
  SpreadsheetPage before = read_page(p, "counts", -5);
  EXPECT_EQ(before.page, 0);
  EXPECT_EQ(before.first, 0u);
  EXPECT_EQ(before.rows, 256u);
  EXPECT_EQ(before.at(0, 0), -1000.0);

  SpreadsheetPage small = read_page(p, "counts", 1, 100);  // another page size
  EXPECT_EQ(small.pages, 6);
  EXPECT_EQ(small.first, 100u);
  EXPECT_EQ(small.at(0, 0), -300.0);
}

// A 0-d field is one row: its value, by component, with "()" for an index.
TEST(Spreadsheet, AZeroDimensionalFieldIsOneRowWithoutAnIndex) {
  graph::Document doc = graph::load_document(R"json({"format": "loom-graph", "version": 2,
    "fields": [{"name": "wind", "type": "f32x2", "shape": []}],
    "kernels": [{"name": "k", "nodes": [
      {"id": 1, "type": "expr", "params": {"expr": "vec2(1.5, -4.0)"}},
      {"id": 2, "type": "store", "inputs": {"value": "1"}, "params": {"field": "wind"}}]}]})json",
                                             "zero.loom.json");
  Program p(quiet());
  p.load(doc);
  p.launch("k");
  SpreadsheetPage page = read_page(p, "wind", 0);
  EXPECT_TRUE(page.shape.empty());
  EXPECT_EQ(page.elements, 1u);
  EXPECT_EQ(page.pages, 1);
  ASSERT_EQ(page.rows, 1u);
  EXPECT_EQ(page.columns, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(page.at(0, 0), 1.5);
  EXPECT_EQ(page.at(0, 1), -4.0);
  EXPECT_EQ(element_index_text(page.shape, 0), "()");
  EXPECT_EQ(parse_element_index(page.shape, "0"), size_t{0});
  EXPECT_EQ(parse_element_index(page.shape, "1"), std::nullopt);
}

TEST(Spreadsheet, AnUnknownResourceIsAnErrorNamingIt) {
  Program p(quiet());
  p.load_file(sample("heat"));
  try {
    read_page(p, "nonesuch", 0);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nonesuch'"), std::string::npos) << e.what();
  }
}

TEST(Spreadsheet, ElementIndicesArePrintedAndParsedInCOrder) {
  std::vector<int64_t> shape = {20, 30};
  EXPECT_EQ(element_index_text(shape, 0), "0, 0");
  EXPECT_EQ(element_index_text(shape, 31), "1, 1");
  EXPECT_EQ(element_index_text(shape, 599), "19, 29");
  EXPECT_EQ(element_index_text({2048}, 777), "777");
  EXPECT_EQ(parse_element_index(shape, "31"), size_t{31});
  EXPECT_EQ(parse_element_index(shape, "1, 1"), size_t{31});
  EXPECT_EQ(parse_element_index(shape, " [19,29] "), size_t{599});
  EXPECT_EQ(parse_element_index(shape, "600"), std::nullopt);    // past the end
  EXPECT_EQ(parse_element_index(shape, "20, 0"), std::nullopt);  // outside the first extent
  EXPECT_EQ(parse_element_index(shape, "1, 2, 3"), std::nullopt);
  EXPECT_EQ(parse_element_index(shape, "-1"), std::nullopt);
  EXPECT_EQ(parse_element_index(shape, "x"), std::nullopt);
  EXPECT_EQ(parse_element_index(shape, ""), std::nullopt);
}

}  // namespace
}  // namespace loom::editor
