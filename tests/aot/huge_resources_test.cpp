// A module declaring a resource no machine can hold (issue 17): loading it fails with an
// error naming the module and the resource, and the device keeps nothing of it.
#include <gtest/gtest.h>

#include <string>

#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module.h"
#include "runtime/common/error.h"
#include "runtime/device/device.h"

namespace loom {
namespace {

// About 2^50 bytes: more than x86-64's 2^47-byte user address space, so never allocated.
aot::Module module_with(const std::string& what) {
  aot::Module m;
  m.meta.name = "huge";
  m.meta.arch = aot::Arch::Cpu;
  m.meta.producer = "loom test";
  m.meta.needs.cpu_levels = {{"x86-64", {}}};
  m.meta.fields.push_back({"small", {Scalar::F32, 1, 1}, {8}, Layout::AoS});
  if (what == "field") m.meta.fields.push_back({"huge", {Scalar::F64, 1, 1}, {2147483647, 65536}});
  if (what == "ndarray")
    m.meta.ndarrays.push_back({"huge", {Scalar::F32, 1, 1}, {2147483647, 131072}});
  if (what == "texture")
    m.meta.textures.push_back({"huge", TextureFormat::RGBA32F, {65536, 65536, 65536}});
  aot::finalize_module(m);
  return m;
}

TEST(HugeResources, LoadingNamesTheModuleAndTheResourceItCannotAllocate) {
  auto device = make_cpu_device(1);
  for (const char* what : {"field", "ndarray", "texture"}) {
    try {
      aot::LoadedModule m(module_with(what), *device, "huge.loommod");
      ADD_FAILURE() << what << " loaded";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind("huge.loommod: cannot allocate ", 0), 0u) << msg;
      EXPECT_NE(msg.find(std::string(what) + " 'huge'"), std::string::npos) << msg;
    }
  }
  // What the failed loads made is gone from the device: the same module loads without them.
  aot::Module ok = module_with("none");
  aot::LoadedModule m(std::move(ok), *device, "ok.loommod");
  EXPECT_NE(m.field("small"), nullptr);
}

}  // namespace
}  // namespace loom
