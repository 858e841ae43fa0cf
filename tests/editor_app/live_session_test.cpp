// The editor's live session: play, edits hot-reloaded at frame boundaries with their latency,
// broken edits that leave the simulation running, files changed on disk, autosave/recovery.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "compiler/graph/document_json.h"
#include "editor/app/live_session.h"
#include "tests/support/vulkan_required.h"

namespace loom::editor {
namespace {

namespace fs = std::filesystem;

std::string heat_path() { return std::string(LOOM_SOURCE_DIR) + "/assets/graphs/heat.loom.json"; }

ProgramOptions options() {
  ProgramOptions o;
  o.offline_cache = false;
  o.warn = [](const std::string&) {};
  return o;
}

graph::Node* node(graph::Document& doc, const std::string& kernel, int id) {
  std::function<graph::Node*(std::vector<graph::Node>&)> find =
      [&](std::vector<graph::Node>& nodes) -> graph::Node* {
    for (graph::Node& n : nodes) {
      if (n.id == id) return &n;
      for (graph::Region& r : n.regions)
        if (graph::Node* inner = find(r.nodes)) return inner;
    }
    return nullptr;
  };
  for (graph::KernelDecl& k : doc.kernels)
    if (k.name == kernel) return find(k.nodes);
  return nullptr;
}

// A cell just outside the initial hot square: it warms from the first step on.
float center(LiveSession& s) {
  float v;
  std::memcpy(&v, s.program().array("temperature").data + 4 * (95 * 256 + 128), 4);
  return v;
}

bool logged(const LiveSession& s, const std::string& text) {
  for (const LogEntry& e : s.log())
    if (e.message.find(text) != std::string::npos) return true;
  return false;
}

// A copy of the heat sample in a scratch folder, so the test may change it on disk.
std::string scratch_copy(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("loom_session_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path p = dir / "heat.loom.json";
  fs::copy_file(heat_path(), p, fs::copy_options::overwrite_existing);
  return p.string();
}

TEST(LiveSession, PlaysAndHotReloadsAnEditAtTheNextFrame) {
  LiveSession s(options());
  s.open_file(heat_path());
  s.frame();  // init runs even when paused
  EXPECT_EQ(s.steps(), 0);
  s.play();
  for (int i = 0; i < 3; ++i) EXPECT_GE(s.frame().step_ms, 0.0);
  EXPECT_EQ(s.steps(), 3);
  float before = center(s);

  graph::Document edited = s.document();
  node(edited, "diffuse", 12)->params[0].second.s = "c";  // nothing diffuses any more
  s.edit(edited);
  FrameTimes t = s.frame();
  EXPECT_GT(t.reload_ms, 0.0);
  EXPECT_GE(t.latency_ms, t.reload_ms);  // edit -> compiled -> ran once
  EXPECT_TRUE(logged(s, "reloaded in"));
  EXPECT_EQ(s.steps(), 4);
  float after = center(s);
  s.frame();
  EXPECT_EQ(center(s), after);  // the new kernel ran: the field no longer changes
  EXPECT_NE(after, 0.0f);
  (void)before;
}

TEST(LiveSession, ABrokenEditKeepsTheOldKernelsRunningAndNamesTheNode) {
  LiveSession s(options());
  s.open_file(heat_path());
  s.play();
  s.frame();
  graph::Document broken = s.document();
  node(broken, "diffuse", 12)->params[0].second.s = "c + nope";  // an unknown input
  s.edit(broken);
  FrameTimes t = s.frame();
  ASSERT_TRUE(s.error().has_value());
  EXPECT_EQ(s.error()->place().node, 12);
  EXPECT_LT(t.latency_ms, 0.0);  // nothing new is running
  float a = center(s);
  s.frame();
  EXPECT_NE(center(s), a);  // still diffusing with the old kernels
  s.edit(s.document());     // the good document again clears the error
  s.frame();
  EXPECT_FALSE(s.error().has_value());
}

TEST(LiveSession, MovingNodesIsNotAReload) {
  LiveSession s(options());
  s.open_file(heat_path());
  s.frame();
  graph::Document moved = s.document();
  moved.layout[0].positions[0].x = 999;
  moved.layout[0].positions[0].y = 999;
  s.edit(moved);
  FrameTimes t = s.frame();
  EXPECT_FALSE(logged(s, "reloaded in"));
  EXPECT_LT(t.latency_ms, 0.0);
  EXPECT_EQ(graph::program_key(moved), graph::program_key(s.document()));
}

TEST(LiveSession, AFileChangedOnDiskIsReloaded) {
  std::string path = scratch_copy("disk");
  LiveSession s(options());
  s.open_file(path);
  s.frame();
  graph::Document doc = graph::load_document_file(path);
  node(doc, "diffuse", 12)->params[0].second.s = "c";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a newer modification time
  graph::save_document_file(doc, path);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the session looks every 250 ms
  s.frame();
  std::optional<graph::Document> outside = s.take_external_change();
  ASSERT_TRUE(outside.has_value());
  EXPECT_TRUE(logged(s, "changed on disk"));
  EXPECT_EQ(graph::program_key(*outside), graph::program_key(s.document()));
  fs::remove_all(fs::path(path).parent_path());
}

// Issue 17: a file rewritten within one timestamp tick (1-2 s on some file systems) keeps its
// time, and here its size too: the session still sees the new text.
TEST(LiveSession, AFileRewrittenWithTheSameTimeAndSizeIsReloaded) {
  std::string path = scratch_copy("tick");
  const fs::file_time_type tick = fs::last_write_time(path);
  LiveSession s(options());
  s.open_file(path);
  std::ifstream in(path, std::ios::binary);
  std::string edited((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = edited.find("\"k\": 0.2");
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, 8, "\"k\": 0.3");  // as many characters
  ASSERT_EQ(edited.size(), fs::file_size(path));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << edited;
  fs::last_write_time(path, tick);
  s.frame();  // the first frame looks at the file
  std::optional<graph::Document> outside = s.take_external_change();
  ASSERT_TRUE(outside.has_value());
  EXPECT_TRUE(logged(s, "changed on disk"));
  fs::remove_all(fs::path(path).parent_path());
}

TEST(LiveSession, AutosaveKeepsEditsUntilSaved) {
  std::string path = scratch_copy("autosave");
  {
    LiveSession s(options());
    s.set_autosave_interval(std::chrono::milliseconds(0));
    s.open_file(path);
    graph::Document edited = s.document();
    node(edited, "diffuse", 12)->params[0].second.s = "c * 0.5";
    s.edit(edited);
    s.frame();
    EXPECT_TRUE(fs::exists(s.autosave_path()));
    // the session "crashes" here: never saved
  }
  std::string recovery = LiveSession::recovery_for(path);
  ASSERT_FALSE(recovery.empty());
  graph::Document recovered = graph::load_document_file(recovery);
  EXPECT_EQ(node(recovered, "diffuse", 12)->params[0].second.s, "c * 0.5");
  LiveSession s(options());
  s.open_file(path);
  s.save(recovered);  // saving writes every edit to the file and retires the recovery file
  EXPECT_TRUE(LiveSession::recovery_for(path).empty());
  EXPECT_EQ(node(*std::make_unique<graph::Document>(graph::load_document_file(path)), "diffuse", 12)
                ->params[0]
                .second.s,
            "c * 0.5");
  fs::remove_all(fs::path(path).parent_path());
}

TEST(LiveSession, ResetRunsInitAgainOnFreshStorage) {
  LiveSession s(options());
  s.open_file(heat_path());
  s.frame();
  float start = center(s);
  s.play();
  for (int i = 0; i < 20; ++i) s.frame();
  EXPECT_NE(center(s), start);
  s.pause();
  s.reset();
  s.frame();
  EXPECT_EQ(center(s), start);
  EXPECT_EQ(s.steps(), 0);
}

// ---------------------------------------------------------------- a kernel that never ends

// x[i] += 1 per trip of a `while` (node 4 of kernel `grow`) that breaks when `cond` holds.
graph::Document loop_document(int n, const std::string& cond) {
  std::string size = std::to_string(n);
  std::string text = R"doc({"format": "loom-graph", "version": 2, "name": "loop",
  "fields": [{"name": "x", "type": "f32", "shape": [)doc" +
                     size + R"doc(]}],
  "kernels": [{"name": "grow", "params": [{"name": "k", "kind": "value", "type": "f32"}],
    "nodes": [
      {"id": 1, "type": "param", "params": {"name": "k"}},
      {"id": 2, "type": "range_for", "inputs": {"end0": )doc" +
                     size + R"doc(}, "regions": {"body": [
        {"id": 3, "type": "load", "inputs": {"i0": "2.i0"}, "params": {"field": "x"}},
        {"id": 4, "type": "while", "inputs": {"v": "3", "n": 0}, "regions": {"body": [
          {"id": 5, "type": "carried", "params": {"name": "v"}},
          {"id": 6, "type": "carried", "params": {"name": "n"}},
          {"id": 7, "type": "expr", "inputs": {"n": "6", "k": "1"}, "params": {"expr": ")doc" +
                     cond + R"doc("}},
          {"id": 8, "type": "break", "inputs": {"cond": "7"}},
          {"id": 9, "type": "expr", "inputs": {"v": "5", "k": "1"}, "params": {"expr": "v + k"}},
          {"id": 10, "type": "add", "inputs": {"a": "6", "b": 1}},
          {"id": 11, "type": "next", "inputs": {"value": "9"}, "params": {"name": "v"}},
          {"id": 12, "type": "next", "inputs": {"value": "10"}, "params": {"name": "n"}}
        ]}},
        {"id": 13, "type": "store", "inputs": {"i0": "2.i0", "value": "4.v"}, "params": {"field": "x"}}
      ]}}]}],
  "pipelines": [{"name": "step", "launches": [{"kernel": "grow", "args": {"k": 1.0}}]}]})doc";
  return graph::load_document(text, "<memory>");
}

float first_x(LiveSession& s) {
  float v;
  std::memcpy(&v, s.program().array("x").data, 4);
  return v;
}

// Frames until the one in flight finished (a generous bound: never a timing assertion).
void settle(LiveSession& s) {
  auto t0 = Clock::now();
  while (s.frame_in_flight() && Clock::now() - t0 < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a UI's frame rate, roughly
    s.frame();
  }
  ASSERT_FALSE(s.frame_in_flight());
}

// Plays until `steps` steps started, then pauses and lets the last one finish (frame() starts
// the next step in the call that collects one, so a count is only exact once paused).
void play_to(LiveSession& s, int64_t steps) {
  s.play();
  auto t0 = Clock::now();
  while (s.steps() < steps && Clock::now() - t0 < std::chrono::seconds(30)) {
    s.frame();
    if (s.frame_in_flight()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  s.pause();
  settle(s);
  EXPECT_EQ(s.steps(), steps);
}

// Plays 3 steps (x = 9), edits the loop so it never ends: frame() keeps returning while the
// kernel runs, the session reports it stuck naming the kernel and the loop node, stop()
// brings the fields back to the last good frame, and undoing the edit runs again from there.
void never_ending_loop_is_stopped(Backend backend, int n) {
  ProgramOptions o = options();
  o.backend = backend;
  LiveSession s(o);
  s.set_stuck_limit(std::chrono::milliseconds(100));
  s.set_frame_wait(std::chrono::milliseconds(20));
  graph::Document good = loop_document(n, "n >= 3");
  s.open(good);
  ASSERT_TRUE(s.has_program()) << (s.error() ? s.error()->what() : "");
  play_to(s, 3);
  EXPECT_EQ(first_x(s), 9.0f);

  s.play();
  s.edit(loop_document(n, "n < 0 || k > 100.0"));
  auto t0 = Clock::now();
  while (!s.stuck() && Clock::now() - t0 < std::chrono::seconds(10)) {
    auto f0 = Clock::now();
    s.frame();
    EXPECT_LT(Clock::now() - f0, std::chrono::seconds(10));  // the UI thread is not held
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(s.stuck());
  EXPECT_TRUE(s.frame_in_flight());
  EXPECT_FALSE(s.has_program());  // the UI leaves the program alone meanwhile
  EXPECT_GT(s.running_seconds(), 0.0);
  EXPECT_FALSE(s.playing());  // paused: no further frame starts by itself
  ASSERT_TRUE(s.error());
  EXPECT_EQ(s.error()->place().kernel, "grow");
  EXPECT_EQ(s.error()->place().node, 4);
  EXPECT_TRUE(logged(s, "kernel 'grow' has been running for")) << s.log().back().message;

  EXPECT_TRUE(s.stop());
  EXPECT_FALSE(s.frame_in_flight());
  EXPECT_FALSE(s.stuck());
  EXPECT_FALSE(s.playing());
  ASSERT_TRUE(s.has_program());
  EXPECT_TRUE(logged(s, "stopped kernel 'grow'"));
  ASSERT_TRUE(s.error());
  EXPECT_EQ(s.error()->place().node, 4);
  EXPECT_EQ(s.steps(), 3);
  EXPECT_EQ(first_x(s), 9.0f);  // the last good frame's values
  EXPECT_FALSE(s.stop());

  // Undo: the loop ends again, and the simulation goes on from the last good frame.
  s.edit(good);
  play_to(s, 4);
  EXPECT_FALSE(s.error()) << s.error()->what();
  EXPECT_EQ(first_x(s), 12.0f);
  play_to(s, 5);
  EXPECT_EQ(first_x(s), 15.0f);
}

// A frame collected only after it ran past the limit (the UI thread was held elsewhere, e.g.
// by a renderer waiting on the same GPU queue) pauses too, so the next one does not start.
TEST(LiveSession, AFrameThatRanPastTheLimitUnwatchedPauses) {
  LiveSession s(options());
  s.set_stuck_limit(std::chrono::milliseconds(0));
  s.set_frame_wait(std::chrono::seconds(30));  // frame() collects it: nobody sees it run
  s.open_file(heat_path());
  s.play();
  s.frame();
  EXPECT_FALSE(s.frame_in_flight());
  EXPECT_FALSE(s.playing());
  EXPECT_TRUE(logged(s, "the frame took"));
  EXPECT_FALSE(s.error());  // it finished: nothing to mark
}

TEST(LiveSession, AKernelThatNeverEndsIsReportedAndStoppedOnTheCpu) {
  never_ending_loop_is_stopped(Backend::Cpu, 1024);
}

// lavapipe ends any loop after 65535 trips, which Loom reports as an error on the loop's node
// (docs/nodes.md, "Long loops on llvmpipe"): there a loop that never ends is an error on its
// node within a frame, never a stuck one and never a wrong number. The session pauses, and
// undoing the edit runs again from the last good frame.
void never_ending_loop_is_an_error_on_llvmpipe() {
  ProgramOptions o = options();
  o.backend = Backend::Vulkan;
  LiveSession s(o);
  s.set_frame_wait(std::chrono::milliseconds(20));
  graph::Document good = loop_document(64, "n >= 3");
  s.open(good);
  ASSERT_TRUE(s.has_program()) << (s.error() ? s.error()->what() : "");
  play_to(s, 3);
  EXPECT_EQ(first_x(s), 9.0f);
  s.play();
  s.edit(loop_document(64, "n < 0 || k > 100.0"));
  auto t0 = Clock::now();
  while (!s.error() && Clock::now() - t0 < std::chrono::seconds(30)) {
    s.frame();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(s.error());
  EXPECT_EQ(s.error()->place().kernel, "grow");
  EXPECT_EQ(s.error()->place().node, 4);
  EXPECT_NE(s.error()->message().find("ended this loop early"), std::string::npos)
      << s.error()->what();
  EXPECT_FALSE(s.playing());
  settle(s);
  s.edit(good);
  play_to(s, 4);
  EXPECT_FALSE(s.error()) << s.error()->what();
}

// Elsewhere the loop never ends: enough elements make the frame run well past the limit;
// Stop gives the program up and a fresh one (its own device) runs on while the old one
// finishes.
TEST(LiveSession, AKernelThatNeverEndsIsReportedAndStoppedOnVulkan) {
  bool llvmpipe = false;
  try {
    ProgramOptions o = options();
    o.backend = Backend::Vulkan;
    Program probe(o);
    llvmpipe = probe.device_name().find("llvmpipe") != std::string::npos;
  } catch (const Error& e) {
    LOOM_SKIP_FOR_NO_VULKAN(e.what());
  }
  if (llvmpipe) return never_ending_loop_is_an_error_on_llvmpipe();
  never_ending_loop_is_stopped(Backend::Vulkan, 1 << 17);
}

}  // namespace
}  // namespace loom::editor
