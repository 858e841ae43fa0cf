// AOT modules: built from a program (AotModule), saved, read back and run with the runtime
// alone (LoadedModule); the results must equal the JIT's on both archs. Bad modules of every
// kind are clear errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module_device.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/common/spirv_kernel.h"
#include "runtime/device/device.h"
#include "runtime/host/argpack.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"
#include "tests/aot/metadata_samples.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

std::unique_ptr<Device> device_for(aot::Arch arch) {
  if (arch == aot::Arch::Cpu) return make_cpu_device();
  VulkanDeviceOptions o;
  o.validation = std::getenv("LOOM_VULKAN_VALIDATION") &&
                 std::string(std::getenv("LOOM_VULKAN_VALIDATION")) == "1";
  return make_vulkan_device(o);
}

ProgramOptions jit_options(aot::Arch arch) {
  ProgramOptions o;
  o.backend = arch == aot::Arch::Vulkan ? Backend::Vulkan : Backend::Cpu;
  o.offline_cache = false;
  return o;
}

// CPU modules for this machine's CPU: the JIT they are compared with compiles for it too, and
// fast math contracts a*b+c into one rounding only where the CPU has FMA (cpu_levels_test.cpp
// runs the portable levels).
aot::Module build_module(const std::string& doc, aot::Arch arch) {
  ProgramOptions po;
  po.backend = Backend::Cpu;
  po.offline_cache = false;
  Program program(po);
  program.load_file(doc);
  AotOptions ao;
  ao.arch = arch == aot::Arch::Vulkan ? Backend::Vulkan : Backend::Cpu;
  ao.cpu_levels = {"host"};
  AotModule m(program, ao);
  m.add_document();
  return m.module();
}

// The bytes of a module resource after the device finished.
std::vector<uint8_t> resource_bytes(aot::LoadedModule& m, const std::string& name) {
  const uint8_t* data = nullptr;
  size_t bytes = 0;
  if (host::Field* f = m.field(name))
    data = f->data(), bytes = f->bytes();
  else if (host::Ndarray* n = m.ndarray(name))
    data = n->data(), bytes = n->bytes();
  else if (host::Texture* t = m.texture(name))
    data = t->data(), bytes = t->bytes();
  if (!data) return {};
  m.device().read_back(data);
  return std::vector<uint8_t>(data, data + bytes);
}

std::vector<uint8_t> program_bytes(Program& p, const std::string& name) {
  for (const std::string& n : p.resource_names())
    if (n == name) {
      try {
        ArrayView v = p.array(name);
        return std::vector<uint8_t>(v.data, v.data + v.bytes);
      } catch (const Error&) {
        TextureView t = p.texture(name);
        return std::vector<uint8_t>(t.data, t.data + t.bytes);
      }
    }
  return {};
}

// mpm88 scatters to its grid with float atomics, whose order (and so the last bits of the
// sums) varies from run to run on a multi-threaded device: its f32 fields are compared
// with a tolerance, everything else byte for byte.
bool has_float_atomics(const std::string& doc) { return doc.find("mpm88") != std::string::npos; }

bool same_f32(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t header = 0) {
  if (a.size() != b.size() || a.size() < header) return false;
  if (std::memcmp(a.data(), b.data(), header) != 0) return false;
  for (size_t i = header; i + 4 <= a.size(); i += 4) {
    float x, y;
    std::memcpy(&x, a.data() + i, 4);
    std::memcpy(&y, b.data() + i, 4);
    if (std::fabs(x - y) > 1e-4f * std::max(1.0f, std::fabs(y))) return false;
  }
  return true;
}

struct SampleCase {
  std::string doc;
  aot::Arch arch;
};

class ModuleMatchesJit : public testing::TestWithParam<SampleCase> {};

