// The CPU runtime: storage, argpacks, launch frames and object loading.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

#include "compiler/codegen_llvm/cpu_codegen.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/verifier.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/cpu/job_system.h"
#include "runtime/cpu/perf_map.h"
#include "runtime/host/argpack.h"
#include "runtime/host/field.h"
#include "runtime/host/launch_frame.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"
#include "tests/runtime/counting_kernel.h"

using namespace loom;
using loom::ir::Builder;
using loom::ir::Inst;
using loom::ir::Op;

TEST(Storage, FieldLayoutsAndViews) {
  host::Field aos(FieldDesc{"p", {Scalar::F32, 3, 1}, {4, 5}, Layout::AoS});
  host::Field soa(FieldDesc{"q", {Scalar::F32, 3, 1}, {4, 5}, Layout::SoA});
  EXPECT_EQ(aos.element_count(), 20);
  EXPECT_EQ(aos.bytes(), 20u * 3 * 4);
  EXPECT_EQ(aos.scalar_index(7, 2), 7 * 3 + 2);
  EXPECT_EQ(soa.scalar_index(7, 2), 2 * 20 + 7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aos.data()) % 64, 0u);
  for (size_t i = 0; i < aos.bytes(); ++i) ASSERT_EQ(aos.data()[i], 0);
  ResourceView v = aos.view();
  EXPECT_EQ(v.data, aos.data());
  EXPECT_EQ(v.shape[0], 4);
  EXPECT_EQ(v.shape[1], 5);
  EXPECT_THROW(host::Field(FieldDesc{"bad", {Scalar::F32}, {1, 1, 1, 1, 1}, Layout::AoS}), Error);
}

TEST(Storage, NdarrayOwningAndWrapping) {
  host::Ndarray owned(Scalar::I16, {3, 4}, 2);
  EXPECT_TRUE(owned.owns_memory());
  EXPECT_EQ(owned.bytes(), 3u * 4 * 2 * 2);
  std::vector<double> mine(6, 1.5);
  host::Ndarray wrapped(mine.data(), Scalar::F64, {6});
  EXPECT_FALSE(wrapped.owns_memory());
  EXPECT_EQ(wrapped.view().data, reinterpret_cast<uint8_t*>(mine.data()));
  EXPECT_EQ(wrapped.view().shape[0], 6);
  EXPECT_THROW(host::Ndarray(Scalar::F32, {}), Error);
}

TEST(Storage, TextureTexelsRoundTrip) {
  host::Texture t(TextureFormat::RGBA8, 3, 2);
  t.write(2, 1, 0, {1.0f, 0.5f, 0.0f, 2.0f});
  auto px = t.read(2, 1);
  EXPECT_FLOAT_EQ(px[0], 1.0f);
  EXPECT_NEAR(px[1], 0.5f, 1.0f / 255);
  EXPECT_FLOAT_EQ(px[3], 1.0f);
  host::Texture r(TextureFormat::R32F, 2, 2, 2);
  EXPECT_EQ(r.ndim(), 3);
  r.write(1, 1, 1, {7, 8, 9, 10});
  auto rv = r.read(1, 1, 1);
  EXPECT_EQ(rv[0], 7.0f);
  EXPECT_EQ(rv[1], 0.0f);
  EXPECT_EQ(rv[3], 1.0f);
  EXPECT_EQ(r.view().shape[2], 2);
  EXPECT_THROW(r.read(2, 0, 0), Error);
}

