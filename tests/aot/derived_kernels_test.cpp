// Adjoint and tangent kernels (K.grad, K.dual) in AOT modules: what a module built from a
// document with gradient steps holds, its metadata written and read back, a gradient-descent
// pipeline run from it against the JIT on both archs, and hostile `derived` entries refused
// with the key path and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"
#include "runtime/device/device.h"
#include "runtime/host/field.h"
#include "runtime/host/ndarray.h"
#include "tests/support/vulkan_required.h"

namespace loom {
namespace {

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

// A descent of w (x - t)^2 with an init pipeline, so a run needs no data from outside.
std::string descent_doc() { return source("tests/c_api/docs/gradient_descent.loom.json"); }

// An argpack holding ndarrays directly, in a struct and through a nested pack, with a
// `backward` pipeline running energy.grad and advance.grad.
std::string argpack_ndarray_doc() {
  return source("tests/e2e/docs/argpack_ndarray_adjoint.loom.json");
}

Backend backend_of(aot::Arch arch) {
  return arch == aot::Arch::Vulkan ? Backend::Vulkan : Backend::Cpu;
}

aot::Module build(const std::string& doc, aot::Arch arch,
                  const std::vector<std::string>& kernels = {}) {
  ProgramOptions po;
  po.offline_cache = false;
  Program program(po);
  program.load_file(doc);
  AotOptions ao;
  ao.arch = backend_of(arch);
  ao.cpu_levels = {"host"};  // compared with the JIT, which compiles for this CPU
  AotModule m(program, ao);
  m.add_document();
  for (const std::string& k : kernels) m.add_kernel(k);
  return m.module();
}

const aot::KernelInfo* kernel_named(const aot::ModuleMetadata& m, const std::string& name) {
  for (const aot::KernelInfo& k : m.kernels)
    if (k.name == name) return &k;
  return nullptr;
}

// "x.grad<-x"; a twin of an argpack's ndarray "b.pos.grad<-b:pos".
std::vector<std::string> twin_pairs(const aot::KernelInfo& k) {
  std::vector<std::string> out;
  for (const aot::Derivation::Twin& t : k.derived.twins)
    out.push_back(k.abi.params.at(static_cast<size_t>(t.param)).name + "<-" +
                  k.abi.params.at(static_cast<size_t>(t.of)).name +
                  (t.member.empty() ? "" : ":" + t.member));
  return out;
}

bool has_resource(const aot::ModuleMetadata& m, const std::string& name) {
  for (const FieldDesc& f : m.fields)
    if (f.name == name) return true;
  for (const aot::NdarrayInfo& n : m.ndarrays)
    if (n.name == name) return true;
  return false;
}

// A pipeline's K.grad is compiled with the twins its launch binds, K beside it, and the
// companions are resources of the module; the launch binds x.grad to xs.grad.
TEST(DerivedKernels, AModuleHoldsThePipelinesAdjointsAndTheirCompanions) {
  for (aot::Arch arch : {aot::Arch::Cpu, aot::Arch::Vulkan}) {
    SCOPED_TRACE(aot::arch_name(arch));
    aot::Module m = build(descent_doc(), arch);
    const aot::KernelInfo* grad = kernel_named(m.meta, "distance.grad");
    ASSERT_NE(grad, nullptr);
    ASSERT_NE(kernel_named(m.meta, "distance"), nullptr);
    EXPECT_EQ(grad->derived.mode, aot::Derivation::Mode::Adjoint);
    EXPECT_EQ(grad->derived.of, "distance");
    // ts has no adjoint: t gets no twin, as Program::launch binds it.
    EXPECT_EQ(twin_pairs(*grad), std::vector<std::string>{"x.grad<-x"});
    EXPECT_EQ(grad->return_names, std::vector<std::string>{"w"});  // d loss / d w
    for (const char* r : {"loss.grad", "loss.dual", "xs.grad", "xs.dual", "ts.dual"})
      EXPECT_TRUE(has_resource(m.meta, r)) << r;
    EXPECT_FALSE(has_resource(m.meta, "ts.grad"));
    const aot::PipelineInfo* step = nullptr;
    for (const aot::PipelineInfo& p : m.meta.pipelines)
      if (p.name == "step") step = &p;
    ASSERT_NE(step, nullptr);
    const aot::LaunchInfo& l = step->launches.at(3);
    EXPECT_EQ(m.meta.kernels.at(static_cast<size_t>(l.kernel)).name, "distance.grad");
    bool twin_bound = false;
    for (const auto& [param, value] : l.args)
      twin_bound |= param == "x.grad" && value.resource == "xs.grad";
    EXPECT_TRUE(twin_bound);
  }
}

// An adjoint returns the gradients of the argpack's float members too (gradient_values.h),
// named by the kernel's parameter and the member's path, in layout order; what loom.h's
// loom_kernel_get_return_named finds them by.
TEST(DerivedKernels, AnAdjointNamesTheArgpackMembersItReturns) {
  for (aot::Arch arch : {aot::Arch::Cpu, aot::Arch::Vulkan}) {
    SCOPED_TRACE(aot::arch_name(arch));
    aot::Module m =
        build(source("tests/e2e/docs/argpack_gradient.loom.json"), arch, {"drift.grad"});
    const aot::KernelInfo* grad = kernel_named(m.meta, "drift.grad");
    ASSERT_NE(grad, nullptr);
    EXPECT_EQ(grad->return_names, (std::vector<std::string>{"w.gravity", "w.wind", "w.shape.k",
                                                            "w.shape.m", "w.inner.drag", "dt"}));
    ASSERT_EQ(grad->abi.returns.size(), 6u);
    EXPECT_EQ(grad->abi.returns[3].components(), 4);  // the 2x2 matrix
    aot::ModuleMetadata back = aot::metadata_from_json(aot::metadata_to_json(m.meta), "a");
    EXPECT_EQ(kernel_named(back, "drift.grad")->return_names, grad->return_names);
  }
}

// K.dual with a tangent argpack: its twin `w.dual` is an argpack parameter of w's type, and
// the module's metadata reads back with it (the reader checks a twin's kind and argpack type).
TEST(DerivedKernels, ATangentArgpackIsATwinOfItsArgpack) {
  ProgramOptions po;
  po.offline_cache = false;
  Program program(po);
  program.load_file(source("tests/e2e/docs/argpack_gradient.loom.json"));
  AotModule m(program, {});
  m.add_kernel("drift.dual", {{"w", "world"}, {"dt", 0.1}, {"w.dual", "direction"}});
  aot::Module module = m.module();
  const aot::KernelInfo* dual = kernel_named(module.meta, "drift.dual");
  ASSERT_NE(dual, nullptr);
  EXPECT_EQ(twin_pairs(*dual), (std::vector<std::string>{"w.dual<-w", "dt.dual<-dt"}));
  const ParamDesc& twin = dual->abi.params.at(2);
  EXPECT_EQ(twin.kind, ParamKind::Argpack);
  EXPECT_EQ(twin.argpack_type, dual->abi.params.at(0).argpack_type);
  std::string json = aot::metadata_to_json(module.meta);
  EXPECT_EQ(aot::metadata_to_json(aot::metadata_from_json(json, "a")), json);

  // A hostile module whose twin is an argpack of another type is refused, naming both.
  size_t twin_at = json.find("\"name\": \"w.dual\"");
  ASSERT_NE(twin_at, std::string::npos) << json;
  size_t type_at = json.find("\"argpack_type\": ", twin_at);
  ASSERT_NE(type_at, std::string::npos);
  type_at += std::string("\"argpack_type\": ").size();
  size_t end = json.find_first_not_of("0123456789", type_at);
  std::string hostile = json;
  hostile.replace(type_at, end - type_at, "1");  // Inner, not World
  try {
    aot::metadata_from_json(hostile, "a");
    FAIL() << "a twin of another argpack type was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'w.dual' is an argpack of type 1, 'w' of type 2"),
              std::string::npos)
        << e.what();
  }
}

