// The kernel life cycle: caches, statistics, argument binding errors, debug checks.
#include "tests/e2e/e2e_util.h"

#include <fstream>
#include <iterator>

#include "engine_plugin/api/build_id.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/common/npy.h"

using namespace loom;
using namespace loom::test;

TEST(Lifecycle, NdarrayShapeAloneMakesNoNewInstantiation) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_args.loom.json"));
  p.create_ndarray("long", {Scalar::I32}, {64});
  p.launch("run", {{"base", 5}, {"arr", "arr"}, {"v", std::vector<double>{0, 0, 0}}});
  p.launch("run", {{"base", 5}, {"arr", "long"}, {"v", std::vector<double>{0, 0, 0}}});
  EXPECT_EQ(p.stats().instantiations, 1);
  EXPECT_EQ(p.stats().memory_hits, 1);
  EXPECT_EQ(element<int32_t>(p.array("long"), 63), 5 + 63);
}

TEST(Lifecycle, WrappedCallerMemory) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_args.loom.json"));
  std::vector<int32_t> mine(10, -1);
  p.wrap_ndarray("mine", {Scalar::I32}, {10}, mine.data());
  p.launch("run", {{"base", 100}, {"arr", "mine"}, {"v", std::vector<double>{1, 0, 0}}});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(mine[static_cast<size_t>(i)], 101 + i);
}

TEST(Lifecycle, OfflineCacheServesAWarmStartAndSurvivesCorruption) {
  std::string dir = fresh_cache_dir("warm");
  ProgramOptions o;
  o.cache_dir = dir;
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  {
    Program cold(o);
    cold.load_file(doc_path("taichi_pipeline.loom.json"));
    cold.run_pipeline("step");
    EXPECT_EQ(cold.stats().misses, 1);
    EXPECT_EQ(cold.stats().disk_hits, 0);
  }
  {
    Program warm(o);
    warm.load_file(doc_path("taichi_pipeline.loom.json"));
    warm.run_pipeline("step");
    EXPECT_EQ(warm.stats().misses, 0);  // no lowering, no LLVM: object code from disk
    EXPECT_EQ(warm.stats().disk_hits, 1);
    EXPECT_EQ(warm.stats().ms_passes, 0.0);
    EXPECT_EQ(warm.stats().ms_optimize, 0.0);  // no LLVM optimisation on a warm start
    EXPECT_EQ(warm.stats().ms_emit, 0.0);
    EXPECT_EQ(element<int32_t>(warm.array("arr"), 7), 3 * 7 + 60);
  }
  // truncate every kernel entry: a warning, a recompile, the right answer
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".lkr")
      std::filesystem::resize_file(entry.path(), std::filesystem::file_size(entry.path()) / 2);
  {
    Program again(o);
    again.load_file(doc_path("taichi_pipeline.loom.json"));
    again.run_pipeline("step");
    EXPECT_EQ(again.stats().misses, 1);
    EXPECT_EQ(element<int32_t>(again.array("arr"), 7), 3 * 7 + 60);
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("corrupt compiled kernel record"), std::string::npos) << warnings[0];
}

namespace {

// Runs the pipeline `step` of taichi_pipeline with the cache folder `dir`; returns the
// program's statistics and appends its warnings.
Stats run_cached(const std::string& dir, std::vector<std::string>& warnings,
                 Backend* backend = nullptr) {
  ProgramOptions o;
  o.cache_dir = dir;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  Program p(o);
  p.load_file(doc_path("taichi_pipeline.loom.json"));
  p.run_pipeline("step");
  EXPECT_EQ(element<int32_t>(p.array("arr"), 7), 3 * 7 + 60);
  if (backend) *backend = p.backend();
  return p.stats();
}

// The one compiled kernel entry of the cache (a device may keep other files there).
std::filesystem::path only_entry(const std::string& dir) {
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".lkr") entries.push_back(e.path());
  EXPECT_EQ(entries.size(), 1u);
  return entries.empty() ? std::filesystem::path() : entries[0];
}

