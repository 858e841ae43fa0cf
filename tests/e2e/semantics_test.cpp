// What a kernel means, independent of how the compiler splits it: returns, return values,
// argument ranges and formats.
#include "tests/e2e/e2e_util.h"

#include <fstream>
#include <iterator>
#include <limits>

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

std::string struct_doc(const std::string& types, const std::string& returns,
                       const std::string& inputs) {
  return R"({"format": "loom-graph", "version": 2, "argpack_types": [)" + types + R"(],
  "kernels": [{"name": "k", "returns": [)" +
         returns + R"(], "nodes": [
    {"id": 1, "type": "return", "inputs": {)" +
         inputs + R"(}}]}]})";
}

const char* kTypes =
    R"({"name": "S", "kind": "struct", "members": [{"name": "a", "type": "i32"}, {"name": "b", "type": "f32"}]},
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
  e = load_error("struct_unknown",
                 struct_doc(kTypes, R"("S")", R"("r0.a": 1, "r0.b": 2, "r0.c": 3)"));
  EXPECT_NE(e.find("'r0.c' is not a return value of kernel 'k'"), std::string::npos) << e;
  e = load_error("struct_pack", struct_doc(kTypes, R"("P")", R"("r0.a": 1)"));
  EXPECT_NE(e.find("kernel 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("an argpack ('P') cannot be returned"), std::string::npos) << e;
  e = load_error("struct_holder", struct_doc(kTypes, R"("Holder")", R"("r0.p.a": 1)"));
  EXPECT_NE(e.find("member 'p' is an argpack"), std::string::npos) << e;
  e = load_error("struct_unknown_type", struct_doc(kTypes, R"("Nope")", ""));
  EXPECT_NE(e.find("unknown type 'Nope'"), std::string::npos) << e;
}

namespace {

Args take_args(Arg base, Arg small, Arg m) {
  return {{"base", std::move(base)}, {"small", std::move(small)}, {"m", std::move(m)}};
}

const std::vector<double> kFlat2x2 = {1, 2, 3, 4};

}  // namespace

TEST(Semantics, ArgumentsOutOfRangeAreErrorsNamingKernelAndParameter) {
  Program p(no_cache());
  p.load_file(doc_path("argument_values.loom.json"));
  std::string e = error_of([&] { p.launch("take", take_args(int64_t{3000000000}, 1, kFlat2x2)); });
  EXPECT_NE(e.find("kernel 'take'"), std::string::npos) << e;
  EXPECT_NE(e.find("parameter 'base' of type i32 cannot hold 3000000000"), std::string::npos) << e;
  e = error_of([&] { p.launch("take", take_args(0, -1, kFlat2x2)); });
  EXPECT_NE(e.find("parameter 'small' of type u8 cannot hold -1"), std::string::npos) << e;
  e = error_of([&] { p.launch("take", take_args(0, 256, kFlat2x2)); });
  EXPECT_NE(e.find("cannot hold 256"), std::string::npos) << e;
  e = error_of([&] { p.launch("take", take_args(3e9, 1, kFlat2x2)); });
  EXPECT_NE(e.find("cannot hold 3000000000"), std::string::npos) << e;
  e = error_of([&] { p.launch("take", take_args(0.5, 1, kFlat2x2)); });
  EXPECT_NE(e.find("cannot hold 0.5 (not an integer)"), std::string::npos) << e;
  // duplicate names: an error, not "the first wins"
  Args twice = take_args(1, 1, kFlat2x2);
  twice.emplace_back("base", 2);
  e = error_of([&] { p.launch("take", twice); });
  EXPECT_NE(e.find("kernel 'take'"), std::string::npos) << e;
  EXPECT_NE(e.find("argument 'base' is given twice"), std::string::npos) << e;
  EXPECT_EQ(p.stats().launches, 0);
  // in range: exact values, whole floats accepted
  KernelResult r = p.launch("take", take_args(-2147483648LL, 255u, kFlat2x2));
  EXPECT_EQ(r.ints[0], -2147483648LL);
  EXPECT_EQ(r.ints[1], 255);
  EXPECT_EQ(p.launch("take", take_args(3.0, true, kFlat2x2)).ints[0], 3);
}

TEST(Semantics, ListComponentsAreCheckedLikeScalars) {
  // an integer vector: 1.5 does not truncate to 1
  Program q(no_cache());
  q.load_file(doc_path("taichi_args.loom.json"));
  std::string e = error_of([&] {
    q.launch("run", {{"base", 0}, {"arr", "arr"}, {"v", std::vector<double>{1.5, 2, 3}}});
  });
  EXPECT_NE(e.find("parameter 'v' of type i32x3 cannot hold 1.5 (not an integer) (component 0)"),
            std::string::npos)
      << e;
  e = error_of([&] {
    q.launch("run", {{"base", 0}, {"arr", "arr"}, {"v", std::vector<double>{1, 2, 3e9}}});
  });
  EXPECT_NE(e.find("cannot hold 3000000000 (component 2)"), std::string::npos) << e;
}

TEST(Semantics, ArgpackMembersOutOfRangeAreErrorsNamingPackAndMember) {
  Program p(no_cache());
  p.load_file(doc_path("argument_values.loom.json"));
  std::string e = error_of([&] { p.set_argpack("pk", "a", 3e9); });
  EXPECT_NE(e.find("pk.a"), std::string::npos) << e;
  EXPECT_NE(e.find("member 'pk.a' of type i32 cannot hold 3000000000"), std::string::npos) << e;
  e = error_of([&] { p.set_argpack("pk", "a", int64_t{3000000000}); });
  EXPECT_NE(e.find("cannot hold 3000000000"), std::string::npos) << e;
  e = error_of([&] { p.set_argpack("pk", "b", 2.5); });
  EXPECT_NE(e.find("member 'pk.b' of type bool cannot hold 2.5"), std::string::npos) << e;
  e = error_of([&] { p.set_argpack("pk", "b", 2); });
  EXPECT_NE(e.find("cannot hold 2"), std::string::npos) << e;
  EXPECT_EQ(p.get_argpack("pk", "a"), 1.0);  // unchanged by the failed writes
  p.set_argpack("pk", "b", 0);
  EXPECT_EQ(p.get_argpack("pk", "b"), 0.0);
}

TEST(Semantics, MatricesTakeColumnsOrAFlatListEverywhere) {
  Program p(no_cache());
  p.load_file(doc_path("argument_values.loom.json"));  // argpack values in both forms
  p.run_pipeline("step");                              // launch arguments in both forms
  // m[0][1] is the first component of column 1
  std::vector<std::vector<double>> columns = {{1, 2}, {3, 4}};
  EXPECT_EQ(p.launch("take", take_args(0, 0, columns)).values[2], 3.0);
  EXPECT_EQ(p.launch("take", take_args(0, 0, kFlat2x2)).values[2], 3.0);
  EXPECT_EQ(p.launch("pack_m", {{"p", "pk"}}).values[0], 4.0);
  EXPECT_EQ(p.launch("pack_m", {{"p", "flat"}}).values[0], 4.0);
  p.set_argpack("pk", "m", std::vector<std::vector<double>>{{0, 0, 0}, {9, 0, 0}, {0, 0, 0}});
  EXPECT_EQ(p.launch("pack_m", {{"p", "pk"}}).values[0], 9.0);
  std::string e = error_of([&] {
    p.launch("take", take_args(0, 0, std::vector<std::vector<double>>{{1, 2, 3}, {4}}));
  });
  EXPECT_NE(e.find("takes 2 columns of 2 numbers (or a flat list of 4)"), std::string::npos) << e;
  e = error_of([&] { p.set_argpack("pk", "m", std::vector<std::vector<double>>{{1, 2, 3}}); });
  EXPECT_NE(e.find("member 'pk.m'"), std::string::npos) << e;
}

TEST(Semantics, DocumentArgumentsAreCheckedWhenLoaded) {
  // what `loom run` would refuse, loading (and `loom check`) refuses, naming pipeline,
  // kernel and parameter
  std::string text;
  {
    std::ifstream in(doc_path("argument_values.loom.json"));
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  std::string e =
      load_error("args_ragged", with("[[1.0, 2.0], [3.0, 4.0]]", "[[1.0, 2.0, 3.0], [4.0]]"));
  EXPECT_NE(e.find("kernel 'take'"), std::string::npos) << e;
  EXPECT_NE(e.find("'m'"), std::string::npos) << e;
  e = load_error("args_range", with("\"base\": 1, \"small\": 2, \"m\": [1.0",
                                    "\"base\": 3000000000, \"small\": 2, \"m\": [1.0"));
  EXPECT_NE(e.find("pipeline 'step': parameter 'base' of type i32 cannot hold 3000000000"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("kernel 'take'"), std::string::npos) << e;
  e = load_error("args_member", with("\"a\": 1, \"b\": true", "\"a\": 1, \"b\": 2.5"));
  EXPECT_NE(e.find("member 'pk.b' of type bool cannot hold 2.5"), std::string::npos) << e;
}

TEST(Semantics, EveryIntegerTypeMakesAnArgument) {
  Program p(no_cache());
  p.load_file(doc_path("argument_values.loom.json"));
  auto wide = [&](Arg u, Arg l) {
    return p.launch("wide", {{"u", std::move(u)}, {"l", std::move(l)}});
  };
  KernelResult r =
      wide(std::numeric_limits<uint64_t>::max(), std::numeric_limits<long long>::min());
  EXPECT_EQ(static_cast<uint64_t>(r.ints[0]), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(r.ints[1], std::numeric_limits<long long>::min());
  EXPECT_EQ(wide(7u, 8L).ints, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(wide(7ul, 8LL).ints, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(wide(uint8_t{7}, short{-8}).ints, (std::vector<int64_t>{7, -8}));
  EXPECT_EQ(wide(size_t{7}, int64_t{-8}).ints, (std::vector<int64_t>{7, -8}));
  std::string e = error_of([&] { wide(-1, 0); });
  EXPECT_NE(e.find("parameter 'u' of type u64 cannot hold -1"), std::string::npos) << e;
  e = error_of([&] { wide(0, std::numeric_limits<uint64_t>::max()); });
  EXPECT_NE(e.find("parameter 'l' of type i64 cannot hold 18446744073709551615"), std::string::npos)
      << e;
}