// The twins of the ndarrays an argpack holds (PARAM.PATH.grad) are twins of the argpack
// parameter with the member's path, in the metadata too (format version 3, read back as
// written); asked for by name, K.grad gets one per float ndarray member. A hostile `member`
// is refused naming the member and the type.
TEST(DerivedKernels, TheNdarraysOfAnArgpackHaveTwinsByMemberPath) {
  aot::Module module = build(argpack_ndarray_doc(), aot::Arch::Cpu, {"advance.grad"});
  const aot::KernelInfo* energy = kernel_named(module.meta, "energy.grad");
  const aot::KernelInfo* advance = kernel_named(module.meta, "advance.grad");
  ASSERT_TRUE(energy && advance);
  // In slot order; energy reads no coefficient, so b.lens.c has no twin there.
  EXPECT_EQ(twin_pairs(*energy),
            (std::vector<std::string>{"b.pos.grad<-b:pos", "b.inner.w.grad<-b:inner.w"}));
  EXPECT_EQ(twin_pairs(*advance),
            (std::vector<std::string>{"b.pos.grad<-b:pos", "b.inner.w.grad<-b:inner.w",
                                      "b.lens.c.grad<-b:lens.c"}));
  // The adjoint names what it touches as the kernel does: the pack's members by path.
  std::vector<std::string> touched;
  for (const ResourceAccess& a : energy->abi.resource_access) touched.push_back(a.name);
  EXPECT_NE(std::find(touched.begin(), touched.end(), "b.pos"), touched.end());
  for (const std::string& name : touched) EXPECT_EQ(name.find('@'), std::string::npos) << name;
  EXPECT_EQ(aot::module_format_version(module.meta), 3);
  std::string json = aot::metadata_to_json(module.meta);
  EXPECT_EQ(aot::metadata_to_json(aot::metadata_from_json(json, "a")), json);
  auto error_of = [&](const std::string& from, const std::string& to) {
    std::string hostile = json;
    size_t at = hostile.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at == std::string::npos) return std::string();
    hostile.replace(at, from.size(), to);
    try {
      aot::metadata_from_json(hostile, "a");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::string e = error_of("\"member\": \"pos\"", "\"member\": \"k\"");
  EXPECT_NE(e.find("is 'k', which is no float ndarray member of argpack type 'Body'"),
            std::string::npos)
      << e;
  e = error_of("\"member\": \"inner.w\"", "\"member\": \"pos\"");
  EXPECT_NE(e.find("is 'b.inner.w.grad'; the twin of 'b.pos' is 'b.pos.grad'"), std::string::npos)
      << e;
}

// --kernel K.dual (AotModule::add_kernel without example arguments): a twin for every float
// ndarray parameter and every float value parameter; K.grad asked for again takes the one
// the pipeline compiled.
TEST(DerivedKernels, KernelsAskedForByNameGetEveryTwin) {
  aot::Module m = build(descent_doc(), aot::Arch::Cpu, {"distance.dual", "distance.grad"});
  const aot::KernelInfo* dual = kernel_named(m.meta, "distance.dual");
  ASSERT_NE(dual, nullptr);
  EXPECT_EQ(dual->derived.mode, aot::Derivation::Mode::Tangent);
  EXPECT_EQ(twin_pairs(*dual), (std::vector<std::string>{"w.dual<-w", "x.dual<-x", "t.dual<-t"}));
  int grads = 0;
  for (const aot::KernelInfo& k : m.meta.kernels) grads += k.name == "distance.grad";
  EXPECT_EQ(grads, 1);
}

// Two launches of K.grad with the same template arguments and other twins cannot share one
// instantiation: the error names both sets.
TEST(DerivedKernels, OneInstantiationHasOneSetOfTwins) {
  ProgramOptions po;
  po.offline_cache = false;
  Program program(po);
  program.load_file(descent_doc());
  AotModule m(program, {});
  m.add_kernel("distance.grad", {{"x", "xs"}, {"t", "ts"}});
  try {
    m.add_kernel("distance.grad", {{"x", "xs"}, {"t", "ts"}, {"t.grad", "xs.grad"}});
    FAIL() << "two sets of twins were accepted";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("x, t, w, x.grad, t.grad"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x, t, w, x.grad)"), std::string::npos) << msg;
  }
}

// The metadata of derived kernels reads back as written, byte for byte.
TEST(DerivedKernels, MetadataRoundTrips) {
  for (aot::Arch arch : {aot::Arch::Cpu, aot::Arch::Vulkan}) {
    aot::Module m = build(descent_doc(), arch, {"distance.dual"});
    std::string json = aot::metadata_to_json(m.meta);
    EXPECT_NE(json.find("\"derived\""), std::string::npos);
    aot::ModuleMetadata back = aot::metadata_from_json(json, "descent.loommod");
    EXPECT_EQ(aot::metadata_to_json(back), json);
    const aot::KernelInfo* grad = kernel_named(back, "distance.grad");
    ASSERT_NE(grad, nullptr);
    EXPECT_EQ(twin_pairs(*grad), std::vector<std::string>{"x.grad<-x"});
    // Through the archive too.
    std::vector<uint8_t> archive = aot::write_module_archive(m);
    EXPECT_EQ(aot::write_module_archive(aot::read_module_bytes(archive, "a")), archive);
  }
}

std::unique_ptr<Device> device_for(aot::Arch arch) {
  if (arch == aot::Arch::Cpu) return make_cpu_device();
  return make_vulkan_device({});
}

std::vector<float> floats(const uint8_t* data, size_t bytes) {
  std::vector<float> v(bytes / 4);
  std::memcpy(v.data(), data, v.size() * 4);
  return v;
}

class DerivedKernelsRun : public testing::TestWithParam<aot::Arch> {};

// init and five gradient steps from the module equal the JIT's (the loss is summed with
// float atomics, whose order varies: compared with a tolerance).
TEST_P(DerivedKernelsRun, GradientDescentFromAModuleMatchesTheJit) {
  aot::Arch arch = GetParam();
  if (arch == aot::Arch::Vulkan) LOOM_REQUIRE_VULKAN_OR_SKIP();
  auto device = device_for(arch);
  aot::LoadedModule loaded(
      aot::read_module_bytes(aot::write_module_archive(build(descent_doc(), arch)), "d.loommod"),
      *device, "d.loommod");
  ProgramOptions po;
  po.backend = backend_of(arch);
  po.offline_cache = false;
  Program jit(po);
  jit.load_file(descent_doc());
  jit.run_pipeline("init");
  loaded.run_pipeline("init");
  for (int s = 0; s < 5; ++s) {
    jit.run_pipeline("step");
    loaded.run_pipeline("step");
  }
  jit.synchronize();
  for (const char* name : {"xs", "xs.grad", "loss", "loss.grad"}) {
    SCOPED_TRACE(name);
    ArrayView want = jit.array(name);
    const uint8_t* data = nullptr;
    size_t bytes = 0;
    if (host::Field* f = loaded.field(name))
      data = f->data(), bytes = f->bytes();
    else if (host::Ndarray* n = loaded.ndarray(name))
      data = n->data(), bytes = n->bytes();
    ASSERT_NE(data, nullptr);
    loaded.device().read_back(data);
    ASSERT_EQ(bytes, want.bytes);
    std::vector<float> got = floats(data, bytes), expect = floats(want.data, want.bytes);
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], expect[i], 1e-4f * std::max(1.0f, std::fabs(expect[i]))) << i;
  }
  // The descent moved xs toward ts: the gradient was applied, not zero.
  std::vector<float> xs = floats(jit.array("xs").data, jit.array("xs").bytes);
  EXPECT_NE(xs[0], 0.0f);
}

