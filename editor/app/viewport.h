// The viewport panel: play, pause, step and reset; the menu of what to show; frames per
// second, frame, kernel and compile time and edit-to-running latency on screen; the colour
// map's legend and range; the value under the cursor; camera input. The scene itself is
// drawn under the panel (its window has no background): render() brings the scene's layers
// up to date with the running program and draws them into scene_rect(), before the UI, in
// the same render pass.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "compiler/graph/view_settings.h"
#include "editor/app/control_rect.h"
#include "editor/app/live_session.h"
#include "editor/app/probe_runner.h"
#include "editor/app/view_data.h"
#include "runtime/render/camera.h"
#include "runtime/render/mesh.h"

namespace loom::render {
class SceneRenderer;
class PointsLayer;
class TextureLayer;
class MeshLayer;
struct Frame;
}  // namespace loom::render
struct ImDrawList;

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

  // What is shown: the document's view (the app sets it every frame from the document), or
  // a view chosen in the Show menu for this session only (choosing edits nothing; it lasts
  // until the document's view changes or another program opens). "Save as the default view"
  // calls `on_save_default` (the app writes the document's view: an undoable edit).
  const graph::ViewSettings& view() const { return view_; }
  void set_view(const graph::ViewSettings& view);
  void choose(const graph::ViewSettings& view);
  bool chosen() const { return chosen_.has_value(); }
  std::function<void(const graph::ViewSettings&)> on_choose;        // after a choice (may be unset)
  std::function<void(const graph::ViewSettings&)> on_save_default;  // "Save as the default view"
  int window_flags = 0;  // ImGuiWindowFlags added to the panel's own (the app tiles it)

  // A probe shown instead of the view (nullptr, or one with an error: the view again): a 2-d
  // probe as an image, a 1-d probe of 2- or 3-vectors as points, anything else as numbers on
  // the scene. `version` moves when its values do.
  void show_probe(const ProbeValues* probe, uint64_t version);
  bool probing() const { return probe_ != nullptr; }

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

  // The colour map of scalars (points coloured by a resource, an image of scalars): its range
  // per coloured resource, "auto" (the data's at each upload) or fixed; the legend shows it.
  ColorRange& color_range(const std::string& resource) { return ranges_[resource]; }
  bool legend_shown() const { return legend_; }
  ValueRange legend_range() const;  // what the colour map spans now
  // The value under the cursor at the last draw() (the viewport hovered), as its tooltip says.
  const std::optional<HoveredValue>& hovered() const { return hovered_; }
  const std::string& hovered_text() const { return hovered_text_; }

  // "play", "step", "reset", "fit", "show" (the view menu), "show.<i>" (its entries),
  // "save-default", "range.auto", "range.fixed", "range.min", "range.max", "legend", "scene":
  // where they were drawn.
  const std::map<std::string, ControlRect>& controls() const { return controls_; }

 private:
  void toolbar(LiveSession& session);
  void overlay(LiveSession& session, const ViewportTimes& times);
  void legend(ImDrawList* dl);
  void range_controls();
  void hover(const std::string& resource_label);
  void show(const graph::ViewSettings& view);
  std::string colored_resource() const;  // whose values the colour map shows, "" none
  const graph::ViewSettings& drawn() const { return probe_ ? probe_view_ : view_; }
  std::string layer_key(const LiveSession& session) const;
  static ImageSnapshot probe_image(const ProbeValues& p);
  static PointsSnapshot probe_points(const ProbeValues& p);
  std::string probe_numbers() const;
  void camera_input();
  void rebuild_layers(LiveSession& session, render::SceneRenderer& scene);
  void drop_layers();
  void fail(LiveSession& session, const std::string& message);
  std::string mesh_path(const LiveSession& session) const;

  graph::ViewSettings view_;      // what is shown
  graph::ViewSettings doc_view_;  // the document's
  std::optional<graph::ViewSettings> chosen_;
  const void* chosen_for_ = nullptr;  // the program the choice was made in
  std::string chosen_path_;
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
  // Host copies of the last upload: the legend's data range and the value under the cursor.
  PointsSnapshot points_data_;
  ImageSnapshot image_data_;
  bool legend_ = false;
  std::map<std::string, ColorRange> ranges_;
  std::optional<HoveredValue> hovered_;
  std::string hovered_text_;
  std::string hover_key_;               // the cursor, camera and upload the hovered value is for
  const ProbeValues* probe_ = nullptr;  // shown instead of the view (the app owns it)
  uint64_t probe_version_ = 0;
  graph::ViewSettings probe_view_;  // how it is drawn ("probe kernel #n.pin", as)
};

}  // namespace loom::editor
