// Floats a module holds (pipeline arguments, argpack values, list components, float template
// arguments) that JSON has no number for: written so the module still loads, read back with
// the same bits. And the document side of the same rule: a number that overflows every float
// type is an error naming the place, for pipeline arguments and argpack values as for node
// literals (nodes.md).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/module.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"
#include "runtime/common/json_value.h"
#include "tests/aot/metadata_samples.h"

namespace loom {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every kind of float the format can hold: infinities, NaN, signed zero, the subnormal
// extremes, the normal extremes of both float types, and a value with no short spelling.
std::vector<double> special_floats() {
  return {kInf,
          -kInf,
          std::numeric_limits<double>::quiet_NaN(),
          0.0,
          -0.0,
          std::numeric_limits<double>::denorm_min(),
          -std::numeric_limits<double>::denorm_min(),
          DBL_MIN,
          DBL_MAX,
          -DBL_MAX,
          static_cast<double>(FLT_MAX),
          static_cast<double>(FLT_TRUE_MIN),
          0.1};
}

bool same_bits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

aot::Value float_value(double d) {
  aot::Value v;
  v.kind = aot::Value::Kind::Float;
  v.f = d;
  return v;
}

aot::ModuleMetadata with_specials() {
  aot::ModuleMetadata m = test::sample_metadata(aot::Arch::Cpu);
  aot::Value list;
  list.kind = aot::Value::Kind::List;
  list.list = special_floats();
  auto& args = m.pipelines.at(0).launches.at(0).args;
  args.emplace_back("specials", list);
  for (size_t i = 0; i < special_floats().size(); ++i) {
    args.emplace_back("s" + std::to_string(i), float_value(special_floats()[i]));
    aot::TemplateArgument t{"t" + std::to_string(i), aot::TemplateArgument::Kind::Float};
    t.f = special_floats()[i];
    m.kernels.at(0).template_args.push_back(t);
  }
  m.argpacks.at(0).values.at(0).second.list = {-kInf, std::nan(""), -0.0};  // "inner.a"
  return m;
}

TEST(SpecialFloats, EveryFloatAModuleCanHoldRoundTripsThroughItsMetadata) {
  aot::ModuleMetadata m = with_specials();
  std::string text = aot::metadata_to_json(m);
  // Plain JSON: any reader takes it (a bare inf or nan token is refused by every JSON parser).
  EXPECT_NO_THROW(parse_json(text, "metadata.json")) << text;
  EXPECT_NE(text.find(R"("value": "-inf")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("value": "nan")"), std::string::npos) << text;

  aot::ModuleMetadata back = aot::metadata_from_json(text, "metadata.json");
  const auto& args = back.pipelines.at(0).launches.at(0).args;
  std::vector<double> specials = special_floats();
  const aot::Value* list = nullptr;
  for (const auto& [name, v] : args)
    if (name == "specials") list = &v;
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->list.size(), specials.size());
  for (size_t i = 0; i < specials.size(); ++i) {
    EXPECT_TRUE(same_bits(list->list[i], specials[i])) << "list component " << i;
    bool found = false;
    for (const auto& [name, v] : args)
      if (name == "s" + std::to_string(i)) {
        found = true;
        EXPECT_EQ(v.kind, aot::Value::Kind::Float);
        EXPECT_TRUE(same_bits(v.f, specials[i])) << name;
      }
    EXPECT_TRUE(found) << i;
    const aot::TemplateArgument& t = back.kernels.at(0).template_args.at(3 + i);
    EXPECT_EQ(t.param, "t" + std::to_string(i));
    EXPECT_TRUE(same_bits(t.f, specials[i])) << t.param;
  }
  const std::vector<double>& member = back.argpacks.at(0).values.at(0).second.list;
  ASSERT_EQ(member.size(), 3u);
  EXPECT_TRUE(same_bits(member[0], -kInf));
  EXPECT_TRUE(std::isnan(member[1]));
  EXPECT_TRUE(same_bits(member[2], -0.0));
  EXPECT_EQ(aot::metadata_to_json(back), text);  // and writes the same text again
}

TEST(SpecialFloats, AModuleHoldingThemLoadsFromItsArchive) {
  aot::Module module;
  module.meta = with_specials();
  module.blobs["sample.o"] = std::vector<uint8_t>(10, 0x5a);
  aot::finalize_module(module);
  std::vector<uint8_t> bytes = aot::write_module_archive(module);
  aot::Module back = aot::read_module_bytes(bytes, "specials.loommod");
  EXPECT_TRUE(std::isnan(back.meta.kernels.at(0).template_args.at(5).f));
  EXPECT_EQ(back.meta.kernels.at(0).template_args.at(3).f, kInf);
}

TEST(SpecialFloats, AStringThatIsNoSpecialFloatIsCorruptMetadataNamingItsKey) {
  std::string text = aot::metadata_to_json(with_specials());
  size_t at = text.find(R"("value": "nan")");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, R"("value": "NaN!")");
  try {
    aot::metadata_from_json(text, "edited.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("edited.json"), std::string::npos) << m;
    EXPECT_NE(m.find(".value is not a number"), std::string::npos) << m;
  }
}

std::string load_error(const std::string& text) {
  ProgramOptions po;
  po.backend = Backend::Cpu;
  po.offline_cache = false;
  Program program(po);
  // Per process: ctest runs tests in parallel.
  std::string path = ::testing::TempDir() + "overflow_" + std::to_string(getpid()) + ".loom.json";
  std::ofstream(path) << text;
  std::string error;
  try {
    program.load_file(path);
  } catch (const Error& e) {
    error = e.what();
  }
  std::remove(path.c_str());
  return error;
}

std::string document(const std::string& param_type, const std::string& arg,
                     const std::string& pack_value) {
  return R"({"format": "loom-graph", "version": 2, "name": "overflow",
  "argpack_types": [{"name": "P", "kind": "pack", "members": [{"name": "k", "type": "f64"}]}],
  "argpacks": [{"name": "p", "type": "P", "values": {"k": )" +
         pack_value + R"(}}],
  "kernels": [{"name": "k", "params": [{"name": "c", "kind": "value", "type": ")" +
         param_type + R"("}], "nodes": []}],
  "pipelines": [{"name": "step", "launches": [{"kernel": "k", "args": {"c": )" +
         arg + R"(}}]}]})";
}

TEST(SpecialFloats, ADocumentNumberBeyondEveryFloatIsRefusedWhereverItStands) {
  // Finite values at the edge load: the rule refuses overflow, not large numbers.
  EXPECT_EQ(load_error(document("f64", "1.7976931348623157e308", "-1e308")), "");
  for (const char* type : {"f64", "f32"}) {
    for (const char* arg : {"1e999", "-1e999"}) {
      std::string m = load_error(document(type, arg, "1"));
      EXPECT_NE(m.find("kernel 'k'"), std::string::npos) << type << " " << arg << m;
      EXPECT_NE(m.find("does not fit any float type"), std::string::npos) << m;
      EXPECT_NE(m.find("'c'"), std::string::npos) << m;  // the parameter
    }
  }
  std::string v = load_error(document("f64x2", "[1, -1e999]", "1"));
  EXPECT_NE(v.find("the number -1e999 does not fit any float type"), std::string::npos) << v;
  std::string m = load_error(document("f64", "1", "1e999"));
  EXPECT_NE(m.find("the number 1e999 does not fit any float type"), std::string::npos) << m;
  EXPECT_NE(m.find("p.k"), std::string::npos) << m;  // the argpack member
}

}  // namespace
}  // namespace loom