// Every sample: init and three steps from a module read back from its archive bytes equal
// the JIT's, resource by resource, byte for byte.
TEST_P(ModuleMatchesJit, SameResultsAsTheJit) {
  const SampleCase& c = GetParam();
  if (c.arch == aot::Arch::Vulkan) LOOM_REQUIRE_VULKAN_OR_SKIP();
  std::string doc = source("assets/graphs/" + c.doc + ".loom.json");
  aot::Module built = build_module(doc, c.arch);
  std::vector<uint8_t> archive = aot::write_module_archive(built);
  auto device = device_for(c.arch);
  aot::LoadedModule loaded(aot::read_module_bytes(archive, c.doc + ".loommod"), *device,
                           c.doc + ".loommod");

  Program jit(jit_options(c.arch));
  jit.load_file(doc);
  jit.run_pipeline("init");
  loaded.run_pipeline("init");
  for (int s = 0; s < 3; ++s) {
    jit.run_pipeline("step");
    loaded.run_pipeline("step");
  }
  jit.synchronize();
  int compared = 0;
  for (const std::string& name : loaded.resource_names()) {
    std::vector<uint8_t> got = resource_bytes(loaded, name);
    if (got.empty()) continue;  // argpacks
    std::vector<uint8_t> want = program_bytes(jit, name);
    ASSERT_EQ(got.size(), want.size()) << name;
    bool same = has_float_atomics(c.doc) ? same_f32(got, want) : got == want;
    EXPECT_TRUE(same) << c.doc << ": resource '" << name << "' differs from the JIT's";
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Samples, ModuleMatchesJit,
    testing::Values(SampleCase{"heat", aot::Arch::Cpu}, SampleCase{"life", aot::Arch::Cpu},
                    SampleCase{"julia", aot::Arch::Cpu}, SampleCase{"nbody", aot::Arch::Cpu},
                    SampleCase{"mpm88", aot::Arch::Cpu}, SampleCase{"cloth", aot::Arch::Cpu},
                    SampleCase{"heat", aot::Arch::Vulkan}, SampleCase{"life", aot::Arch::Vulkan},
                    SampleCase{"julia", aot::Arch::Vulkan}, SampleCase{"nbody", aot::Arch::Vulkan},
                    SampleCase{"mpm88", aot::Arch::Vulkan}, SampleCase{"cloth", aot::Arch::Vulkan}),
    [](const testing::TestParamInfo<SampleCase>& i) {
      return i.param.doc + "_" + aot::arch_name(i.param.arch);
    });

TEST(AotModule, SameInputGivesByteIdenticalFiles) {
  for (aot::Arch arch : {aot::Arch::Cpu, aot::Arch::Vulkan}) {
    std::string doc = source("assets/graphs/mpm88.loom.json");
    std::vector<uint8_t> a = aot::write_module_archive(build_module(doc, arch));
    std::vector<uint8_t> b = aot::write_module_archive(build_module(doc, arch));
    EXPECT_TRUE(a == b) << aot::arch_name(arch);
    // The folder form holds the same metadata and blobs.
    std::string dir = testing::TempDir() + "/loom_aot_folder_" + aot::arch_name(arch);
    std::filesystem::remove_all(dir);
    aot::Module m = aot::read_module_bytes(a, "archive");
    aot::save_module_folder(m, dir);
    aot::Module back = aot::read_module_path(dir);
    EXPECT_TRUE(aot::write_module_archive(back) == a);
    EXPECT_TRUE(std::filesystem::exists(dir + "/metadata.json"));
  }
}

TEST(AotModule, MetadataDescribesKernelsResourcesAndRequirements) {
  aot::Module m = build_module(source("assets/graphs/heat.loom.json"), aot::Arch::Vulkan);
  std::string json = aot::metadata_to_json(m.meta);
  // Version 2: heat's stencil loops end at an extent minus one and its tasks are direct.
  for (const char* key : {"\"format_version\": 2", "\"arch\": \"vulkan\"", "\"requires\"",
                          "\"workgroup_size\": 128", "\"fields\"", "\"temperature\"",
                          "\"template_args\"", "\"pipelines\"", "\"blobs\"", "\"hash\""})
    EXPECT_NE(json.find(key), std::string::npos) << key;
  // One SPIR-V blob per task, each a SPIR-V module.
  size_t tasks = 0;
  for (const aot::KernelInfo& k : m.meta.kernels) tasks += k.spirv.tasks.size();
  size_t spv = 0;
  for (const auto& [name, bytes] : m.blobs)
    if (name.size() > 4 && name.substr(name.size() - 4) == ".spv") {
      ++spv;
      uint32_t magic = 0;
      std::memcpy(&magic, bytes.data(), 4);
      EXPECT_EQ(magic, 0x07230203u) << name;
    }
  EXPECT_EQ(spv, tasks);
  // The JSON reads back to the same metadata.
  EXPECT_EQ(aot::metadata_to_json(aot::metadata_from_json(json, "test")), json);

  aot::Module cpu = build_module(source("assets/graphs/heat.loom.json"), aot::Arch::Cpu);
  ASSERT_EQ(cpu.meta.needs.cpu_levels.size(), 1u);
  EXPECT_FALSE(cpu.meta.needs.cpu_levels[0].cpu.empty());
  for (const aot::KernelInfo& k : cpu.meta.kernels) {
    ASSERT_EQ(k.objects.size(), 1u);
    ASSERT_TRUE(cpu.blobs.count(k.objects[0])) << k.objects[0];
    EXPECT_EQ(std::memcmp(cpu.blobs.at(k.objects[0]).data(),
                          "\x7f"
                          "ELF",
                          4),
              0);
  }
}

// ---- kernels found by name and template arguments; argpacks; open ndarrays

aot::TemplateArgument field_arg(const std::string& param, const std::string& field) {
  aot::TemplateArgument t;
  t.param = param;
  t.kind = aot::TemplateArgument::Kind::Field;
  t.field = field;
  return t;
}

aot::TemplateArgument int_arg(const std::string& param, int64_t v) {
  aot::TemplateArgument t;
  t.param = param;
  t.kind = aot::TemplateArgument::Kind::Int;
  t.i = v;
  return t;
}

class ModuleArch : public testing::TestWithParam<aot::Arch> {
 protected:
  void SetUp() override {
    if (GetParam() == aot::Arch::Vulkan) LOOM_REQUIRE_VULKAN_OR_SKIP();
  }
  AotOptions options() const {
    AotOptions o;
    o.arch = GetParam() == aot::Arch::Vulkan ? Backend::Vulkan : Backend::Cpu;
    return o;
  }
};

TEST_P(ModuleArch, TemplateInstantiationsAreFoundByTheirArguments) {
  Program program(jit_options(aot::Arch::Cpu));
  program.load_file(source("tests/e2e/docs/taichi_templates.loom.json"));
  AotModule builder(program, options());
  builder.add_kernel_template("inc")
      .instantiate({{"a", "x"}, {"b", 1}})
      .instantiate({{"a", "y"}, {"b", 2}});
  auto device = device_for(GetParam());
  aot::LoadedModule m(builder.module(), *device, "templates");
  int xy = m.kernel("inc", {field_arg("a", "x"), int_arg("b", 1)});
  int yx = m.kernel("inc", {int_arg("b", 2), field_arg("a", "y")});  // order does not matter
  EXPECT_NE(xy, yx);
  EXPECT_EQ(m.find_kernel("inc", {field_arg("a", "x"), int_arg("b", 2)}), -1);
  EXPECT_EQ(m.find_kernel("inc", {field_arg("a", "x")}), -1);
  try {
    m.kernel("inc", {field_arg("a", "x"), int_arg("b", 3)});
    FAIL() << "no such instantiation";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("no instantiation of kernel 'inc' for (a=field x, b=3)"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("(a=field x, b=1), (a=field y, b=2)"), std::string::npos) << msg;
  }
  try {
    m.kernel("nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no kernel 'nope'"), std::string::npos) << e.what();
  }
  // Launch both and check against the JIT doing the same.
  Program jit(jit_options(GetParam()));
  jit.load_file(source("tests/e2e/docs/taichi_templates.loom.json"));
  for (int i = 0; i < 3; ++i) {
    host::LaunchFrame f1(m.kernel_info(xy).abi), f2(m.kernel_info(yx).abi);
    m.launch(xy, f1);
    m.launch(yx, f2);
    jit.launch("inc", {{"a", "x"}, {"b", 1}});
    jit.launch("inc", {{"a", "y"}, {"b", 2}});
  }
  jit.synchronize();
  for (const char* f : {"x", "y"}) EXPECT_TRUE(resource_bytes(m, f) == program_bytes(jit, f)) << f;
}