namespace {
// Runs `make` and returns the loom::Error message it throws ("" when it throws none).
template <typename F>
std::string error_of(F make) {
  try {
    make();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
}  // namespace

// Kernels index with 32-bit integers: {2^32 + 7} used to read back as 7 in a kernel and
// {2^31 + 7} as a negative extent.
TEST(Storage, ExtentsOutsideInt32AreErrorsNamingTheResource) {
  std::vector<float> mine(8);
  for (int64_t n : {(int64_t{1} << 32) + 7, (int64_t{1} << 31) + 7, int64_t{-3}}) {
    std::string e = error_of([&] { host::Ndarray(Scalar::F32, {4, n}, 1, "big"); });
    EXPECT_TRUE(has(e, "ndarray 'big'") && has(e, std::to_string(n)) && has(e, "dimension 1")) << e;
    e = error_of([&] { host::Ndarray(mine.data(), Scalar::F32, {n}, 1, "wrapped"); });
    EXPECT_TRUE(has(e, "ndarray 'wrapped'") && has(e, std::to_string(n))) << e;
    e = error_of([&] { host::Field(FieldDesc{"rho", {Scalar::F32}, {n}, Layout::AoS}); });
    EXPECT_TRUE(has(e, "field 'rho'") && has(e, std::to_string(n))) << e;
    e = error_of([&] { host::Texture(TextureFormat::R32F, 2, n, "img"); });
    EXPECT_TRUE(has(e, "texture 'img'") && has(e, std::to_string(n))) << e;
  }
  // The largest extent is fine when no memory is needed for it.
  host::Ndarray edge(mine.data(), Scalar::U8, {INT32_MAX});
  EXPECT_EQ(edge.view().shape[0], INT32_MAX);
  EXPECT_TRUE(
      has(error_of([] { host::Ndarray(nullptr, Scalar::F32, {4}, 1, "w"); }), "null pointer"));
}

// A failed allocation used to leave a null buffer behind (a crash in the first launch), and
// element-count products could wrap around.
TEST(Storage, AllocationFailureAndSizeOverflowAreErrorsNamingTheResourceAndBytes) {
  const int64_t g = int64_t{1} << 30;  // [2^30, 2^30] of f32: 2^62 bytes, beyond any address space
  std::string e = error_of([&] {
    host::Field(FieldDesc{"huge", {Scalar::F32}, {g, g}, Layout::AoS});
  });
  EXPECT_TRUE(has(e, "field 'huge'") && has(e, "4611686018427387904 bytes")) << e;
  e = error_of([&] { host::Ndarray(Scalar::F32, {g, g}, 1, "nd"); });
  EXPECT_TRUE(has(e, "ndarray 'nd'") && has(e, "4611686018427387904 bytes")) << e;
  e = error_of([&] { host::Texture(TextureFormat::RGBA32F, g, g, "tex"); });
  EXPECT_TRUE(has(e, "texture 'tex'") && has(e, "bytes")) << e;
  // Products past 63 bits.
  e = error_of([] {
    host::Field(FieldDesc{"wide", {Scalar::F32}, {INT32_MAX, INT32_MAX, INT32_MAX}, Layout::AoS});
  });
  EXPECT_TRUE(has(e, "field 'wide'") && has(e, "elements")) << e;
  e = error_of([] { host::Ndarray(Scalar::F64, {INT32_MAX, INT32_MAX}, 4, "vec"); });
  EXPECT_TRUE(has(e, "ndarray 'vec'") && has(e, "bytes")) << e;
  e = error_of(
      [] { host::Texture(TextureFormat::RGBA32F, INT32_MAX, INT32_MAX, INT32_MAX, "vol"); });
  EXPECT_TRUE(has(e, "texture 'vol'")) << e;
  e = error_of([] { host::AlignedBuffer(SIZE_MAX, "scratch"); });
  EXPECT_TRUE(has(e, "scratch") && has(e, std::to_string(SIZE_MAX) + " bytes")) << e;
  // Empty storage is fine and still has an aligned address.
  host::Ndarray empty(Scalar::F32, {0, 5});
  EXPECT_EQ(empty.bytes(), 0u);
  EXPECT_NE(empty.data(), nullptr);
}

// A 3-d texture of depth 1 used to report 2 dimensions and could not be bound to a 3-d
// texture parameter.
TEST(Storage, ThreeDimensionalTextureOfDepthOneStaysThreeDimensional) {
  host::Texture flat(TextureFormat::RGBA32F, 4, 3, 1);
  EXPECT_EQ(flat.ndim(), 3);
  EXPECT_EQ(flat.view().shape[2], 1);
  host::Texture plain(TextureFormat::RGBA32F, 4, 3);
  EXPECT_EQ(plain.ndim(), 2);
  EXPECT_EQ(plain.bytes(), flat.bytes());

  ArgpackType type;
  type.name = "Volume";
  type.members = {{"vol", MemberKind::Texture, {}, 3}};
  std::vector<ArgpackType> types{type};
  layout_argpack_types(types);
  host::Argpack pack(types, 0);
  EXPECT_NO_THROW(pack.set_texture("vol", flat));
  EXPECT_EQ(pack.resource_view("vol").shape[2], 1);
  EXPECT_THROW(pack.set_texture("vol", plain), Error);
}

namespace {

// Types: 0 "Inner" {f32 scale; i32x2 offset}, 1 "Params" {f32 a; bool on; Inner inner (pack);
// ndarray<f32,1> data; f32x3x3 m; texture tex}
std::vector<ArgpackType> pack_types() {
  ArgpackType inner;
  inner.name = "Inner";
  inner.members = {{"scale", MemberKind::Value, {Scalar::F32}},
                   {"offset", MemberKind::Value, {Scalar::I32, 2, 1}}};
  ArgpackType outer;
  outer.name = "Params";
  ArgpackMember nested{"inner", MemberKind::Pack, {}, 0, 0};
  ArgpackMember data{"data", MemberKind::Ndarray, {Scalar::F32}, 1};
  ArgpackMember tex{"tex", MemberKind::Texture, {}, 2};
  outer.members = {{"a", MemberKind::Value, {Scalar::F32}},
                   {"on", MemberKind::Value, {Scalar::Bool}},
                   nested,
                   data,
                   {"m", MemberKind::Value, {Scalar::F32, 3, 3}},
                   tex};
  std::vector<ArgpackType> types{inner, outer};
  layout_argpack_types(types);
  return types;
}

}  // namespace

TEST(Argpack, MembersByPathWithTypeChecks) {
  host::Argpack pack(pack_types(), 1);
  pack.clear_dirty();
  pack.set<float>("a", 2.5f);
  EXPECT_TRUE(pack.dirty());
  pack.set<bool>("on", true);
  pack.set<float>("inner.scale", 4.0f);
  pack.set_components<int32_t>("inner.offset", {3, -4});
  std::vector<float> m(9);
  std::iota(m.begin(), m.end(), 1.0f);
  pack.set_components<float>("m", m);
  EXPECT_EQ(pack.get<float>("a"), 2.5f);
  EXPECT_TRUE(pack.get<bool>("on"));
  EXPECT_EQ(pack.get<float>("inner.scale"), 4.0f);
  EXPECT_EQ(pack.get_components<int32_t>("inner.offset", 2), (std::vector<int32_t>{3, -4}));
  EXPECT_EQ(pack.get_components<float>("m", 9), m);

  // Bytes land where argpack_layout says.
  uint32_t off = 0;
  find_member(pack_types(), 1, "inner.offset", &off);
  int32_t raw[2];
  std::memcpy(raw, pack.data() + off, 8);
  EXPECT_EQ(raw[1], -4);
  find_member(pack_types(), 1, "on", &off);
  int32_t on;
  std::memcpy(&on, pack.data() + off, 4);
  EXPECT_EQ(on, 1);

  try {
    pack.set<int32_t>("a", 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().pin, "a");
    EXPECT_NE(std::string(e.what()).find("f32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pack.set<float>("missing", 1.0f), Error);
  EXPECT_THROW(pack.set<float>("inner.nope", 1.0f), Error);
  EXPECT_THROW(pack.set<float>("data", 1.0f), Error);
  EXPECT_THROW(pack.set_components<float>("m", {1, 2, 3}), Error);
}

TEST(Argpack, NestedPacksAndResourceMembers) {
  auto types = pack_types();
  host::Argpack inner(types, 0);
  inner.set<float>("scale", 9.0f);
  inner.set_components<int32_t>("offset", {1, 2});
  host::Argpack outer(types, 1);
  outer.set_pack("inner", inner);
  EXPECT_EQ(outer.get<float>("inner.scale"), 9.0f);
  EXPECT_THROW(outer.set_pack("inner", outer), Error);

  host::Ndarray arr(Scalar::F32, {17});
  outer.set_ndarray("data", arr);
  ResourceView v = outer.resource_view("data");
  EXPECT_EQ(v.data, arr.data());
  EXPECT_EQ(v.shape[0], 17);
  host::Ndarray wrong(Scalar::I32, {17});
  EXPECT_THROW(outer.set_ndarray("data", wrong), Error);
  host::Ndarray wrong_dims(Scalar::F32, {2, 2});
  EXPECT_THROW(outer.set_ndarray("data", wrong_dims), Error);

  host::Texture tex(TextureFormat::RGBA32F, 8, 4);
  outer.set_texture("tex", tex);
  ResourceView tv = outer.resource_view("tex");
  EXPECT_EQ(tv.data, tex.data());
  EXPECT_EQ(tv.shape[0], 8);
  EXPECT_EQ(tv.shape[1], 4);
  EXPECT_THROW(outer.set_texture("data", tex), Error);
}

TEST(Argpack, NestedPacksAreBoundByReference) {
  auto types = pack_types();
  host::Argpack inner(types, 0);
  host::Argpack outer(types, 1);
  inner.set<float>("scale", 1.0f);
  outer.set_pack("inner", inner);
  uint32_t off = 0;
  find_member(types, 1, "inner.scale", &off);
  auto inline_scale = [&] {
    float v;
    std::memcpy(&v, outer.data() + off, 4);
    return v;
  };
  EXPECT_EQ(inline_scale(), 1.0f);

  // a later write to the inner pack: seen through the outer at once, in its bytes after sync
  outer.clear_dirty();
  uint64_t v0 = outer.version();
  inner.set<float>("scale", 5.0f);
  EXPECT_EQ(outer.get<float>("inner.scale"), 5.0f);
  EXPECT_FALSE(outer.dirty());  // nothing copied yet: one copy per launch, not per write
  EXPECT_TRUE(outer.sync());
  EXPECT_TRUE(outer.dirty());
  EXPECT_GT(outer.version(), v0);
  EXPECT_EQ(inline_scale(), 5.0f);
  EXPECT_FALSE(outer.sync());  // unchanged: no copy, no new version

  // writing through the outer writes the bound pack
  outer.set_components<int32_t>("inner.offset", {7, 8});
  EXPECT_EQ(inner.get_components<int32_t>("offset", 2), (std::vector<int32_t>{7, 8}));
  find_member(types, 1, "inner.offset", &off);
  int32_t raw[2];
  std::memcpy(raw, outer.data() + off, 8);
  EXPECT_EQ(raw[1], 8);

  // rebinding to another pack ends the reference to the first
  host::Argpack other(types, 0);
  other.set<float>("scale", 3.0f);
  outer.set_pack("inner", other);
  inner.set<float>("scale", 6.0f);
  outer.sync();
  EXPECT_EQ(outer.get<float>("inner.scale"), 3.0f);
}

namespace {

// Kernel reading an argpack: data[i] = data[i] * inner.scale + a (when `on`).
std::unique_ptr<ir::Kernel> argpack_kernel(const std::vector<ArgpackType>& types) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "use_pack";
  ParamDesc p;
  p.name = "params";
  p.kind = ParamKind::Argpack;
  p.argpack_type = 1;
  p.size = types[1].size;
  k->abi.params.push_back(p);
  uint32_t a_off = 0, on_off = 0, scale_off = 0, data_off = 0;
  find_member(types, 1, "a", &a_off);
  find_member(types, 1, "on", &on_off);
  find_member(types, 1, "inner.scale", &scale_off);
  find_member(types, 1, "data", &data_off);
  ResourceDesc r;
  r.kind = ResourceKind::Ndarray;
  r.dtype = Scalar::F32;
  r.param = 0;
  r.param_offset = static_cast<int32_t>(data_off);
  k->abi.resources.push_back(r);
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0, static_cast<int>(a_off));
  Inst* on = b.arg(Scalar::Bool, 0, static_cast<int>(on_off));
  Inst* scale = b.arg(Scalar::F32, 0, static_cast<int>(scale_off));
  auto task = std::make_unique<Inst>(Op::Offload, Scalar::Void);
  task->set_task_kind(ir::TaskKind::RangeFor);
  task->set_dims(1);
  task->operands = {b.i32(0), b.make(Op::ResourceShape, Scalar::I32, {}, 0, 0)};
  Inst* t = b.insert(std::move(task));
  t->regions.push_back(std::make_unique<ir::Block>(t));
  b.set_insert_end(t->region(0));
  Inst* i = b.cast(Scalar::I64, b.loop_index(t, 0));
  Inst* ptr = b.make(Op::ElementPtr, Scalar::F32, {i}, 0);
  Inst* x = b.global_load(ptr);
  Inst* y = b.binary(Op::Add, b.binary(Op::Mul, x, scale), a);
  b.global_store(ptr, b.select(on, y, x));
  return k;
}

}  // namespace

TEST(Argpack, KernelReadsValuesAndNdarrayFromPack) {
  auto types = pack_types();
  auto k = argpack_kernel(types);
  ASSERT_EQ(ir::verify(*k, {.offloaded = true, .lowered = true}), "");
  auto compiled = codegen::compile_kernel_to_object(*k);
  cpu::CpuModule module;
  cpu::CpuDevice device(2);
  auto kernel = module.load(compiled.abi, compiled.object);
  host::Argpack pack(types, 1);
  host::Ndarray arr(Scalar::F32, {1000});
  for (int i = 0; i < 1000; ++i) arr.data_as<float>()[i] = static_cast<float>(i);
  pack.set<float>("a", 1.0f);
  pack.set<bool>("on", true);
  pack.set<float>("inner.scale", 2.0f);
  pack.set_ndarray("data", arr);
  host::LaunchFrame frame(kernel->abi);
  frame.set_argpack(0, pack);
  device.launch(*kernel, frame.context());
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(arr.data_as<float>()[i], 2.0f * static_cast<float>(i) + 1.0f);
  pack.set<bool>("on", false);
  device.launch(*kernel, frame.context());
  EXPECT_EQ(arr.data_as<float>()[10], 21.0f);
  // Swapping the ndarray in the pack takes effect at the next launch.
  host::Ndarray other(Scalar::F32, {3});
  pack.set_ndarray("data", other);
  pack.set<bool>("on", true);
  device.launch(*kernel, frame.context());
  EXPECT_EQ(other.data_as<float>()[2], 1.0f);
  EXPECT_EQ(arr.data_as<float>()[10], 21.0f);
}

// An engine's job system runs the chunks: every row once, on the engine's threads (here
// jobs run in reverse order, two at a time, none on the caller), and Loom starts no thread.
TEST(JobSystem, ParallelTasksRunOnTheEnginesJobs) {
  auto types = pack_types();
  auto k = argpack_kernel(types);
  auto compiled = codegen::compile_kernel_to_object(*k);
  cpu::CpuModule module;
  auto kernel = module.load(compiled.abi, compiled.object);
  std::atomic<int> batches{0}, jobs_run{0};
  std::set<std::thread::id> job_threads;
  std::mutex job_threads_mutex;
  cpu::JobSystem engine;
  engine.workers = 2;
  engine.parallel_for = [&](uint32_t count, const cpu::JobSystem::Job& job) {
    ++batches;
    std::atomic<int64_t> next{static_cast<int64_t>(count) - 1};
    auto worker = [&] {
      for (int64_t i; (i = next--) >= 0;) {
        {
          std::lock_guard<std::mutex> lock(job_threads_mutex);
          job_threads.insert(std::this_thread::get_id());
        }
        job(static_cast<uint32_t>(i));
        ++jobs_run;
      }
    };
    std::thread a(worker), b(worker);
    a.join();
    b.join();
  };
  cpu::CpuDevice device(engine);
  EXPECT_EQ(device.threads(), 2);
  EXPECT_EQ(device.pool().size(), 1);  // no worker threads of Loom's
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::mutex chunks_mutex;
  device.set_chunk_observer([&](size_t, int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(chunks_mutex);
    chunks.push_back({b, e});
  });
  const int n = 1 << 20;  // enough work for several chunks per worker
  host::Argpack pack(types, 1);
  host::Ndarray arr(Scalar::F32, {n});
  for (int i = 0; i < n; ++i) arr.data_as<float>()[i] = static_cast<float>(i % 1000);
  pack.set<float>("a", 1.0f);
  pack.set<bool>("on", true);
  pack.set<float>("inner.scale", 2.0f);
  pack.set_ndarray("data", arr);
  host::LaunchFrame frame(kernel->abi);
  frame.set_argpack(0, pack);
  device.launch(*kernel, frame.context());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(arr.data_as<float>()[i], 2.0f * static_cast<float>(i % 1000) + 1.0f) << i;
  EXPECT_EQ(batches.load(), 1);
  EXPECT_EQ(jobs_run.load(), static_cast<int>(chunks.size()));
  EXPECT_GT(chunks.size(), 2u);
  EXPECT_FALSE(job_threads.count(std::this_thread::get_id()));
  // The chunks cover [0, n) exactly once.
  std::sort(chunks.begin(), chunks.end());
  int64_t covered = 0;
  for (auto [b, e] : chunks) {
    EXPECT_EQ(b, covered);
    covered = e;
  }
  EXPECT_EQ(covered, n);
  EXPECT_THROW(cpu::CpuDevice(cpu::JobSystem{}), Error);
}

// Profilers name loaded kernels: each task entry is a line of /tmp/perf-<pid>.map.
TEST(PerfMap, LoadedKernelsAreNamedForProfilers) {
  auto types = pack_types();
  auto compiled = codegen::compile_kernel_to_object(*argpack_kernel(types));
  std::remove(cpu::perf_map_path().c_str());
  cpu::enable_perf_map(true);
  cpu::CpuModule module;
  auto kernel = module.load(compiled.abi, compiled.object);
  cpu::enable_perf_map(false);
  std::ifstream in(cpu::perf_map_path());
  ASSERT_TRUE(in) << cpu::perf_map_path();
  std::string line;
  int named = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    uintptr_t start = 0;
    uint64_t size = 0;
    std::string name;
    fields >> std::hex >> start >> size >> name;
    ASSERT_EQ(name.rfind("loom:use_pack:", 0), 0u) << line;
    EXPECT_GT(size, 0u) << line;
    for (const cpu::LoadedTask& t : kernel->tasks)
      named += start == reinterpret_cast<uintptr_t>(t.entry) ? 1 : 0;
  }
  EXPECT_EQ(named, static_cast<int>(kernel->tasks.size()));
  // Off again: a later load adds nothing.
  auto before = std::filesystem::file_size(cpu::perf_map_path());
  module.load(compiled.abi, compiled.object);
  EXPECT_EQ(std::filesystem::file_size(cpu::perf_map_path()), before);
  std::remove(cpu::perf_map_path().c_str());
}

TEST(LaunchFrame, VectorValuesAndNdarrayShapes) {
  KernelABI abi;
  abi.name = "k";
  ParamDesc v;
  v.name = "dir";
  v.type = {Scalar::F32, 3, 1};
  v.size = 12;
  abi.params.push_back(v);
  ParamDesc nd;
  nd.name = "pos";
  nd.kind = ParamKind::Ndarray;
  nd.type = {Scalar::F32, 3, 1};
  nd.ndim = 2;
  abi.params.push_back(nd);
  ResourceDesc r;
  r.kind = ResourceKind::Ndarray;
  r.components = 3;
  r.ndim = 2;
  r.param = 1;
  abi.resources.push_back(r);
  host::LaunchFrame frame(abi);
  frame.set_components<float>(0, {1.0f, 2.0f, 3.0f});
  float stored[3];
  std::memcpy(stored, frame.context().params[0], sizeof stored);
  EXPECT_EQ(stored[2], 3.0f);
  EXPECT_THROW(frame.set_value<float>(0, 1.0f), Error);
  host::Ndarray good(Scalar::F32, {4, 5}, 3), flat(Scalar::F32, {20}, 3),
      scalar(Scalar::F32, {4, 5});
  frame.set_ndarray(1, good);
  EXPECT_EQ(frame.context().resources[0].data, good.data());
  EXPECT_EQ(frame.context().resources[0].shape[1], 5);
  EXPECT_THROW(frame.set_ndarray(1, flat), Error);
  EXPECT_THROW(frame.set_ndarray(1, scalar), Error);
}

TEST(LaunchFrame, ChecksParameterKindsAndTypes) {
  KernelABI abi;
  abi.name = "k";
  ParamDesc v;
  v.name = "speed";
  v.type = {Scalar::F32};
  v.size = 4;
  abi.params.push_back(v);
  host::LaunchFrame frame(abi);
  EXPECT_NO_THROW(frame.set_value<float>(0, 1.0f));
  try {
    frame.set_value<int32_t>(0, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().pin, "speed");
  }
  host::Ndarray arr(Scalar::F32, {2});
  EXPECT_THROW(frame.set_ndarray(0, arr), Error);
  EXPECT_THROW(frame.set_components<float>(0, {1.0f, 2.0f}), Error);
  EXPECT_THROW(frame.set_value<float>(3, 1.0f), Error);
  host::Field f(FieldDesc{"nope", {Scalar::F32}, {2}, Layout::AoS});
  EXPECT_THROW(frame.bind_field("nope", f), Error);
}

TEST(LaunchFrame, FieldsMustMatchTheCompiledShape) {
  KernelABI abi;
  abi.name = "k";
  ResourceDesc r;
  r.kind = ResourceKind::Field;
  r.field = "grid";
  r.ndim = 2;
  r.shape = {4, 8, 0, 0};
  abi.resources.push_back(r);
  host::LaunchFrame frame(abi);
  host::Field wrong(FieldDesc{"grid", {Scalar::F32}, {8, 4}, Layout::AoS});
  EXPECT_THROW(frame.bind_field("grid", wrong), Error);
  host::Field soa(FieldDesc{"grid", {Scalar::F32}, {4, 8}, Layout::SoA});
  EXPECT_THROW(frame.bind_field("grid", soa), Error);
  host::Field right(FieldDesc{"grid", {Scalar::F32}, {4, 8}, Layout::AoS});
  EXPECT_NO_THROW(frame.bind_field("grid", right));
}

using test::counting_kernel;

TEST(CpuModule, LoadsTheSameObjectTwiceInSeparateDylibs) {
  auto k = counting_kernel();
  ASSERT_EQ(ir::verify(*k, {.offloaded = true, .lowered = true}), "");
  auto compiled = codegen::compile_kernel_to_object(*k);
  cpu::CpuModule module;
  cpu::CpuDevice device(4);
  auto first = module.load(compiled.abi, compiled.object);
  auto second = module.load(compiled.abi, compiled.object);
  ASSERT_EQ(first->tasks.size(), 2u);
  EXPECT_NE(first->tasks[0].entry, second->tasks[0].entry);
  host::Ndarray c1(Scalar::I32, {1}), c2(Scalar::I32, {1});
  host::LaunchFrame f1(first->abi), f2(second->abi);
  f1.set_ndarray(0, c1);
  f1.set_value<int32_t>(1, 12345);
  f2.set_ndarray(0, c2);
  f2.set_value<int32_t>(1, 777);
  device.launch(*first, f1.context());
  device.launch(*second, f2.context());
  EXPECT_EQ(c1.data_as<int32_t>()[0], 12345);
  EXPECT_EQ(c2.data_as<int32_t>()[0], 777);
  EXPECT_EQ(f1.returned<int32_t>(0), 12345);
  EXPECT_EQ(f2.returned<int32_t>(0), 777);
  // Unloading one leaves the other running; kernels outlive their module object.
  first.reset();
  device.launch(*second, f2.context());
  EXPECT_EQ(c2.data_as<int32_t>()[0], 1554);
}

TEST(CpuModule, KernelsOutliveTheModuleObject) {
  auto k = counting_kernel();
  auto compiled = codegen::compile_kernel_to_object(*k);
  std::shared_ptr<cpu::LoadedCpuKernel> kernel;
  {
    cpu::CpuModule module;
    kernel = module.load(compiled.abi, compiled.object);
  }
  cpu::CpuDevice device(2);
  host::Ndarray c(Scalar::I32, {1});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, c);
  frame.set_value<int32_t>(1, 50);
  device.launch(*kernel, frame.context());
  EXPECT_EQ(c.data_as<int32_t>()[0], 50);
}

TEST(CpuModule, RejectsCorruptObjectsAndMissingSymbols) {
  cpu::CpuModule module;
  KernelABI abi;
  abi.name = "broken";
  std::vector<uint8_t> junk(64, 0xAB);
  try {
    module.load(abi, junk);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, "broken");
  }
  auto k = counting_kernel();
  auto compiled = codegen::compile_kernel_to_object(*k);
  compiled.abi.tasks[0].symbol = "no_such_symbol";
  EXPECT_THROW(module.load(compiled.abi, compiled.object), Error);
}

