// The viewport panel: play, pause, step and reset; the menu of what to show; frame, kernel
// and compile time and edit-to-running latency on screen; camera input. The scene itself is
// drawn under the panel (its window has no background): render() brings the scene's layers
// up to date with the running program and draws them into scene_rect(), before the UI, in
// the same render pass.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "compiler/graph/view_settings.h"
#include "editor/app/control_rect.h"
#include "editor/app/live_session.h"
#include "runtime/render/camera.h"
#include "runtime/render/mesh.h"

namespace loom::render {
class SceneRenderer;
class PointsLayer;
class TextureLayer;
class MeshLayer;
struct Frame;
}  // namespace loom::render

namespace loom::editor {

// The times the viewport prints, smoothed by the app.
// A negative time is printed as "--" (not measured yet, or hidden for screenshots).
struct ViewportTimes {
  double frame_ms = 0;     // one frame of the editor, wall clock
  double kernel_ms = 0;    // the kernels of one step
  double compile_ms = -1;  // the last reload (validation, compilation, swap)
  double latency_ms = -1;  // the last edit to its first running frame
};

class ViewportPanel {
 public:
  ViewportPanel();
  ~ViewportPanel();
  ViewportPanel(const ViewportPanel&) = delete;
  ViewportPanel& operator=(const ViewportPanel&) = delete;

  // The ImGui window "Viewport" (inside an ImGui frame): toolbar, times, camera input.
  void draw(LiveSession& session, const ViewportTimes& times);
  // Updates the layers (new data only when the session's data version moved) and draws
  // them into scene_rect(); problems (a mesh that does not load, a resource that changed
  // type) are shown in the panel and logged once. Call between begin_frame and end_frame.
  void render(LiveSession& session, render::SceneRenderer& scene, const render::Frame& frame);

  // What is shown. The app sets it from the document; a choice in the menu calls `on_choose`
  // (the app records it in the document, as an undoable layout-like edit).
  const graph::ViewSettings& view() const { return view_; }
  void set_view(const graph::ViewSettings& view);
  std::function<void(const graph::ViewSettings&)> on_choose;
  int window_flags = 0;  // ImGuiWindowFlags added to the panel's own (the app tiles it)

  render::Camera& camera() { return camera_; }
  // Frames what is shown, and keeps framing it as it spreads (particles falling, a cloth
  // draping) until the camera is moved by hand.
  void fit() {
    fit_pending_ = true;
    auto_fit_ = true;
    seen_ = render::Bounds{};
  }
  // The scene's rectangle in frame pixels (after the last draw()).
  const render::Rect& scene_rect() const { return rect_; }
  // Why nothing is drawn ("" when the view draws).
  const std::string& problem() const { return problem_; }
  uint64_t uploads() const { return uploads_; }
  // "play", "step", "reset", "fit", "show" (the view menu), "scene": where they were drawn.
  const std::map<std::string, ControlRect>& controls() const { return controls_; }

 private:
  void toolbar(LiveSession& session);
  void overlay(LiveSession& session, const ViewportTimes& times) const;
  void camera_input();
  void rebuild_layers(LiveSession& session, render::SceneRenderer& scene);
  void drop_layers();
  void fail(LiveSession& session, const std::string& message);
  std::string mesh_path(const LiveSession& session) const;

  graph::ViewSettings view_;
  std::string layers_for_;  // the view (and scene) the layers were made for
  render::SceneRenderer* scene_ = nullptr;
  render::PointsLayer* points_ = nullptr;
  render::TextureLayer* texture_ = nullptr;
  render::MeshLayer* mesh_ = nullptr;
  uint64_t data_version_ = ~0ull;
  const void* program_seen_ = nullptr;
  render::Camera camera_;
  bool fit_pending_ = true;
  bool auto_fit_ = true;
  render::Bounds seen_;  // everything shown since the last fit
  bool three_d_ = false;
  render::Rect rect_;
  std::string problem_;
  std::string problem_logged_;
  uint64_t uploads_ = 0;
  std::map<std::string, ControlRect> controls_;
};

}  // namespace loom::editor