TEST_P(ModuleArch, ArgpacksAndReturnValues) {
  Program program(jit_options(aot::Arch::Cpu));
  program.load_file(source("tests/e2e/docs/taichi_argpacks.loom.json"));
  AotModule builder(program, options());
  builder.add_kernel("abc_select", {{"p", "abc"}});
  builder.add_kernel("nested_sum", {{"x", "outer"}});
  builder.add_document();  // the argpacks and their declared values
  auto device = device_for(GetParam());
  // Through the archive bytes: struct and pack members survive the metadata round trip.
  aot::LoadedModule m(
      aot::read_module_bytes(aot::write_module_archive(builder.module()), "argpacks"), *device,
      "argpacks");
  Program jit(jit_options(GetParam()));
  jit.load_file(source("tests/e2e/docs/taichi_argpacks.loom.json"));

  int k = m.kernel("abc_select");
  host::LaunchFrame frame(m.kernel_info(k).abi);
  frame.set_argpack(0, *m.argpack("abc"));
  m.launch(k, frame);
  EXPECT_EQ(frame.returned<float>(0),
            static_cast<float>(jit.launch("abc_select", {{"p", "abc"}}).value()));

  int n = m.kernel("nested_sum");
  host::LaunchFrame nested(m.kernel_info(n).abi);
  nested.set_argpack(0, *m.argpack("outer"));
  m.launch(n, nested);
  EXPECT_EQ(nested.returned<int32_t>(0),
            static_cast<int32_t>(jit.launch("nested_sum", {{"x", "outer"}}).value()));
}