// The backward pipeline of argpack_ndarray_adjoint from the module (its K.grad launches
// binding the twins of the pack's ndarrays to pos.grad, coef.grad and weights.grad) equals the
// JIT's, and moves every one of them.
TEST_P(DerivedKernelsRun, ArgpackNdarrayGradientsFromAModuleMatchTheJit) {
  aot::Arch arch = GetParam();
  if (arch == aot::Arch::Vulkan) LOOM_REQUIRE_VULKAN_OR_SKIP();
  auto device = device_for(arch);
  aot::LoadedModule loaded(
      aot::read_module_bytes(aot::write_module_archive(build(argpack_ndarray_doc(), arch)),
                             "a.loommod"),
      *device, "a.loommod");
  ProgramOptions po;
  po.backend = backend_of(arch);
  po.offline_cache = false;
  Program jit(po);
  jit.load_file(argpack_ndarray_doc());
  for (const char* pipeline : {"init", "step", "step", "backward"}) {
    jit.run_pipeline(pipeline);
    loaded.run_pipeline(pipeline);
  }
  jit.synchronize();
  for (const char* name : {"pos.grad", "coef.grad", "weights.grad"}) {
    SCOPED_TRACE(name);
    ArrayView want = jit.array(name);
    host::Ndarray* n = loaded.ndarray(name);
    ASSERT_NE(n, nullptr);
    loaded.device().read_back(n->data());
    ASSERT_EQ(n->bytes(), want.bytes);
    std::vector<float> got = floats(n->data(), n->bytes()), expect = floats(want.data, want.bytes);
    double largest = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expect[i], 1e-4f * std::max(1.0f, std::fabs(expect[i]))) << i;
      largest = std::max(largest, static_cast<double>(std::fabs(expect[i])));
    }
    EXPECT_GT(largest, 1e-2);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, DerivedKernelsRun,
                         testing::Values(aot::Arch::Cpu, aot::Arch::Vulkan),
                         [](const testing::TestParamInfo<aot::Arch>& i) {
                           return std::string(aot::arch_name(i.param));
                         });