// Rewrites the cache entry at `path` through `edit`, with a valid checksum.
template <typename F>
void edit_entry(const std::filesystem::path& path, F&& edit) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  in.close();
  KernelRecord record = deserialize_kernel_record(bytes, path.string());
  edit(record);
  bytes = serialize_kernel_record(record);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST(Lifecycle, CacheEntryWhoseObjectDoesNotLoadIsRecompiledAndReplaced) {
  std::string dir = fresh_cache_dir("unloadable");
  std::vector<std::string> warnings;
  Backend backend = Backend::Cpu;
  run_cached(dir, warnings, &backend);
  // code that is no object (nor SPIR-V) at all, in a record with a valid checksum
  edit_entry(only_entry(dir), [](KernelRecord& r) { r.code.assign(64, 0x5a); });
  Stats s = run_cached(dir, warnings);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.disk_hits, 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("ignoring offline cache entry"), std::string::npos) << warnings[0];
  // overwritten: the next run loads it from disk without a warning
  s = run_cached(dir, warnings);
  EXPECT_EQ(s.disk_hits, 1);
  EXPECT_EQ(warnings.size(), 1u);
  // another kernel's record under this key
  edit_entry(only_entry(dir), [](KernelRecord& r) { r.abi.name = "other"; });
  EXPECT_EQ(run_cached(dir, warnings).misses, 1);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[1].find("holds kernel 'other'"), std::string::npos) << warnings[1];
  if (backend != Backend::Cpu) return;
  // a CPU object lacking the task symbol the record names
  edit_entry(only_entry(dir),
             [](KernelRecord& r) { r.abi.tasks.at(0).symbol = "loom_no_such_task"; });
  EXPECT_EQ(run_cached(dir, warnings).misses, 1);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[2].find("loom_no_such_task"), std::string::npos) << warnings[2];
  EXPECT_EQ(run_cached(dir, warnings).disk_hits, 1);
}

TEST(Lifecycle, CacheEntryThatIsADirectoryIsAWarningAndARecompile) {
  std::string dir = fresh_cache_dir("directory");
  std::vector<std::string> warnings;
  run_cached(dir, warnings);
  std::filesystem::path entry = only_entry(dir);
  std::filesystem::remove(entry);
  std::filesystem::create_directories(entry / "inside");
  Stats s = run_cached(dir, warnings);
  EXPECT_EQ(s.misses, 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("is not a file"), std::string::npos) << warnings[0];
  EXPECT_TRUE(std::filesystem::is_regular_file(entry));  // replaced by the recompiled kernel
  EXPECT_EQ(run_cached(dir, warnings).disk_hits, 1);
}

TEST(Lifecycle, BuildIdIsASourceHash) {
  std::string id = build_id();  // generated at build time, part of every cache key
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
}

TEST(Lifecycle, DisabledOfflineCacheWritesNothing) {
  std::string dir = fresh_cache_dir("off");
  ProgramOptions o;
  o.cache_dir = dir;
  o.offline_cache = false;
  Program p(o);
  p.load_file(doc_path("taichi_pipeline.loom.json"));
  p.run_pipeline("step");
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(Lifecycle, StatisticsCountStagesAndPasses) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_pipeline.loom.json"));
  p.run_pipeline("step");
  const Stats& s = p.stats();
  EXPECT_EQ(s.kernels_registered, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.memory_hits, 2);
  EXPECT_GT(s.ms_lower + s.ms_passes + s.ms_optimize + s.ms_emit, 0.0);
  EXPECT_FALSE(s.per_pass.empty());
  EXPECT_NE(s.to_string().find("instantiations"), std::string::npos);
}