TEST_P(ModuleArch, OpenNdarrayParametersAreFixedByExampleArguments) {
  Program program(jit_options(aot::Arch::Cpu));
  program.load_file(source("tests/e2e/docs/open_ndarray.loom.json"));
  AotModule builder(program, options());
  builder.add_kernel("iota", {{"arr", "ints"}});
  builder.add_kernel("iota", {{"arr", "floats"}});
  auto device = device_for(GetParam());
  aot::LoadedModule m(builder.module(), *device, "open_ndarray");
  aot::TemplateArgument ints;
  ints.param = "arr";
  ints.kind = aot::TemplateArgument::Kind::Ndarray;
  ints.elem = ValueType{Scalar::I32, 1, 1};
  ints.i = 1;
  int k = m.kernel("iota", {ints});
  aot::TemplateArgument floats = ints;
  floats.elem = ValueType{Scalar::F32, 1, 1};
  EXPECT_NE(m.kernel("iota", {floats}), k);
  floats.i = 2;
  EXPECT_EQ(m.find_kernel("iota", {floats}), -1);

  host::Ndarray mine(Scalar::I32, {7}, 1, "mine");
  device->add_buffer("mine", mine.data(), mine.bytes(), false);
  host::LaunchFrame frame(m.kernel_info(k).abi);
  frame.set_ndarray(0, mine);
  m.launch(k, frame);
  device->read_back(mine.data());
  for (int i = 0; i < 7; ++i) EXPECT_EQ(mine.data_as<int32_t>()[i], i);
  device->remove(mine.data());
}

INSTANTIATE_TEST_SUITE_P(Arch, ModuleArch, testing::Values(aot::Arch::Cpu, aot::Arch::Vulkan),
                         [](const testing::TestParamInfo<aot::Arch>& i) {
                           return std::string(aot::arch_name(i.param));
                         });

// ---- bad modules

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AotModuleErrors, CorruptArchivesAreErrorsNeverCrashes) {
  std::vector<uint8_t> good = aot::write_module_archive(
      build_module(source("assets/graphs/heat.loom.json"), aot::Arch::Cpu));
  for (size_t cut : {size_t{0}, size_t{7}, size_t{15}, size_t{40}, good.size() / 3, good.size() / 2,
                     good.size() - 1}) {
    std::vector<uint8_t> bad(good.begin(), good.begin() + static_cast<ptrdiff_t>(cut));
    std::string msg = error_of([&] { aot::read_module_bytes(bad, "cut.loommod"); });
    EXPECT_NE(msg.find("cut.loommod"), std::string::npos) << "cut at " << cut << ": " << msg;
  }
  for (size_t at = 0; at < good.size(); at += 97) {  // one flipped byte anywhere
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x5a;
    std::string msg = error_of([&] { aot::read_module_bytes(bad, "flipped.loommod"); });
    EXPECT_NE(msg.find("flipped.loommod"), std::string::npos) << "byte " << at << ": " << msg;
  }
  std::vector<uint8_t> magic = good;
  magic[0] = 'X';
  EXPECT_NE(error_of([&] { aot::read_module_bytes(magic, "m"); }).find("not a Loom module archive"),
            std::string::npos);
  EXPECT_NE(error_of([] { aot::read_module_path("/nonexistent/x.loommod"); }).find("cannot open"),
            std::string::npos);
}