// A twin of another shape than its parameter's ndarray is refused before anything runs, also
// where the module records no extents to check (--debug modules check accesses instead).
TEST(DerivedKernels, ATwinOfAnotherShapeIsRefusedAtLaunch) {
  ProgramOptions po;
  po.offline_cache = false;
  po.debug = true;
  Program program(po);
  program.load_file(descent_doc());
  AotModule builder(program, {});
  builder.add_document();
  auto device = make_cpu_device();
  aot::LoadedModule loaded(builder.module(), *device, "d.loommod");
  host::Ndarray shorter(Scalar::F32, {8});
  aot::PipelineArguments args;
  args.emplace("x.grad", aot::PipelineArgument::of(shorter));
  try {
    loaded.run_pipeline("step", args);
    FAIL() << "a twin of 8 elements for 64 was accepted";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("distance.grad"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the ndarray given for 'x.grad' has the shape [8], the one given for 'x' "
                       "[64]"),
              std::string::npos)
        << msg;
  }
}

// A debug module checks the global data access rule across loops as the JIT does: a debug
// adjoint's shadows (NAME.written) are fields of the module or its last parameters, which the
// module binds at each launch to shadows of the ndarrays the launch gives (through a parameter
// or an argpack); a launcher never gives them. A violation fails the launch naming both nodes.
TEST_P(DerivedKernelsRun, ADebugModuleChecksTheAccessRuleAcrossLoops) {
  aot::Arch arch = GetParam();
  if (arch == aot::Arch::Vulkan) LOOM_REQUIRE_VULKAN_OR_SKIP();
  ProgramOptions po;
  po.offline_cache = false;
  po.debug = true;
  Program program(po);
  program.load_file(source("tests/e2e/docs/autodiff_access_across_loops.loom.json"));
  AotOptions ao;
  ao.arch = backend_of(arch);
  ao.cpu_levels = {"host"};
  AotModule builder(program, ao);
  builder.add_document();
  aot::Module built = builder.module();
  const aot::KernelInfo* nd = kernel_named(built.meta, "nd_scatter_then_read.grad");
  ASSERT_NE(nd, nullptr);
  ASSERT_EQ(nd->derived.shadows.size(), 1u);
  EXPECT_EQ(nd->abi.params.at(static_cast<size_t>(nd->derived.shadows[0].param)).name, "y.written");
  EXPECT_EQ(aot::launch_param_count(*nd), nd->abi.params.size() - 1);  // y, y.grad
  const aot::KernelInfo* pack = kernel_named(built.meta, "pack_scatter_then_read.grad");
  ASSERT_TRUE(pack && pack->derived.shadows.size() == 1u);
  EXPECT_EQ(pack->derived.shadows[0].member, "y");
  EXPECT_TRUE(has_resource(built.meta, "y.written"));  // the field y's shadow
  EXPECT_EQ(aot::module_format_version(built.meta), 3);
  std::string json = aot::metadata_to_json(built.meta);
  EXPECT_EQ(aot::metadata_to_json(aot::metadata_from_json(json, "a")), json);
  // Hostile shadows: of a twin, out of place, of an argpack member of no argpack, of another
  // element type. `from` is replaced at its first place after `after` (pretty-printed JSON).
  auto refused = [&](const std::string& after, const std::string& from, const std::string& to) {
    std::string hostile = json;
    size_t at = hostile.find(from, hostile.find(after));
    if (at == std::string::npos) return "not found: " + from;
    hostile.replace(at, from.size(), to);
    try {
      aot::metadata_from_json(hostile, "a");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string shadows = "\"shadows\"";
  EXPECT_NE(refused(shadows, "\"of\": \"y\"", "\"of\": \"y.grad\"")
                .find("names 'y.grad', which is a twin or a shadow itself"),
            std::string::npos);
  EXPECT_NE(refused(shadows, "\"param\": \"y.written\"", "\"param\": \"y.grad\"")
                .find("shadows are its last parameters"),
            std::string::npos);
  EXPECT_NE(refused(shadows, "\"of\": \"y\"", "\"of\": \"y\", \"member\": \"y\"")
                .find("names a member of 'y', which is no argpack"),
            std::string::npos);
  size_t param = json.find("\"name\": \"y.written\"", json.find("nd_scatter_then_read.grad"));
  ASSERT_NE(param, std::string::npos);
  EXPECT_NE(refused(json.substr(param, 40), "\"type\": \"i32\"", "\"type\": \"f32\"")
                .find("'y.written' is not an ndarray of i32 elements"),
            std::string::npos);

  auto device = device_for(arch);
  aot::LoadedModule loaded(
      aot::read_module_bytes(aot::write_module_archive(std::move(built)), "d.loommod"), *device,
      "d.loommod");
  auto error_of = [&](const std::string& pipeline) {
    try {
      loaded.run_pipeline(pipeline);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("fine"), "");
  std::string e = error_of("field_check");
  EXPECT_NE(e.find("node 8 reads y[i0] after node 6 (in an earlier loop) wrote it"),
            std::string::npos)
      << e;
  e = error_of("ndarray_check");
  EXPECT_NE(e.find("node 8 reads y[...] after node 5 (in an earlier loop) wrote it"),
            std::string::npos)
      << e;
  e = error_of("member_check");
  EXPECT_NE(e.find("node 8 reads p.y[...] after node 5 (in an earlier loop) wrote it"),
            std::string::npos)
      << e;
}

// `edit` applied to the metadata of the descent module must make reading it fail with every
// one of `parts` in the message.
void expect_refused(const std::string& from, const std::string& to,
                    const std::vector<std::string>& parts) {
  std::string json = aot::metadata_to_json(build(descent_doc(), aot::Arch::Cpu).meta);
  size_t at = json.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  json.replace(at, from.size(), to);
  try {
    aot::metadata_from_json(json, "descent.loommod");
    FAIL() << "accepted: " << to;
  } catch (const Error& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(DerivedKernels, HostileDerivedEntriesAreClearErrors) {
  // An adjoint of a kernel the module lacks.
  expect_refused("\"name\": \"distance.grad\"", "\"name\": \"gone.grad\"",
                 {"descent.loommod", "derived.of", "is 'distance'; kernel 'gone.grad'"});
  expect_refused("\"of\": \"distance\"", "\"of\": \"dist\"",
                 {"derived.of", "kernel 'distance.grad' is not 'dist.grad'"});
  // A twin bound to the wrong parameter, to no parameter, of the wrong kind.
  expect_refused("\"of\": \"x\"", "\"of\": \"t\"",
                 {"derived.twins[0].param", "the twin of 't' is 't.grad'"});
  expect_refused("\"of\": \"x\"", "\"of\": \"nothing\"",
                 {"derived.twins[0].of", "names 'nothing', which is no parameter"});
  expect_refused("\"of\": \"x\"", "\"of\": \"w\"", {"derived.twins[0]"});
  expect_refused("\"mode\": \"grad\"", "\"mode\": \"hessian\"",
                 {"derived.mode", "unknown value 'hessian'"});
  expect_refused("\"param\": \"x.grad\"", "\"param\": \"x\"",
                 {"derived.twins[0].param", "twins are its last parameters"});
}

// A module whose primal is gone: the adjoint names a kernel the module lacks.
TEST(DerivedKernels, AnAdjointWithoutItsKernelIsRefused) {
  aot::Module m = build(descent_doc(), aot::Arch::Cpu);
  for (aot::KernelInfo& k : m.meta.kernels)
    if (k.name == "distance") k.name = "renamed";
  try {
    aot::metadata_from_json(aot::metadata_to_json(m.meta), "descent.loommod");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("names kernel 'distance', which the module lacks"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace loom