TEST(CpuDevice, RefusesToLaunchWithUnboundResources) {
  auto k = counting_kernel();
  auto compiled = codegen::compile_kernel_to_object(*k);
  cpu::CpuModule module;
  cpu::CpuDevice device(2);
  auto kernel = module.load(compiled.abi, compiled.object);
  host::LaunchFrame frame(kernel->abi);
  frame.set_value<int32_t>(1, 10);
  try {
    device.launch(*kernel, frame.context());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.place().pin, "counter");
    EXPECT_NE(std::string(e.what()).find("not bound"), std::string::npos);
  }
}

// The AOT path: a compiled kernel stored as a record loads and runs with no compiler call.
TEST(CpuModule, RunsAKernelFromASerializedRecord) {
  auto k = counting_kernel();
  auto compiled = codegen::compile_kernel_to_object(*k);
  KernelRecord record;
  record.abi = compiled.abi;
  record.code = compiled.object;
  std::vector<uint8_t> bytes = serialize_kernel_record(record);
  KernelRecord loaded = deserialize_kernel_record(bytes, "test module");
  cpu::CpuModule module;
  cpu::CpuDevice device(2);
  auto kernel = module.load(loaded.abi, loaded.code);
  host::Ndarray c(Scalar::I32, {1});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, c);
  frame.set_value<int32_t>(1, 4242);
  device.launch(*kernel, frame.context());
  EXPECT_EQ(c.data_as<int32_t>()[0], 4242);
  EXPECT_EQ(frame.returned<int32_t>(0), 4242);
}