TEST(AotModuleErrors, AnotherFormatVersionIsAClearError) {
  aot::Module m = build_module(source("assets/graphs/heat.loom.json"), aot::Arch::Cpu);
  std::string json = aot::metadata_to_json(m.meta);
  std::string version = "\"format_version\": " + std::to_string(aot::module_format_version(m.meta));
  json.replace(json.find(version), version.size(),
               "\"format_version\": " + std::to_string(aot::kModuleFormatVersion + 1));
  std::string msg = error_of([&] { aot::metadata_from_json(json, "future.loommod"); });
  EXPECT_NE(msg.find("module format version 4 is not one this runtime reads (versions 1 to 3)"),
            std::string::npos)
      << msg;
}

// A module is written with the lowest version that holds it: version 1 while nothing in it
// needs version 2, so older runtimes keep loading it; a bound plus a constant or a direct task
// makes it version 2, which a runtime reading only version 1 refuses instead of misreading.
TEST(AotModule, FormatVersionIsTheLowestThatHoldsTheModule) {
  aot::ModuleMetadata m;
  m.arch = aot::Arch::Vulkan;
  EXPECT_EQ(aot::module_format_version(m), 1);
  aot::KernelInfo k;
  k.name = "k";
  SpirvTask t;
  t.kind = 1;
  t.host_extent = true;
  t.begin = {{RangeBound::Kind::Const, 0, 0, 0}};
  t.end = {{RangeBound::Kind::Shape, 0, 0, 0}};
  k.spirv.tasks.push_back(t);
  m.kernels.push_back(k);
  EXPECT_EQ(aot::module_format_version(m), 1);
  m.kernels[0].spirv.tasks[0].end[0].plus = -1;
  EXPECT_EQ(aot::module_format_version(m), 2);
  m.kernels[0].spirv.tasks[0].end[0].plus = 0;
  m.kernels[0].spirv.tasks[0].direct = true;
  EXPECT_EQ(aot::module_format_version(m), 2);
  m.kernels[0].spirv.tasks[0].direct = false;
  ExtentAssumption e;
  e.checked = true;
  e.loop = 0;
  e.begin = {{RangeBound::Kind::Const, 0, 0, 0}};
  e.end = {{RangeBound::Kind::Arg, 0, 0, 2}};
  m.kernels[0].abi.extent_assumptions.push_back(e);
  EXPECT_EQ(aot::module_format_version(m), 2);
}

TEST(AotModuleErrors, BlobThatDoesNotMatchItsHash) {
  aot::Module m = build_module(source("assets/graphs/heat.loom.json"), aot::Arch::Cpu);
  m.blobs.begin()->second[10] ^= 1;  // metadata still lists the old hash
  std::string msg =
      error_of([&] { aot::read_module_bytes(aot::write_module_archive(m), "tampered.loommod"); });
  EXPECT_NE(msg.find("does not match its hash"), std::string::npos) << msg;
}

TEST(AotModuleErrors, MissingCpuFeatures) {
  aot::Module m = build_module(source("assets/graphs/heat.loom.json"), aot::Arch::Cpu);
  m.meta.needs.cpu_levels.at(0).features.push_back("loom-test-feature");
  auto device = device_for(aot::Arch::Cpu);
  std::string msg = error_of([&] { aot::LoadedModule l(m, *device, "needy.loommod"); });
  EXPECT_NE(msg.find("this CPU lacks features the module's code uses"), std::string::npos) << msg;
  EXPECT_NE(msg.find("loom-test-feature"), std::string::npos) << msg;
}

TEST(AotModuleErrors, MissingVulkanCapabilitiesAndWrongArch) {
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  aot::Module m = build_module(source("assets/graphs/heat.loom.json"), aot::Arch::Vulkan);
  auto device = device_for(aot::Arch::Vulkan);
  aot::Module needy = m;
  needy.meta.needs.vulkan_features |= kAllSpirvRequirements;
  needy.meta.needs.workgroup_size = 1u << 16;
  std::string msg = error_of([&] { aot::LoadedModule l(needy, *device, "needy.loommod"); });
  EXPECT_NE(msg.find("lacks what the module needs"), std::string::npos) << msg;
  EXPECT_NE(msg.find("workgroups of 65536 invocations"), std::string::npos) << msg;
  auto cpu = device_for(aot::Arch::Cpu);
  msg = error_of([&] { aot::LoadedModule l(m, *cpu, "vk.loommod"); });
  EXPECT_NE(msg.find("compiled for vulkan, not for the CPU"), std::string::npos) << msg;
}

