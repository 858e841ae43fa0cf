// LoadedModule::run_pipeline given arguments by name (what the C ABI's
// loom_pipeline_launch_with runs on): the host's ndarrays and values in place of the module's
// in the launches that name them, the module's bindings kept for later runs, and the checks
// with their messages (pipeline, launch, kernel, parameter).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/loaded_module.h"
#include "runtime/common/error.h"
#include "runtime/device/device.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"

namespace loom {
namespace {

constexpr int kN = 16;

aot::Module cpu_module(const std::string& doc) {
  ProgramOptions po;
  po.backend = Backend::Cpu;
  po.offline_cache = false;
  Program program(po);
  program.load_file(std::string(LOOM_SOURCE_DIR) + "/" + doc);
  AotOptions ao;
  ao.arch = Backend::Cpu;
  ao.cpu_levels = {"host"};
  AotModule m(program, ao);
  m.add_document();
  return m.module();
}

template <typename F>
std::string error_of(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<float> floats(const host::Ndarray& n) {
  std::vector<float> v(static_cast<size_t>(n.shape()[0]));
  std::memcpy(v.data(), n.data(), v.size() * sizeof(float));
  return v;
}

// fill(x, base): x[i] = base + i; scale(x, y, k): y[i] = x[i] * k.
std::vector<float> filled(float base, float k = 1) {
  std::vector<float> v(kN);
  for (int i = 0; i < kN; ++i) v[static_cast<size_t>(i)] = (base + static_cast<float>(i)) * k;
  return v;
}

aot::PipelineArgument f32(float v) {
  return aot::PipelineArgument::value(ValueType{Scalar::F32, 1, 1}, &v);
}

TEST(PipelineArguments, TakeThePlaceOfTheModulesInTheLaunchesThatNameThem) {
  auto device = make_cpu_device();
  aot::LoadedModule m(cpu_module("tests/c_api/docs/pipeline_args.loom.json"), *device,
                      "pipeline_args");
  int step = m.find_pipeline("step");
  ASSERT_GE(step, 0);
  host::Ndarray mine(Scalar::F32, {kN}, 1, "mine");
  device->add_buffer("mine", mine.data(), mine.bytes(), false);

  m.run_pipeline(step, {{"x", aot::PipelineArgument::of(mine)}, {"base", f32(5)}, {"k", f32(-3)}});
  EXPECT_EQ(floats(mine), filled(5));
  EXPECT_EQ(floats(*m.ndarray("b")), filled(5, -3));
  EXPECT_EQ(floats(*m.ndarray("a")), filled(0, 0));
  m.run_pipeline(step);  // the module's bindings are as they were
  EXPECT_EQ(floats(*m.ndarray("a")), filled(1));
  EXPECT_EQ(floats(*m.ndarray("b")), filled(1, 2));
  EXPECT_EQ(floats(mine), filled(5));

  std::vector<aot::PipelineParam> params = m.pipeline_params(step);
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[0].name, "x");
  ASSERT_EQ(params[0].uses.size(), 2u);
  EXPECT_EQ(params[0].uses[1].launch, 1);
  EXPECT_EQ(params[0].uses[1].param, 0);
  EXPECT_EQ(params[2].name, "y");
  EXPECT_EQ(params[2].uses.at(0).launch, 1);
  EXPECT_EQ(params[2].uses.at(0).param, 1);
}

TEST(PipelineArguments, WrongOnesAreErrorsNamingThePipelineLaunchKernelAndParameter) {
  auto device = make_cpu_device();
  aot::LoadedModule m(cpu_module("tests/c_api/docs/pipeline_args.loom.json"), *device,
                      "pipeline_args");
  int step = m.find_pipeline("step");
  host::Ndarray mine(Scalar::F32, {kN}, 1, "mine");
  host::Ndarray ints(Scalar::I32, {kN}, 1, "ints");
  host::Ndarray grid(Scalar::F32, {kN, 2}, 1, "grid");
  host::Texture img(TextureFormat::RGBA8, 8, 4, "img");
  device->add_buffer("mine", mine.data(), mine.bytes(), false);
  device->add_buffer("ints", ints.data(), ints.bytes(), false);
  device->add_buffer("grid", grid.data(), grid.bytes(), false);
  auto of = [](const host::Ndarray& n) { return aot::PipelineArgument::of(n); };

  std::string e = error_of([&] { m.run_pipeline(step, {{"x", of(mine)}, {"z", f32(1)}}); });
  EXPECT_NE(e.find("pipeline 'step' takes no argument 'z'; its launches take: x, base, y, k"),
            std::string::npos)
      << e;
  e = error_of([&] { m.run_pipeline(step, {{"x", of(ints)}}); });
  EXPECT_NE(e.find("pipeline 'step', launch 0 (kernel 'fill'): parameter 'x' takes an ndarray "
                   "of f32 with 1 dimension(s), given one of i32 with 1"),
            std::string::npos)
      << e;
  e = error_of([&] { m.run_pipeline(step, {{"y", of(grid)}}); });
  EXPECT_NE(e.find("launch 1 (kernel 'scale'): parameter 'y'"), std::string::npos) << e;
  e = error_of([&] {
    double k = 2;
    m.run_pipeline(step, {{"k", aot::PipelineArgument::value(ValueType{Scalar::F64, 1, 1}, &k)}});
  });
  EXPECT_NE(e.find("launch 1 (kernel 'scale'): parameter 'k' is a f32, given a f64"),
            std::string::npos)
      << e;
  e = error_of([&] { m.run_pipeline(step, {{"base", aot::PipelineArgument::of(img)}}); });
  EXPECT_NE(e.find("parameter 'base' takes a value, given a texture"), std::string::npos) << e;
  e = error_of([&] {
    m.run_pipeline(m.find_pipeline("paint"), {{"img", aot::PipelineArgument::of(img)}});
  });
  EXPECT_NE(e.find("parameter 'img' takes a texture of format rgba32f, given rgba8"),
            std::string::npos)
      << e;
  // Checked before anything ran: fill did not write the host's ndarray.
  e = error_of([&] { m.run_pipeline(step, {{"x", of(mine)}, {"y", of(grid)}}); });
  EXPECT_FALSE(e.empty());
  EXPECT_EQ(floats(mine), filled(0, 0));
}

TEST(PipelineArguments, ThePipelinesInstantiationsAndTemplateArgumentsAreFixed) {
  auto device = make_cpu_device();
  // open_ndarray's `init` launches iota for i32 ndarrays, then for f32 ones.
  aot::LoadedModule open(cpu_module("tests/e2e/docs/open_ndarray.loom.json"), *device, "open");
  host::Ndarray ints(Scalar::I32, {kN}, 1, "ints");
  device->add_buffer("ints", ints.data(), ints.bytes(), false);
  std::string e = error_of([&] {
    open.run_pipeline("init", {{"arr", aot::PipelineArgument::of(ints)}});
  });
  EXPECT_NE(e.find("launch 1 (kernel 'iota'): parameter 'arr' takes an ndarray of f32"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("the pipeline launches the instantiation (arr=ndarray f32/1d): it cannot "
                   "pick another at launch"),
            std::string::npos)
      << e;

  aot::LoadedModule heat(cpu_module("assets/graphs/heat.loom.json"), *device, "heat");
  e = error_of([&] { heat.run_pipeline("step", {{"src", f32(1)}}); });
  EXPECT_NE(e.find("launch 0 (kernel 'diffuse'): 'src' is a template parameter"), std::string::npos)
      << e;
  EXPECT_NE(e.find("(src=field temperature); a pipeline cannot change it at launch"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace loom
