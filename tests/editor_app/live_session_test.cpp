// The editor's live session: play, edits hot-reloaded at frame boundaries with their latency,
// broken edits that leave the simulation running, files changed on disk, autosave/recovery.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "compiler/graph/document_json.h"
#include "editor/app/live_session.h"

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
  std::function<graph::Node*(std::vector<graph::Node>&)> find = [&](std::vector<graph::Node>& nodes) -> graph::Node* {
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
  fs::path dir = fs::temp_directory_path() / ("loom_session_" + name + "_" + std::to_string(::getpid()));
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
  EXPECT_EQ(node(*std::make_unique<graph::Document>(graph::load_document_file(path)), "diffuse", 12)->params[0].second.s,
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

}  // namespace
}  // namespace loom::editor
