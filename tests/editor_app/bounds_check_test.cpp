// The editor runs kernels with bounds checks by default (issue 17): an edit that makes a
// store write past its field is an error on that store's node, where a program without
// checks would write over other memory (CPU) or drop the store (Vulkan). Run › Bounds checks
// turns them off; the kernels are recompiled and the data kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "compiler/graph/document_json.h"
#include "editor/app/editor_host.h"
#include "editor/model/graph_access.h"
#include "editor/model/operations.h"
#include "tests/support/vulkan_required.h"

namespace loom::editor {
namespace {

namespace fs = std::filesystem;

// step: x[i] += 1 for i in [0, 8), through a store whose index is i + `shift` (node 5).
const char* kDoc = R"({"format": "loom-graph", "version": 2, "name": "shift",
  "fields": [{"name": "x", "type": "f32", "shape": [8]}],
  "kernels": [{"name": "bump", "nodes": [
    {"id": 1, "type": "range_for", "inputs": {"end0": 8}, "regions": {"body": [
      {"id": 2, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"field": "x"}},
      {"id": 3, "type": "add", "inputs": {"a": "2", "b": 1.0}},
      {"id": 4, "type": "add", "inputs": {"a": "1.i0", "b": 0}},
      {"id": 5, "type": "store", "inputs": {"i0": "4", "value": "3"}, "params": {"field": "x"}}]}}]}],
  "pipelines": [{"name": "step", "launches": [{"kernel": "bump"}]}]})";

class BoundsCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("loom-bounds-check-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("LOOM_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    LOOM_REQUIRE_VULKAN_OR_SKIP();  // the host draws with Vulkan
  }
  void TearDown() override {
    if (host_) {
      std::vector<std::string> messages = host_->validation_messages();
      EXPECT_TRUE(messages.empty()) << messages.size() << " Vulkan validation message(s)";
    }
    host_.reset();
    fs::remove_all(dir_);
  }
  void start(Backend backend) {
    HostOptions o;
    o.headless = true;
    o.width = 640;
    o.height = 480;
    o.validation = true;
    o.backend = backend;
    o.offline_cache = false;
    host_ = std::make_unique<EditorHost>(o);
  }
  EditorApp& app() { return host_->app(); }
  void frames(int n) {
    for (int i = 0; i < n; ++i) host_->frame();
  }
  // Sets the index offset of the store (node 4's `b`) by an edit, as the canvas does.
  void set_shift(int shift) {
    EditResult r = set_literal(app().document(), GraphRef{"bump", false}, PinRef{4, "b"},
                               graph::Literal::integer(shift));
    ASSERT_TRUE(r.ok);
  }
  float x(size_t i) { return static_cast<float>(app().session().program().array("x").scalar(i)); }

  fs::path dir_;
  std::unique_ptr<EditorHost> host_;
};

TEST_F(BoundsCheckTest, AnOutOfBoundsStoreIsAnErrorOnItsNode) {
  for (Backend backend : {Backend::Cpu, Backend::Vulkan}) {
    SCOPED_TRACE(backend == Backend::Cpu ? "cpu" : "vulkan");
    start(backend);
    std::string path = (dir_ / "shift.loom.json").string();
    std::ofstream(path) << kDoc;
    ASSERT_TRUE(app().open(path));
    EXPECT_TRUE(app().session().bounds_checks()) << "the editor's default";
    app().session().play();
    frames(4);
    ASSERT_FALSE(app().session().error().has_value()) << app().session().error()->what();
    ASSERT_GT(app().session().steps(), 0);
    // x[i + 1] = x[i] + 1: the last iteration stores to x[8].
    set_shift(1);
    frames(4);
    ASSERT_TRUE(app().session().error().has_value());
    EXPECT_EQ(app().session().error()->place().kernel, "bump");
    EXPECT_EQ(app().session().error()->place().node, 5);
    EXPECT_NE(app().session().error()->message().find("out of bounds"), std::string::npos)
        << app().session().error()->what();
    bool on_node = false;
    for (const Diagnostic& d : app().document().diagnostics())
      on_node = on_node || (d.graph.name == "bump" && d.node == 5);
    EXPECT_TRUE(on_node) << "the store's node is marked";
    EXPECT_FALSE(app().session().playing()) << "a failed frame pauses";
    // Undo: in bounds again, and the program runs on.
    app().document().undo();
    frames(2);
    app().session().play();
    frames(4);
    EXPECT_FALSE(app().session().error().has_value());
    // Run › Bounds checks off: recompiled at the next frame, the data kept.
    app().session().pause();
    frames(2);
    float before = x(0);
    int64_t steps = app().session().steps();
    app().session().set_bounds_checks(false);
    frames(1);
    EXPECT_FALSE(app().session().bounds_checks());
    EXPECT_EQ(x(0), before) << "the data survives the recompile";
    EXPECT_EQ(app().session().steps(), steps);
    app().session().step_once();
    frames(3);
    EXPECT_EQ(x(0), before + 1.0f);
    EXPECT_FALSE(app().session().error().has_value());
    host_.reset();
  }
}

}  // namespace
}  // namespace loom::editor
