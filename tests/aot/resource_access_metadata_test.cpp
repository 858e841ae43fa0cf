// The kernel ABI's resource access in both stored forms: modules (metadata.json) and
// compiled-kernel records (offline cache). Older modules have no such key and read as
// "not recorded", never as "touches nothing".
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "runtime/aot/module.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "tests/aot/metadata_samples.h"

namespace loom {
namespace {

std::string golden(const std::string& name) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/tests/aot/data/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The sample kernel (slots: field velocity, ndarray grid, texture image, pack member) with
// what its code does to three of them.
aot::ModuleMetadata with_access(aot::Arch arch) {
  aot::ModuleMetadata m = test::sample_metadata(arch);
  KernelABI& abi = m.kernels.at(0).abi;
  abi.resource_access_known = true;
  abi.resource_access = {{0, "velocity", kResourceRead | kResourceWrite},
                         {1, "grid", kResourceAtomic},
                         {3, "pack.arr", kResourceRead}};
  return m;
}

std::string error_of(const std::string& text) {
  try {
    aot::metadata_from_json(text, "edited.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(ResourceAccessMetadata, ModulesWrittenBeforeItReadAsNotRecorded) {
  for (const char* name : {"metadata_cpu.json", "metadata_vulkan.json"}) {
    std::string text = golden(name);
    ASSERT_FALSE(text.empty()) << name;
    ASSERT_EQ(text.find("resource_access"), std::string::npos) << name;
    aot::ModuleMetadata m = aot::metadata_from_json(text, name);
    const KernelABI& abi = m.kernels.at(0).abi;
    EXPECT_FALSE(abi.resource_access_known) << name;
    EXPECT_TRUE(abi.resource_access.empty()) << name;
    EXPECT_FALSE(abi.resources.empty()) << name;  // so "not recorded" is not "none"
  }
}

TEST(ResourceAccessMetadata, WrittenReadablyAndReadBack) {
  for (aot::Arch arch : {aot::Arch::Cpu, aot::Arch::Vulkan}) {
    std::string text = aot::metadata_to_json(with_access(arch));
    EXPECT_NE(text.find(R"("name": "velocity",)"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("access": "rw")"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("access": "a")"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("name": "pack.arr",)"), std::string::npos) << text;
    aot::ModuleMetadata back = aot::metadata_from_json(text, "written");
    const KernelABI& abi = back.kernels.at(0).abi;
    ASSERT_TRUE(abi.resource_access_known);
    ASSERT_EQ(abi.resource_access.size(), 3u);
    EXPECT_EQ(abi.resource_access[1].slot, 1);
    EXPECT_EQ(abi.resource_access[1].name, "grid");
    EXPECT_EQ(abi.resource_access[1].access, kResourceAtomic);
    EXPECT_EQ(abi.resource_access[2].access, kResourceRead);
    EXPECT_EQ(aot::metadata_to_json(back), text);
  }
  // Recorded and empty (the kernel touches nothing) stays distinct from not recorded.
  aot::ModuleMetadata none = with_access(aot::Arch::Cpu);
  none.kernels[0].abi.resource_access.clear();
  std::string text = aot::metadata_to_json(none);
  EXPECT_NE(text.find(R"("resource_access": [])"), std::string::npos) << text;
  EXPECT_TRUE(aot::metadata_from_json(text, "none").kernels[0].abi.resource_access_known);
}

TEST(ResourceAccessMetadata, BadEntriesAreNamed) {
  std::string text = aot::metadata_to_json(with_access(aot::Arch::Vulkan));
  std::string msg = error_of(replaced(text, R"("access": "a")", R"("access": "x")"));
  EXPECT_NE(msg.find("kernels[0].abi.resource_access[1].access has an unknown value 'x'"),
            std::string::npos)
      << msg;
  msg = error_of(replaced(text, R"("access": "a")", R"("access": "")"));
  EXPECT_NE(msg.find("kernels[0].abi.resource_access[1] records no access"), std::string::npos)
      << msg;
  msg = error_of(replaced(text, R"("slot": 3,)", R"("slot": 4,)"));
  EXPECT_NE(msg.find("kernels[0].abi.resource_access[2].slot is out of range [0, 3]"),
            std::string::npos)
      << msg;
  msg = error_of(replaced(text, R"("slot": 3,)", R"("slot": 1,)"));
  EXPECT_NE(msg.find("kernels[0].abi lists a resource slot twice or out of order"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("edited.json"), std::string::npos) << msg;
}

TEST(ResourceAccessRecord, RoundTripsInTheBinaryForm) {
  KernelRecord r{with_access(aot::Arch::Cpu).kernels[0].abi, {1, 2, 3}};
  KernelRecord back = deserialize_kernel_record(serialize_kernel_record(r), "mem");
  ASSERT_TRUE(back.abi.resource_access_known);
  ASSERT_EQ(back.abi.resource_access.size(), 3u);
  EXPECT_EQ(back.abi.resource_access[0].name, "velocity");
  EXPECT_EQ(back.abi.resource_access[0].access, kResourceRead | kResourceWrite);
  EXPECT_EQ(back.abi.resource_access[2].slot, 3);
  EXPECT_EQ(back.code, r.code);

  r.abi.resource_access_known = false;
  r.abi.resource_access.clear();
  back = deserialize_kernel_record(serialize_kernel_record(r), "mem");
  EXPECT_FALSE(back.abi.resource_access_known);

  // An access byte of 0 in an otherwise valid record: refused, naming the entry.
  r = {with_access(aot::Arch::Cpu).kernels[0].abi, {}};
  r.abi.resource_access[2].access = 0;
  try {
    deserialize_kernel_record(serialize_kernel_record(r), "cache/x.lkr");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resource_access[2] records no access"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace loom
