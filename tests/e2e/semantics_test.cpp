// What a kernel means, independent of how the compiler splits it: returns, return values,
// argument ranges and formats.
#include "tests/e2e/e2e_util.h"

#include <fstream>

using namespace loom;
using namespace loom::test;

TEST(Semantics, AReturnSkipsTheRestOfTheKernelAcrossTasks) {
  Program p(no_cache());
  p.load_file(doc_path("early_return.loom.json"));
  KernelResult r = p.launch("tasks", {{"c", 5}});
  EXPECT_EQ(r.ints.at(0), 5);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(element<int32_t>(p.array("g"), i), 0) << i;
  EXPECT_EQ(element<int32_t>(p.array("h"), 0), 0);
  // no return: everything after the if runs
  r = p.launch("tasks", {{"c", 0}});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(element<int32_t>(p.array("g"), i), 99) << i;
  EXPECT_EQ(element<int32_t>(p.array("h"), 0), 55);
}

TEST(Semantics, OffloadedAndSingleTaskKernelsAgree) {
  Program p(no_cache());
  p.load_file(doc_path("early_return.loom.json"));
  for (const char* kernel : {"tasks", "single"}) {
    p.launch(kernel, {{"c", 3}});
    EXPECT_EQ(element<int32_t>(p.array("h"), 0), 0) << kernel;
  }
}

TEST(Semantics, ALaunchReachingNoReturnGivesZeros) {
  Program p(no_cache());
  p.load_file(doc_path("early_return.loom.json"));
  for (const char* kernel : {"tasks", "single"}) {
    EXPECT_EQ(p.launch(kernel, {{"c", 7}}).ints.at(0), 7) << kernel;
    KernelResult r = p.launch(kernel, {{"c", -1}});  // not the previous launch's 7
    EXPECT_EQ(r.ints.at(0), 0) << kernel;
    EXPECT_EQ(r.values.at(0), 0.0) << kernel;
  }
}

TEST(Semantics, KernelsReturnStructsFlattenedByMember) {
  Program p(no_cache());
  p.load_file(doc_path("struct_returns.loom.json"));
  KernelResult r = p.launch("pair", {{"k", 7}});
  EXPECT_EQ(r.names, (std::vector<std::string>{"r0", "r1.a", "r1.b", "r1.inner.x"}));
  ASSERT_EQ(r.types.size(), 4u);
  EXPECT_EQ(r.types[1], (ValueType{Scalar::I32}));
  EXPECT_EQ(r.types[2], (ValueType{Scalar::F32, 2, 1}));
  EXPECT_EQ(r.types[3], (ValueType{Scalar::F64}));
  EXPECT_EQ(r.values, (std::vector<double>{0.5, 21, 1.5, 2.5, 7}));
  EXPECT_EQ(r.value("r1.a"), 21);
  EXPECT_EQ(r.value("r1.b", 1), 2.5);
  EXPECT_EQ(r.value("r1.inner.x"), 7);
  EXPECT_NE(error_of([&] { r.value("r1.c"); }).find("'r1.c'"), std::string::npos);
  // the early return fills every member too
  EXPECT_EQ(p.launch("pair", {{"k", 1000}}).values, (std::vector<double>{-1, -1, -1, -1, -1}));
}

namespace {

// Loads the document text (written to a temporary file) and returns the error, "" if none.
std::string load_error(const std::string& name, const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() / (name + ".loom.json")).string();
  std::ofstream(path) << text;
  Program p(no_cache());
  return error_of([&] { p.load_file(path); });
}

std::string struct_doc(const std::string& types, const std::string& returns, const std::string& inputs) {
  return R"({"format": "loom-graph", "version": 2, "argpack_types": [)" + types + R"(],
  "kernels": [{"name": "k", "returns": [)" + returns + R"(], "nodes": [
    {"id": 1, "type": "return", "inputs": {)" + inputs + R"(}}]}]})";
}

const char* kTypes = R"({"name": "S", "kind": "struct", "members": [{"name": "a", "type": "i32"}, {"name": "b", "type": "f32"}]},
  {"name": "P", "kind": "pack", "members": [{"name": "a", "type": "i32"}]},
  {"name": "Holder", "kind": "struct", "members": [{"name": "p", "pack": "P"}]})";

}  // namespace

TEST(Semantics, StructReturnErrorsNameKernelNodeAndPin) {
  EXPECT_EQ(load_error("struct_ok", struct_doc(kTypes, R"("S")", R"("r0.a": 1, "r0.b": 2.5)")), "");
  std::string e = load_error("struct_whole", struct_doc(kTypes, R"("S")", R"("r0": 1)"));
  EXPECT_NE(e.find("kernel 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("node 1"), std::string::npos) << e;
  EXPECT_NE(e.find("'r0' is a struct; give its members: r0.a, r0.b"), std::string::npos) << e;
  e = load_error("struct_missing", struct_doc(kTypes, R"("S")", R"("r0.a": 1)"));
  EXPECT_NE(e.find("'r0.b'"), std::string::npos) << e;
  e = load_error("struct_unknown", struct_doc(kTypes, R"("S")", R"("r0.a": 1, "r0.b": 2, "r0.c": 3)"));
  EXPECT_NE(e.find("'r0.c' is not a return value of kernel 'k'"), std::string::npos) << e;
  e = load_error("struct_pack", struct_doc(kTypes, R"("P")", R"("r0.a": 1)"));
  EXPECT_NE(e.find("kernel 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("an argpack ('P') cannot be returned"), std::string::npos) << e;
  e = load_error("struct_holder", struct_doc(kTypes, R"("Holder")", R"("r0.p.a": 1)"));
  EXPECT_NE(e.find("member 'p' is an argpack"), std::string::npos) << e;
  e = load_error("struct_unknown_type", struct_doc(kTypes, R"("Nope")", ""));
  EXPECT_NE(e.find("unknown type 'Nope'"), std::string::npos) << e;
}
