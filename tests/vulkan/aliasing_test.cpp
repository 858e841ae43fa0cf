// Ndarray buffers are declared as possibly overlapping (SPIR-V Aliased) only when they may:
// a launch binding each ndarray parameter to an ndarray of its own gets an instantiation that
// assumes no overlap, and binding one ndarray twice gets another that does not, with the
// right answer either way.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/program.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

std::vector<float> floats(Program& p, const std::string& name) {
  ArrayView v = p.array(name);
  std::vector<float> out(v.bytes / 4);
  std::memcpy(out.data(), v.data, v.bytes);
  return out;
}

void fill(Program& p, const std::string& name, float value) {
  ArrayView v = p.array(name);
  std::vector<float> values(v.bytes / 4, value);
  std::memcpy(v.data, values.data(), v.bytes);
}

TEST(Aliasing, OnlyNdarraysThatMayOverlapAreDeclaredAliased) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  ProgramOptions o;
  o.backend = Backend::Vulkan;
  o.offline_cache = false;
  o.validation = true;
  Program p(o);
  p.load_file(std::string(LOOM_SOURCE_DIR) + "/bench/graphs/bench_kernels.loom.json");
  p.create_ndarray("a", {Scalar::F32}, {1000});
  p.create_ndarray("b", {Scalar::F32}, {1000});
  fill(p, "a", 1.5f);
  fill(p, "b", 0.25f);
  const Args distinct = {{"a", 2.0}, {"x", "a"}, {"y", "b"}};
  const Args same = {{"a", 2.0}, {"x", "b"}, {"y", "b"}};
  EXPECT_EQ(p.spirv_text("saxpy", distinct).find("Aliased"), std::string::npos);
  EXPECT_NE(p.spirv_text("saxpy", same).find("Aliased"), std::string::npos);

  p.launch("saxpy", distinct);  // b = 2 * 1.5 + 0.25
  EXPECT_EQ(floats(p, "b"), std::vector<float>(1000, 3.25f));
  p.launch("saxpy", same);  // b = 2 * b + b
  EXPECT_EQ(floats(p, "b"), std::vector<float>(1000, 9.75f));
  EXPECT_EQ(p.stats().instantiations, 2);  // one for each binding pattern
}

}  // namespace
}  // namespace loom