// ---- the device layer (runtime/device), which modules share with the JIT Program

TEST(DeviceLayer, AModuleKernelLoadsLikeARecordOfTheSameCode) {
  aot::Module m = build_module(source("assets/graphs/heat.loom.json"), aot::Arch::Cpu);
  auto device = make_cpu_device(2);
  EXPECT_EQ(device->name(), "CPU, 2 threads");
  const aot::KernelInfo& k = m.meta.kernels.at(0);
  KernelRecord record;
  record.abi = k.abi;
  record.code = m.blobs.at(k.objects.at(0));
  std::shared_ptr<DeviceKernel> from_record = device->load(record);
  std::shared_ptr<DeviceKernel> from_module =
      aot::load_module_kernel(*device, m, 0, "heat.loommod");
  EXPECT_EQ(from_record->abi().name, k.name);
  EXPECT_EQ(from_module->abi().name, k.name);
  EXPECT_EQ(device->vulkan(), nullptr);
  EXPECT_EQ(device->vulkan_kernel(*from_module), nullptr);
}

TEST(DeviceLayer, EachDeviceRefusesTheOtherFormOfCode) {
  KernelABI abi;
  abi.name = "stray";
  auto cpu = make_cpu_device();
  std::string msg = error_of([&] { cpu->load_spirv(abi, SpirvKernel{}); });
  EXPECT_NE(msg.find("kernel 'stray' is SPIR-V; the CPU runs object code"), std::string::npos)
      << msg;
  LOOM_REQUIRE_VULKAN_OR_SKIP();
  auto gpu = make_vulkan_device({});
  msg = error_of([&] { gpu->load_object(abi, {}); });
  EXPECT_NE(msg.find("kernel 'stray' is CPU object code; a Vulkan device runs SPIR-V"),
            std::string::npos)
      << msg;
}

// ---- a fresh process: `loom compile -o`, then `loom-module run`, against `loom run`

int shell(const std::string& cmd) { return std::system((cmd + " > /dev/null 2>&1").c_str()); }

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

TEST(AotModuleProcess, CompiledModuleRunsInAFreshProcessLikeTheJit) {
  std::string dir = testing::TempDir() + "/loom_aot_process";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  struct Case {
    const char* doc;
    const char* resource;
  };
  for (const char* arch : {"cpu", "vulkan"}) {
    if (std::string(arch) == "vulkan") LOOM_REQUIRE_VULKAN_OR_SKIP();
    for (Case c : {Case{"heat", "temperature"}, Case{"mpm88", "x"}, Case{"julia", "image"}}) {
      std::string doc = source(std::string("assets/graphs/") + c.doc + ".loom.json");
      std::string mod = dir + "/" + c.doc + "_" + arch + ".loommod";
      std::string aot_npy = dir + "/" + c.doc + "_" + arch + "_aot.npy",
                  jit_npy = dir + "/" + c.doc + "_" + arch + "_jit.npy";
      // --cpu host: the JIT compiles for this machine's CPU too (build_module says why).
      std::string cpu = std::string(arch) == "cpu" ? " --cpu host" : "";
      ASSERT_EQ(
          shell(std::string(LOOM_CLI) + " compile " + doc + " --arch " + arch + cpu + " -o " + mod),
          0)
          << c.doc;
      ASSERT_EQ(shell(std::string(LOOM_MODULE_CLI) + " run " + mod + " --steps 5 --dump " +
                      c.resource + "=" + aot_npy),
                0)
          << c.doc;
      ASSERT_EQ(shell(std::string(LOOM_CLI) + " run " + doc + " --no-cache --backend " + arch +
                      " --steps 5 --dump " + c.resource + "=" + jit_npy),
                0)
          << c.doc;
      std::vector<uint8_t> a = file_bytes(aot_npy), j = file_bytes(jit_npy);
      EXPECT_FALSE(a.empty());
      size_t header = 0;  // the .npy header ends with the first newline
      while (header < a.size() && a[header] != '\n') ++header;
      EXPECT_TRUE(has_float_atomics(c.doc) ? same_f32(a, j, header + 1) : a == j)
          << c.doc << " on " << arch;
    }
  }
}