// Compiling, loading and launching from several host threads at once.
TEST(CpuModule, ConcurrentCompileLoadAndLaunch) {
  cpu::CpuModule module;
  cpu::CpuDevice device(3);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      auto k = counting_kernel();
      auto compiled = codegen::compile_kernel_to_object(*k);
      auto kernel = module.load(compiled.abi, compiled.object);
      host::Ndarray c(Scalar::I32, {1});
      host::LaunchFrame frame(kernel->abi);
      frame.set_ndarray(0, c);
      frame.set_value<int32_t>(1, 1000 + t);
      for (int r = 0; r < 20; ++r) device.launch(*kernel, frame.context());
      if (c.data_as<int32_t>()[0] == 20 * (1000 + t)) ++good;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 3);
}

TEST(CpuDevice, ChunkRowsFollowTheTotalWork) {
  auto chunks = [](int64_t rows, int64_t row_work, int threads) {
    int64_t grain = cpu::chunk_rows(rows, row_work, threads);
    EXPECT_GE(grain, 1);
    return (rows + grain - 1) / grain;
  };
  EXPECT_EQ(cpu::chunk_rows(16384, 1, 2), 8192);  // 1-d: chunks long enough to vectorise
  EXPECT_EQ(chunks(1000, 1, 16), 1);              // too small to repay a wake-up
  EXPECT_EQ(chunks(256, 256, 2), 8);              // the heat sample: no longer serial
  EXPECT_EQ(chunks(64, 1024, 4), 8);
  EXPECT_EQ(chunks(1024, 1024, 16), 128);      // 8 per thread
  EXPECT_EQ(chunks(4, 1 << 20, 16), 4);        // never more chunks than rows
  EXPECT_EQ(chunks(64, 4, 4), 1);              // many rows but little work
  EXPECT_EQ(cpu::chunk_rows(100, 0, 8), 100);  // empty inner range: one chunk
  EXPECT_EQ(cpu::chunk_rows(0, 5, 8), 1);
  EXPECT_EQ(chunks(int64_t{1} << 40, int64_t{1} << 31, 8), 64);  // no overflow
}