TEST(Lifecycle, BadArgumentsNameKernelAndParameter) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_args.loom.json"));
  Args good = {{"base", 0}, {"arr", "arr"}, {"v", std::vector<double>{1, 2, 3}}};
  EXPECT_NE(error_of([&] { p.launch("nope"); }).find("no kernel 'nope'"), std::string::npos);
  EXPECT_NE(error_of([&] {
              p.launch("run", {{"base", 0}, {"arr", "arr"}});
            }).find("missing argument for parameter 'v'"),
            std::string::npos);
  Args extra = good;
  extra.emplace_back("speed", 3);
  std::string e = error_of([&] { p.launch("run", extra); });
  EXPECT_NE(e.find("kernel 'run'"), std::string::npos) << e;
  EXPECT_NE(e.find("no parameter 'speed'"), std::string::npos) << e;
  Args wrong = {{"base", 0}, {"arr", 5}, {"v", std::vector<double>{1, 2, 3}}};
  e = error_of([&] { p.launch("run", wrong); });
  EXPECT_NE(e.find("'arr'"), std::string::npos) << e;
  Args short_vec = {{"base", 0}, {"arr", "arr"}, {"v", std::vector<double>{1, 2}}};
  e = error_of([&] { p.launch("run", short_vec); });
  EXPECT_NE(e.find("needs 3 values"), std::string::npos) << e;
  Args fractional = {{"base", 0.5}, {"arr", "arr"}, {"v", std::vector<double>{1, 2, 3}}};
  e = error_of([&] { p.launch("run", fractional); });
  EXPECT_NE(e.find("not an integer"), std::string::npos) << e;
  Args missing_resource = {{"base", 0}, {"arr", "ghost"}, {"v", std::vector<double>{1, 2, 3}}};
  e = error_of([&] { p.launch("run", missing_resource); });
  EXPECT_NE(e.find("'ghost' is not an ndarray"), std::string::npos) << e;
  // nothing was launched by the failed calls
  EXPECT_EQ(p.stats().launches, 0);
}

TEST(Lifecycle, TemplateArgumentMustBeFieldOrConstant) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_templates.loom.json"));
  std::string e = error_of([&] { p.launch("inc", {{"a", "not_a_field"}, {"b", 1}}); });
  EXPECT_NE(e.find("not a field"), std::string::npos) << e;
  e = error_of([&] { p.launch("inc", {{"a", "x"}}); });
  EXPECT_NE(e.find("'b'"), std::string::npos) << e;
}

TEST(Lifecycle, NpyDumpAndLoadRoundTrip) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_pipeline.loom.json"));
  p.run_pipeline("step");
  std::string file = (std::filesystem::temp_directory_path() / "loom_e2e_arr.npy").string();
  p.dump_npy("arr", file);
  Program q(no_cache());
  q.load_file(doc_path("taichi_pipeline.loom.json"));
  q.load_npy("arr", file);
  EXPECT_EQ(element<int32_t>(q.array("arr"), 99), 3 * 99 + 60);
  std::string e = error_of([&] { q.load_npy("nothing", file); });
  EXPECT_NE(e.find("'nothing'"), std::string::npos);
}

TEST(Lifecycle, LoadingABadDocumentKeepsTheOldProgram) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_pipeline.loom.json"));
  std::string bad = (std::filesystem::temp_directory_path() / "loom_e2e_bad.loom.json").string();
  std::ofstream(bad) << "{ \"format\": \"loom-graph\", \"version\": 2, \"kernels\": [ }";
  std::string e = error_of([&] { p.load_file(bad); });
  EXPECT_NE(e.find(bad), std::string::npos) << e;
  p.run_pipeline("step");  // the old document still runs
  EXPECT_EQ(element<int32_t>(p.array("arr"), 1), 63);
}

TEST(Lifecycle, DebugModeReportsOutOfBoundsInsteadOfCorruptingMemory) {
  ProgramOptions o = no_cache();
  o.debug = true;
  Program p(o);
  p.load_file(doc_path("out_of_bounds.loom.json"));
  std::string e = error_of([&] { p.launch("shift", {{"arr", "arr"}}); });
  EXPECT_NE(e.find("kernel 'shift'"), std::string::npos) << e;
  EXPECT_NE(e.find("node 4"), std::string::npos) << e;
  EXPECT_NE(e.find("16"), std::string::npos) << e;  // the index, equal to the extent
  e = error_of([&] { p.launch("stencil"); });
  EXPECT_NE(e.find("node 12"), std::string::npos) << e;
  EXPECT_NE(e.find("-1"), std::string::npos) << e;
}