// A 0-d field in a module: its metadata says "shape": [], the runtime gives it one element,
// and `loom compile` then `loom-module run` accumulates into it as the JIT does.
TEST(AotModuleProcess, ZeroDimensionalFieldsCompileLoadAndRun) {
  std::string doc = source("tests/e2e/docs/zero_d_fields.loom.json");
  std::string dir = testing::TempDir() + "/loom_aot_zero_d_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (aot::Arch arch : {aot::Arch::Cpu, aot::Arch::Vulkan}) {
    if (arch == aot::Arch::Vulkan) LOOM_REQUIRE_VULKAN_OR_SKIP();
    aot::Module built = build_module(doc, arch);
    EXPECT_NE(aot::metadata_to_json(built.meta).find("\"shape\": []"), std::string::npos);
    auto device = device_for(arch);
    aot::LoadedModule loaded(aot::read_module_bytes(aot::write_module_archive(built), "z.loommod"),
                             *device, "z.loommod");
    ASSERT_NE(loaded.field("total"), nullptr);
    EXPECT_TRUE(loaded.field("total")->desc().shape.empty());
    EXPECT_EQ(loaded.field("total")->element_count(), 1);
    loaded.run_pipeline("init");
    loaded.run_pipeline("step");
    loaded.run_pipeline("step");
    std::vector<uint8_t> total = resource_bytes(loaded, "total");
    ASSERT_EQ(total.size(), 4u);
    float t;
    std::memcpy(&t, total.data(), 4);
    EXPECT_EQ(t, 0.5f + 2 * 499500.0f) << aot::arch_name(arch);

    std::string name = aot::arch_name(arch);
    std::string mod = dir + "/zero_d_" + name + ".loommod", npy = dir + "/count_" + name + ".npy";
    ASSERT_EQ(shell(std::string(LOOM_CLI) + " compile " + doc + " --arch " + name + " -o " + mod),
              0);
    ASSERT_EQ(
        shell(std::string(LOOM_MODULE_CLI) + " run " + mod + " --steps 3 --dump count=" + npy), 0);
    std::vector<uint8_t> bytes = file_bytes(npy);
    std::string text(bytes.begin(), bytes.end());
    EXPECT_NE(text.find("'shape': (), }"), std::string::npos) << name;
    ASSERT_GE(bytes.size(), 4u);
    int32_t count;
    std::memcpy(&count, bytes.data() + bytes.size() - 4, 4);
    EXPECT_EQ(count, 3000) << name;
  }
}

// The runtime that loads modules links neither the compiler nor LLVM.
TEST(AotModuleProcess, TheModuleRunnerLinksNoCompilerAndNoLlvm) {
  std::string out = testing::TempDir() + "/loom_module_links.txt";
  ASSERT_EQ(std::system(("readelf -d " + std::string(LOOM_MODULE_CLI) + " > " + out).c_str()), 0);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("NEEDED"), std::string::npos);
  EXPECT_EQ(text.find("libLLVM"), std::string::npos) << text;
  ASSERT_EQ(std::system(("nm -C " + std::string(LOOM_MODULE_CLI) + " > " + out).c_str()), 0);
  std::ifstream sym(out);
  std::string symbols((std::istreambuf_iterator<char>(sym)), std::istreambuf_iterator<char>());
  for (const char* ns :
       {"loom::codegen::", "loom::graph::", "loom::passes::", "loom::ir::", "llvm::"})
    EXPECT_EQ(symbols.find(ns), std::string::npos) << "loom-module contains " << ns << " code";
  EXPECT_NE(symbols.find("loom::aot::LoadedModule"), std::string::npos);
}

}  // namespace
}  // namespace loom