namespace {

// out[i][j] = 1000 * i + j over a 2-d range_for covering out's shape.
std::unique_ptr<ir::Kernel> grid_kernel() {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "grid";
  ParamDesc nd;
  nd.name = "out";
  nd.kind = ParamKind::Ndarray;
  nd.type = {Scalar::I32};
  nd.ndim = 2;
  k->abi.params.push_back(nd);
  ResourceDesc r;
  r.kind = ResourceKind::Ndarray;
  r.dtype = Scalar::I32;
  r.ndim = 2;
  r.param = 0;
  k->abi.resources.push_back(r);
  Builder b(k->body.get());
  Inst* rows = b.make(Op::ResourceShape, Scalar::I32, {}, 0, 0);
  Inst* cols = b.make(Op::ResourceShape, Scalar::I32, {}, 0, 1);
  auto task = std::make_unique<Inst>(Op::Offload, Scalar::Void);
  task->set_task_kind(ir::TaskKind::RangeFor);
  task->set_dims(2);
  task->operands = {b.i32(0), rows, b.i32(0), cols};
  Inst* t = b.insert(std::move(task));
  t->regions.push_back(std::make_unique<ir::Block>(t));
  b.set_insert_end(t->region(0));
  Inst* i = b.loop_index(t, 0);
  Inst* j = b.loop_index(t, 1);
  Inst* linear =
      b.binary(Op::Add, b.binary(Op::Mul, b.cast(Scalar::I64, i), b.cast(Scalar::I64, cols)),
               b.cast(Scalar::I64, j));
  b.global_store(b.make(Op::ElementPtr, Scalar::I32, {linear}, 0),
                 b.binary(Op::Add, b.binary(Op::Mul, i, b.i32(1000)), j));
  return k;
}

}  // namespace