TEST(Lifecycle, OutOfBoundsNamesTheDocumentAndTheArgpackMember) {
  ProgramOptions o = no_cache();
  o.debug = true;
  Program p(o);
  std::string path = doc_path("out_of_bounds.loom.json");
  p.load_file(path);
  std::string e = error_of([&] { p.launch("pack_shift", {{"p", "job"}}); });
  EXPECT_EQ(e.rfind(path, 0), 0u) << e;  // starts with the document path
  EXPECT_NE(e.find("kernel 'pack_shift'"), std::string::npos) << e;
  EXPECT_NE(e.find("node 23"), std::string::npos) << e;
  EXPECT_NE(e.find("ndarray 'p.inner.data' (argpack member)"), std::string::npos) << e;
  EXPECT_NE(e.find("index 16 not in [0, 16)"), std::string::npos) << e;
  e = error_of([&] { p.launch("shift", {{"arr", "arr"}}); });
  EXPECT_EQ(e.rfind(path, 0), 0u) << e;
  EXPECT_NE(e.find("ndarray parameter 'arr'"), std::string::npos) << e;
  e = error_of([&] { p.launch("stencil"); });
  EXPECT_NE(e.find("field 'grid'"), std::string::npos) << e;
}

TEST(Lifecycle, OpenNdarrayParametersInstantiatePerDtypeAndNdimNotShape) {
  Program p(no_cache());
  p.load_file(
      doc_path("open_ndarray.loom.json"));  // validation instantiates the pipeline's launches
  p.launch("iota", {{"arr", "ints"}});
  p.launch("iota", {{"arr", "floats"}});  // another dtype: a new instantiation
  EXPECT_EQ(p.stats().instantiations, 2);
  p.launch("iota", {{"arr", "more_ints"}});  // same dtype and ndim, other shape: reused
  EXPECT_EQ(p.stats().instantiations, 2);
  EXPECT_EQ(element<int32_t>(p.array("ints"), 9), 9);
  EXPECT_EQ(element<float>(p.array("floats"), 19), 19.0f);
  EXPECT_EQ(element<int32_t>(p.array("more_ints"), 29), 29);
  // a 2-d ndarray is a third instantiation, whose 1-d index is a type error naming the node
  std::string e = error_of([&] { p.launch("iota", {{"arr", "grid"}}); });
  EXPECT_NE(e.find("node 3"), std::string::npos) << e;
  EXPECT_NE(error_of([&] {
              p.launch("iota", {{"arr", 3}});
            }).find("takes the name of an ndarray"),
            std::string::npos);
}

TEST(Lifecycle, NpyMatricesAreRowsByColumnsInCOrder) {
  Program p(no_cache());
  p.load_file(doc_path("matrices.loom.json"));
  p.launch("fill", {{"arr", "m_nd"}});
  // columns (0,1), (2,3), (4,5): the kernel sees M[0][1] == 2
  KernelResult r = p.launch("row0_col1", {{"i", 0}, {"arr", "m_nd"}});
  EXPECT_EQ(r.values, (std::vector<double>{2, 2, 2}));
  auto dir = std::filesystem::temp_directory_path();
  for (const char* name : {"m_aos", "m_soa", "m_nd"}) {
    std::string file = (dir / (std::string("loom_e2e_") + name + ".npy")).string();
    p.dump_npy(name, file);
    NpyArray a = read_npy(file);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2, 3})) << name;
    std::vector<float> data(a.data.size() / 4);
    std::memcpy(data.data(), a.data.data(), a.data.size());
    // NumPy's m[e] is [[0, 2, 4], [1, 3, 5]] (+ 10 e): m[0][0, 1] == 2
    EXPECT_EQ(data, (std::vector<float>{0, 2, 4, 1, 3, 5, 10, 12, 14, 11, 13, 15})) << name;
  }
  // and back: a C-order file whose m[1][0, 1] is 42 reads as M[0][1] == 42 in the kernel
  NpyArray in;
  in.dtype = Scalar::F32;
  in.shape = {2, 2, 3};
  std::vector<float> values = {0, 1, 2, 3, 4, 5, 0, 42, 0, 0, 0, 0};
  in.data.resize(values.size() * 4);
  std::memcpy(in.data.data(), values.data(), in.data.size());
  std::string file = (dir / "loom_e2e_matrix_in.npy").string();
  write_npy(file, in);
  Program q(no_cache());
  q.load_file(doc_path("matrices.loom.json"));
  for (const char* name : {"m_aos", "m_soa", "m_nd"}) q.load_npy(name, file);
  EXPECT_EQ(q.launch("row0_col1", {{"i", 1}, {"arr", "m_nd"}}).values,
            (std::vector<double>{42, 42, 42}));
  EXPECT_EQ(q.launch("row0_col1", {{"i", 0}, {"arr", "m_nd"}}).values,
            (std::vector<double>{1, 1, 1}));
}

