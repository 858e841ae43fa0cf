// Atomics that every invocation aims at one element (a 0-d field, g[3], a[n - 1]) and whose
// old value nothing reads combine in the subgroup first where the device has subgroup
// arithmetic: one atomic per subgroup instead of one per element. The results must be those
// of the CPU (integers exactly, float sums to rounding), and an atomic whose old value is read
// (a counter handing out slots) must stay one atomic per invocation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/graph_builder.h"
#include "engine_plugin/include/loom/program.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

using namespace graph::build;

constexpr int kN = 100000;

ProgramOptions on(Backend b) {
  ProgramOptions o;
  o.backend = b;
  o.offline_cache = false;
  o.validation = true;
  return o;
}

template <typename T>
std::vector<T> values(Program& p, const std::string& name) {
  ArrayView v = p.array(name);
  std::vector<T> out(v.bytes / sizeof(T));
  std::memcpy(out.data(), v.data, v.bytes);
  return out;
}

// Accumulators of every kind into fixed elements, from a parallel loop over kN elements.
graph::Document accumulators() {
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"fsum", {Scalar::F32}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"isum", {Scalar::I32}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"imax", {Scalar::I32}, {4}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"umin", {Scalar::U32}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"bits", {Scalar::I32}, {3}, Layout::AoS});
  doc.kernels.push_back(kernel(
      "accumulate", {value_param("slot", "i32")},
      {N(1, "param").p("name", "slot"),
       N(2, "range_for")
           .in("end0", kN)
           .region("body",
                   {N(3, "expr").in("i", ln(2, "i0")).p("expr", "(i % 1000) * 0.001"),
                    N(4, "atomic_add").in("value", ln(3)).p("field", "fsum"),
                    N(5, "expr").in("i", ln(2, "i0")).p("expr", "i % 7 - 3"),
                    N(6, "atomic_add").in("value", ln(5)).p("field", "isum"),
                    N(7, "expr").in("i", ln(2, "i0")).p("expr", "(i * 7919) % 100003"),
                    // the element is a parameter: the same in every invocation
                    N(8, "atomic_max").in("i0", ln(1)).in("value", ln(7)).p("field", "imax"),
                    N(9, "expr").in("i", ln(2, "i0")).p("expr", "cast(i * 31 + 17, u32)"),
                    N(10, "atomic_min").in("value", ln(9)).p("field", "umin"),
                    N(11, "expr").in("i", ln(2, "i0")).p("expr", "1 << (i % 31)"),
                    N(12, "atomic_or").in("i0", 0).in("value", ln(11)).p("field", "bits"),
                    N(13, "atomic_xor").in("i0", 1).in("value", ln(2, "i0")).p("field", "bits"),
                    N(14, "atomic_and").in("i0", 2).in("value", ln(11)).p("field", "bits")})}));
  return doc;
}

TEST(UniformAtomics, CombineInTheSubgroupAndAgreeWithTheCpu) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc = accumulators();
  Program cpu(on(Backend::Cpu)), vk(on(Backend::Vulkan));
  for (Program* p : {&cpu, &vk}) {
    p->load(doc);
    ArrayView umin = p->array("umin");
    uint32_t big = UINT32_MAX;
    std::memcpy(umin.data, &big, 4);
    ArrayView bits = p->array("bits");
    int32_t ones = -1;
    std::memcpy(bits.data + 8, &ones, 4);
    p->launch("accumulate", {{"slot", 2}});
  }
  float fc = values<float>(cpu, "fsum")[0], fv = values<float>(vk, "fsum")[0];
  EXPECT_NEAR(fv, fc, 1e-4 * fc);  // the order of the additions differs
  EXPECT_EQ(values<int32_t>(cpu, "isum"), values<int32_t>(vk, "isum"));
  EXPECT_EQ(values<int32_t>(cpu, "imax"), values<int32_t>(vk, "imax"));
  EXPECT_EQ(values<uint32_t>(cpu, "umin"), values<uint32_t>(vk, "umin"));
  EXPECT_EQ(values<int32_t>(cpu, "bits"), values<int32_t>(vk, "bits"));
  EXPECT_EQ(values<int32_t>(cpu, "imax")[2], 100002);  // every slot but the parameter's is 0
  // The device has subgroup arithmetic (lavapipe): the shader elects one invocation per
  // subgroup for each of the seven atomics.
  std::string spirv = vk.spirv_text("accumulate");
  size_t elections = 0;
  for (size_t at = spirv.find("OpGroupNonUniformElect"); at != std::string::npos;
       at = spirv.find("OpGroupNonUniformElect", at + 1))
    ++elections;
  EXPECT_EQ(elections, 7u) << spirv;
}

// A counter handing out slots: each invocation needs its own old value, so nothing combines.
TEST(UniformAtomics, AnAtomicWhoseOldValueIsReadStaysPerInvocation) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  graph::Document doc;
  doc.fields.push_back(FieldDesc{"count", {Scalar::I32}, {}, Layout::AoS});
  doc.fields.push_back(FieldDesc{"out", {Scalar::I32}, {kN}, Layout::AoS});
  doc.kernels.push_back(kernel(
      "compact", {},
      {N(1, "range_for")
           .in("end0", kN)
           .region("body",
                   {N(2, "atomic_add").in("value", 1).p("field", "count"),
                    N(3, "store").in("i0", ln(2)).in("value", ln(1, "i0")).p("field", "out")})}));
  Program vk(on(Backend::Vulkan));
  vk.load(doc);
  vk.launch("compact");
  EXPECT_EQ(values<int32_t>(vk, "count")[0], kN);
  std::vector<int32_t> out = values<int32_t>(vk, "out");
  std::sort(out.begin(), out.end());
  std::vector<int32_t> expected(kN);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(out, expected);  // every index once: each invocation got a slot of its own
  EXPECT_EQ(vk.spirv_text("compact").find("OpGroupNonUniformElect"), std::string::npos);
}

}  // namespace
}  // namespace loom