TEST(CpuDevice, ExtentFunctionsReportRowsAndWorkPerRow) {
  auto k = grid_kernel();
  ASSERT_EQ(ir::verify(*k, {.offloaded = true, .lowered = true}), "");
  auto compiled = codegen::compile_kernel_to_object(*k);
  cpu::CpuModule module;
  auto kernel = module.load(compiled.abi, compiled.object);
  host::Ndarray out(Scalar::I32, {64, 1024});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, out);
  int64_t row_work = -1;
  EXPECT_EQ(kernel->tasks[0].extent(&frame.context(), &row_work), 64);
  EXPECT_EQ(row_work, 1024);

  auto one_d = codegen::compile_kernel_to_object(*counting_kernel());
  auto counting = module.load(one_d.abi, one_d.object);
  host::Ndarray c(Scalar::I32, {1});
  host::LaunchFrame f(counting->abi);
  f.set_ndarray(0, c);
  f.set_value<int32_t>(1, 77);
  row_work = -1;
  EXPECT_EQ(counting->tasks[0].extent(&f.context(), &row_work), 77);
  EXPECT_EQ(row_work, 1);
}

// A 2-d task with only 64 outer rows used to be one chunk (the grain was chosen from the
// outer rows alone), so it ran on one thread.
TEST(CpuDevice, MultiDimensionalTasksWithFewRowsSplitAcrossThreads) {
  auto k = grid_kernel();
  auto compiled = codegen::compile_kernel_to_object(*k);
  cpu::CpuModule module;
  cpu::CpuDevice device(4);
  auto kernel = module.load(compiled.abi, compiled.object);
  host::Ndarray out(Scalar::I32, {64, 1024});
  host::LaunchFrame frame(kernel->abi);
  frame.set_ndarray(0, out);

  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::atomic<int> chunks{0};
  auto distinct = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    return threads.size();
  };
  device.set_chunk_observer([&](size_t task, int64_t b, int64_t e) {
    EXPECT_EQ(task, 0u);
    EXPECT_LT(b, e);
    ++chunks;
    {
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    // Hold the chunk until another thread runs one too, so the count does not depend on
    // how fast workers wake; the deadline only keeps a one-chunk launch from hanging.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (distinct() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  });
  device.launch(*kernel, frame.context());
  EXPECT_GT(chunks.load(), 1);
  EXPECT_GE(distinct(), 2u);
  const int32_t* v = out.data_as<int32_t>();
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 1024; ++j) ASSERT_EQ(v[i * 1024 + j], 1000 * i + j);
}