TEST(Lifecycle, WrappedNdarraysRebindToNewMemoryUnderTheSameName) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_args.loom.json"));
  std::vector<int32_t> first(10, -1), second(20, -1);
  p.wrap_ndarray("frame", {Scalar::I32}, {10}, first.data());
  Args args = {{"base", 100}, {"arr", "frame"}, {"v", std::vector<double>{0, 0, 0}}};
  p.launch("run", args);
  EXPECT_EQ(first[9], 109);
  p.rebind_ndarray("frame", second.data(), {20});  // next frame's buffer, another size
  std::fill(first.begin(), first.end(), -1);
  p.launch("run", args);
  EXPECT_EQ(second[19], 119);
  EXPECT_EQ(first[0], -1);  // the old buffer is no longer written
  EXPECT_EQ(p.array("frame").shape, std::vector<int64_t>{20});
  EXPECT_EQ(p.stats().instantiations, 1);  // a new shape is no new instantiation

  std::string e = error_of([&] { p.rebind_ndarray("ghost", second.data(), {20}); });
  EXPECT_NE(e.find("'ghost' is not an ndarray"), std::string::npos) << e;
  e = error_of([&] { p.rebind_ndarray("arr", second.data(), {20}); });  // declared by the document
  EXPECT_NE(e.find("owns its memory"), std::string::npos) << e;
  p.create_ndarray("made", {Scalar::I32}, {4});
  e = error_of([&] { p.rebind_ndarray("made", second.data(), {4}); });
  EXPECT_NE(e.find("owns its memory"), std::string::npos) << e;
}

TEST(Lifecycle, NdarraysCreatedFromCodeCanBeRemovedAndTheirNamesReused) {
  Program p(no_cache());
  p.load_file(doc_path("taichi_args.loom.json"));
  std::vector<int32_t> mine(8, 0);
  p.wrap_ndarray("mine", {Scalar::I32}, {8}, mine.data());
  p.create_ndarray("made", {Scalar::I32}, {4});
  p.remove_ndarray("mine");
  p.remove_ndarray("made");
  auto names = p.resource_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "mine"), 0);
  EXPECT_NE(error_of([&] { p.array("mine"); }), "");
  p.wrap_ndarray("mine", {Scalar::I32}, {8}, mine.data());  // the name is free again
  p.launch("run", {{"base", 1}, {"arr", "mine"}, {"v", std::vector<double>{0, 0, 0}}});
  EXPECT_EQ(mine[7], 8);

  std::string e = error_of([&] { p.remove_ndarray("arr"); });
  EXPECT_NE(e.find("declared by the document"), std::string::npos) << e;
  e = error_of([&] { p.remove_ndarray("ghost"); });
  EXPECT_NE(e.find("'ghost' is not an ndarray"), std::string::npos) << e;
}

TEST(Lifecycle, ArgpackMembersFollowARebindAndKeepTheirNdarrayAlive) {
  Program p(no_cache());
  p.load_file(doc_path("resources_in_packs.loom.json"));
  std::vector<float> a(8, -1), b(16, -1);
  p.wrap_ndarray("buf", {Scalar::F32}, {8}, a.data());
  p.set_argpack("job", "out", "buf");
  p.launch("fill", {{"job", "job"}});
  EXPECT_EQ(a[7], 3.5f);  // 0.5 * 7
  p.rebind_ndarray("buf", b.data(), {16});
  p.launch("fill", {{"job", "job"}});
  EXPECT_EQ(b[15], 7.5f);
  std::string e = error_of([&] { p.rebind_ndarray("buf", b.data(), {4, 4}); });
  EXPECT_NE(e.find("job.out"), std::string::npos) << e;
  e = error_of([&] { p.remove_ndarray("buf"); });
  EXPECT_NE(e.find("still bound to argpack member 'job.out'"), std::string::npos) << e;
  p.set_argpack("job", "out", "data");
  p.remove_ndarray("buf");
}
