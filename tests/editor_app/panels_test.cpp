// The editor's panels: the logic behind them (launch values, argpack members, the code
// view's instantiation) and every panel drawn headless for every sample graph.
#include <gtest/gtest.h>

#include <imgui.h>

#include "compiler/graph/document_json.h"
#include "editor/app/optimise_panel.h"
#include "editor/app/panels.h"
#include "editor/app/program_panel.h"

namespace loom::editor {
namespace {

std::string sample(const std::string& name) {
  return std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + name + ".loom.json";
}

ProgramOptions quiet() {
  ProgramOptions o;
  o.offline_cache = false;
  o.warn = [](const std::string&) {};
  return o;
}

TEST(Panels, LaunchValuesAreFoundAndEditedInTheDocument) {
  graph::Document doc = graph::load_document_file(sample("heat"));
  std::vector<LaunchValue> values = launch_values(doc);
  ASSERT_EQ(values.size(), 2u);  // k of both diffuse launches in `step`
  EXPECT_EQ(values[0].pipeline, "step");
  EXPECT_EQ(values[0].param, "k");
  EXPECT_EQ(values[0].type, (ValueType{Scalar::F32}));
  EXPECT_DOUBLE_EQ(values[0].components.at(0), 0.2);
  LaunchValue v = values[1];
  v.components[0] = 0.125;
  graph::Document edited = with_launch_value(doc, v);
  EXPECT_DOUBLE_EQ(launch_values(edited)[1].components.at(0), 0.125);
  EXPECT_DOUBLE_EQ(launch_values(edited)[0].components.at(0), 0.2);  // only that launch
  EXPECT_NE(graph::save_document(edited).find("0.125"), std::string::npos);
}

TEST(Panels, ArgpackMembersIncludeStructsButNotNestedPacks) {
  graph::Document doc = graph::load_document_file(std::string(LOOM_SOURCE_DIR) +
                                                  "/tests/e2e/docs/taichi_argpacks.loom.json");
  std::vector<MemberValue> members = argpack_values(doc);
  auto has = [&](const std::string& pack, const std::string& path) {
    for (const MemberValue& m : members)
      if (m.pack == pack && m.path == path) return true;
    return false;
  };
  EXPECT_TRUE(has("abc", "a"));
  EXPECT_TRUE(has("abc", "c"));
  EXPECT_TRUE(has("ws", "element.a"));  // a struct member, stored inline
  EXPECT_TRUE(has("outer", "b"));
  EXPECT_FALSE(has("outer", "c.a"));  // a nested pack: edited as its own argpack
}

TEST(Panels, TheCodeViewShowsTheFirstLaunchesInstantiation) {
  graph::Document doc = graph::load_document_file(sample("heat"));
  Args args = first_launch_args(doc, "diffuse");
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0].second.resource(), "temperature");
  EXPECT_TRUE(first_launch_args(doc, "nope").empty());
}

// Every panel, for every sample, a few headless frames: nothing throws, the code panel
// produces IR, SPIR-V and LLVM IR.
TEST(Panels, EveryPanelDrawsForEverySample) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(1280, 800);
  io.IniFilename = nullptr;
  unsigned char* pixels;
  int w, h;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(1));
  for (const char* name : {"heat", "life", "julia", "nbody", "mpm88", "cloth", "cannon"}) {
    SCOPED_TRACE(name);
    LiveSession session(quiet());
    session.open_file(sample(name));
    session.frame();
    PanelState state;
    EditorDocument doc(session.document());
    ProgramPanel program;
    OptimisePanel optimise;
    int edits = 0;
    state.edit = [&](graph::Document) { ++edits; };
    for (int kind = 0; kind < 3; ++kind) {
      state.code_kind = kind;
      for (int f = 0; f < 2; ++f) {
        io.DeltaTime = 1.0f / 60;
        ImGui::NewFrame();
        program.draw(doc, session, state);
        draw_parameters_panel(session, state);
        draw_code_panel(session, state);
        draw_log_panel(session, state);
        optimise.draw(session, state);
        ImGui::Render();
      }
      EXPECT_FALSE(state.code.empty());
      const char* marker = kind == 0 ? "offload" : kind == 1 ? "OpEntryPoint" : "define";
      EXPECT_NE(state.code.find(marker), std::string::npos) << state.code.substr(0, 300);
    }
    EXPECT_EQ(edits, 0);  // drawing alone never edits
    EXPECT_FALSE(doc.can_undo());
  }
  ImGui::DestroyContext();
}

}  // namespace
}  // namespace loom::editor