namespace loom {
namespace {

std::string capture(const std::string& cmd, int* code) {
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  int status = pclose(pipe);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(AotModuleProcess, CommandLineErrorsAreOneClearLine) {
  int code = 0;
  std::string doc = source("assets/graphs/heat.loom.json");
  std::string out = capture(std::string(LOOM_CLI) + " compile " + doc + " --arch vulkan", &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("give its file with -o FILE"), std::string::npos) << out;
  out =
      capture(std::string(LOOM_CLI) + " compile " + doc + " --arch metal -o /tmp/x.loommod", &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("--arch takes cpu or vulkan, not 'metal'"), std::string::npos) << out;

  std::string bad = testing::TempDir() + "/loom_bad.loommod";
  {
    std::ofstream f(bad, std::ios::binary);
    f << "LOOMMOD";
  }
  out = capture(std::string(LOOM_MODULE_CLI) + " run " + bad, &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("loom-module: " + bad), std::string::npos) << out;
  out = capture(std::string(LOOM_MODULE_CLI) + " info /nonexistent.loommod", &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("cannot open the module file"), std::string::npos) << out;
}

}  // namespace
}  // namespace loom

// ---- metadata.json against the text earlier builds wrote; the kernel fields in both forms

namespace loom {
namespace {

std::string golden_text(const std::string& name) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/tests/aot/data/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string metadata_error(const std::string& text) {
  try {
    aot::metadata_from_json(text, "edited.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// tests/aot/data holds what the hand-written metadata writer wrote before the field lists
// (runtime/common/abi_fields.h) replaced it: modules already written must read, and the same
// metadata must give the same text.
TEST(AotMetadata, TextMatchesWhatEarlierBuildsWrote) {
  for (aot::Arch arch : {aot::Arch::Cpu, aot::Arch::Vulkan}) {
    std::string golden = golden_text(std::string("metadata_") + aot::arch_name(arch) + ".json");
    ASSERT_FALSE(golden.empty()) << aot::arch_name(arch);
    EXPECT_EQ(aot::metadata_to_json(test::sample_metadata(arch)), golden);
    EXPECT_EQ(aot::metadata_to_json(aot::metadata_from_json(golden, "golden")), golden);
  }
}

// Property: random kernels survive the JSON form and equal what the binary form holds
// (the binary form holds every field of the lists; a module keeps the kernel's name on
// the kernel and its SPIR-V words in blobs).
TEST(AotMetadata, RandomKernelsRoundTripThroughJson) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    test::RandomAbi random(seed);
    aot::ModuleMetadata m = test::sample_metadata(aot::Arch::Vulkan);
    aot::KernelInfo& k = m.kernels.at(0);
    k.abi = random.kernel_abi();
    k.abi.name = k.name;
    k.spirv = random.spirv_kernel(k.abi.tasks.size());
    SpirvKernel words = k.spirv;
    k.spirv_blobs.clear();
    for (size_t t = 0; t < k.spirv.tasks.size(); ++t) {
      k.spirv.tasks[t].spirv.clear();
      k.spirv_blobs.push_back("t" + std::to_string(t) + ".spv");
    }

    aot::ModuleMetadata back = aot::metadata_from_json(aot::metadata_to_json(m), "random");
    const aot::KernelInfo& b = back.kernels.at(0);
    ASSERT_TRUE(serialize_kernel_record({b.abi, {}}) == serialize_kernel_record({k.abi, {}}))
        << "seed " << seed;
    EXPECT_EQ(b.spirv_blobs, k.spirv_blobs);
    SpirvKernel with_words = b.spirv;
    for (size_t t = 0; t < with_words.tasks.size(); ++t)
      with_words.tasks[t].spirv = words.tasks.at(t).spirv;
    ASSERT_TRUE(serialize_spirv_kernel(with_words) == serialize_spirv_kernel(words))
        << "seed " << seed;
  }
}

TEST(AotMetadata, KernelFieldsOutOfRangeAreNamed) {
  std::string golden = golden_text("metadata_vulkan.json");
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = golden;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
  };
  std::string msg = metadata_error(edited("\"kind\": \"sampler\"", "\"kind\": \"nearest\""));
  EXPECT_NE(msg.find("kernels[0].spirv.bindings[8].kind has an unknown value 'nearest'"),
            std::string::npos)
      << msg;
  msg = metadata_error(edited("\"param\": 2,", "\"param\": 9,"));
  EXPECT_NE(msg.find("kernels[0].abi.resources[2].param is out of range [-1, 4]"),
            std::string::npos)
      << msg;
  msg = metadata_error(edited("\"access\": [0, 2, 0, 0, 0, 0, 0, 0, 0]", "\"access\": [0, 2]"));
  EXPECT_NE(
      msg.find("kernels[0].spirv.tasks[0] has an access list that does not match the bindings"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("edited.json"), std::string::npos) << msg;
}

}  // namespace
}  // namespace loom
