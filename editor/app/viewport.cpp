#include "editor/app/viewport.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "editor/app/view_data.h"
#include "runtime/common/error.h"
#include "runtime/render/scene_renderer.h"

namespace loom::editor {

namespace {

std::string view_key(const graph::ViewSettings& v) {
  return v.show + "|" + v.as + "|" + v.color_by + "|" + v.mesh + "|" + std::to_string(v.point_size);
}

}  // namespace

ViewportPanel::ViewportPanel() = default;
ViewportPanel::~ViewportPanel() = default;

void ViewportPanel::set_view(const graph::ViewSettings& view) {
  if (view == view_) return;
  bool same_data = view.show == view_.show && view.as == view_.as;
  view_ = view;
  if (!same_data) fit();
}

// ---------------------------------------------------------------- the panel

void ViewportPanel::draw(LiveSession& session, const ViewportTimes& times) {
  ImGui::Begin("Viewport", nullptr,
               window_flags | ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  // The toolbar gets the panel colour; below it the scene shows through.
  ImVec2 top = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float toolbar_h = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
  dl->AddRectFilled(ImGui::GetWindowPos(), ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowWidth(), top.y + toolbar_h),
                    ImGui::GetColorU32(ImGuiCol_WindowBg));
  toolbar(session);
  ImGui::Dummy(ImVec2(0, 0));

  ImVec2 at = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 1.0f);
  size.y = std::max(size.y, 1.0f);
  ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  rect_ = render::Rect{at.x * scale.x, at.y * scale.y, size.x * scale.x, size.y * scale.y};
  ImGui::InvisibleButton("##scene", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                                              ImGuiButtonFlags_MouseButtonMiddle);
  controls_["scene"] = ControlRect::last_item();
  camera_input();
  overlay(session, times);
  ImGui::End();
}

void ViewportPanel::toolbar(LiveSession& session) {
  bool can_run = session.has_program();
  if (!can_run) ImGui::BeginDisabled();
  if (ImGui::Button(session.playing() ? "Pause" : "Play", ImVec2(56, 0))) session.playing() ? session.pause() : session.play();
  controls_["play"] = ControlRect::last_item();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Play or pause the step pipeline (F5)");
  ImGui::SameLine();
  if (ImGui::Button("Step")) session.step_once();
  controls_["step"] = ControlRect::last_item();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Run the step pipeline once (F6)");
  ImGui::SameLine();
  if (ImGui::Button("Reset")) session.reset();
  controls_["reset"] = ControlRect::last_item();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Fresh storage, run init again (F7)");
  ImGui::SameLine();
  if (ImGui::Button("Fit")) fit();
  controls_["fit"] = ControlRect::last_item();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Frame what is shown (double-click the viewport)");
  if (!can_run) ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(120.0f, ImGui::GetContentRegionAvail().x));
  std::vector<graph::ViewSettings> choices;
  if (session.has_program()) choices = view_choices(session.document());
  bool open = ImGui::BeginCombo("##show", ("Show: " + view_label(view_)).c_str());
  controls_["show"] = ControlRect::last_item();
  if (open) {
    for (size_t i = 0; i < choices.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      bool selected = choices[i] == view_;
      if (ImGui::Selectable(view_label(choices[i]).c_str(), selected) && !selected) {
        set_view(choices[i]);
        if (on_choose) on_choose(choices[i]);
      }
      ImGui::PopID();
    }
    if (choices.empty()) ImGui::TextDisabled("the document has no field, ndarray or texture to show");
    ImGui::EndCombo();
  }
}

void ViewportPanel::camera_input() {
  const ImGuiIO& io = ImGui::GetIO();
  float sx = io.DisplayFramebufferScale.x, sy = io.DisplayFramebufferScale.y;
  if (ImGui::IsItemActive()) {
    const render::DragButton buttons[] = {render::DragButton::Left, render::DragButton::Right, render::DragButton::Middle};
    for (int b = 0; b < 3; ++b)
      if (ImGui::IsMouseDragging(b, 0.0f) && (io.MouseDelta.x != 0 || io.MouseDelta.y != 0)) {
        camera_.drag(buttons[b], io.MouseDelta.x * sx, io.MouseDelta.y * sy, rect_);
        auto_fit_ = false;
        break;
      }
  }
  if (ImGui::IsItemHovered()) {
    if (io.MouseWheel != 0) {
      camera_.scroll(io.MouseWheel, io.MousePos.x * sx, io.MousePos.y * sy, rect_);
      auto_fit_ = false;
    }
    if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) fit();
  }
}

void ViewportPanel::overlay(LiveSession& session, const ViewportTimes& times) const {
  ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  ImVec2 at(rect_.x / scale.x + 8, rect_.y / scale.y + 6);
  char text[512];
  if (!session.has_program()) {
    std::snprintf(text, sizeof text, "no program");
  } else {
    auto ms = [](double v, const char* format) {
      char b[32] = "--";
      if (v >= 0) std::snprintf(b, sizeof b, format, v);
      return std::string(b) + " ms";
    };
    std::snprintf(text, sizeof text, "frame %s   kernels %s   compile %s   edit to running %s\nstep %lld   %s   %s",
                  ms(times.frame_ms, "%.1f").c_str(), ms(times.kernel_ms, "%.2f").c_str(),
                  ms(times.compile_ms, "%.1f").c_str(), ms(times.latency_ms, "%.0f").c_str(),
                  static_cast<long long>(session.steps()), session.playing() ? "playing" : "paused",
                  session.program().device_name().c_str());
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 size = ImGui::CalcTextSize(text);
  dl->AddRectFilled(ImVec2(at.x - 4, at.y - 2), ImVec2(at.x + size.x + 4, at.y + size.y + 2), IM_COL32(0, 0, 0, 150), 3.0f);
  dl->AddText(at, IM_COL32(230, 230, 230, 255), text);
  if (!problem_.empty()) {
    ImVec2 p(rect_.x / scale.x + 8, (rect_.y + rect_.height) / scale.y - ImGui::GetTextLineHeight() * 2 - 8);
    float wrap = std::max(100.0f, rect_.width / scale.x - 16);
    ImVec2 s = ImGui::CalcTextSize(problem_.c_str(), nullptr, false, wrap);
    dl->AddRectFilled(ImVec2(p.x - 4, p.y - 2), ImVec2(p.x + s.x + 4, p.y + s.y + 2), IM_COL32(60, 10, 10, 200), 3.0f);
    dl->AddText(nullptr, 0.0f, p, IM_COL32(255, 150, 140, 255), problem_.c_str(), nullptr, wrap);
  }
}

// ---------------------------------------------------------------- the scene

void ViewportPanel::fail(LiveSession& session, const std::string& message) {
  problem_ = message;
  if (message != problem_logged_) {
    session.note(LogEntry::Level::Error, "viewport: " + message);
    problem_logged_ = message;
  }
}

std::string ViewportPanel::mesh_path(const LiveSession& session) const {
  namespace fs = std::filesystem;
  fs::path mesh(view_.mesh);
  if (mesh.is_absolute()) return mesh.string();
  std::string doc = session.path().empty() ? session.document().path : session.path();
  if (!doc.empty() && doc != "<memory>") return (fs::path(doc).parent_path() / mesh).lexically_normal().string();
  return mesh.string();
}

void ViewportPanel::drop_layers() {
  if (scene_) {
    if (points_) scene_->remove(*points_);
    if (texture_) scene_->remove(*texture_);
    if (mesh_) scene_->remove(*mesh_);
  }
  points_ = nullptr;
  texture_ = nullptr;
  mesh_ = nullptr;
}

void ViewportPanel::rebuild_layers(LiveSession& session, render::SceneRenderer& scene) {
  drop_layers();
  scene_ = &scene;
  layers_for_ = view_key(view_) + "|" + mesh_path(session);
  data_version_ = ~0ull;
  problem_.clear();
  if (view_.empty()) return;
  try {
    if (view_.as == "points") {
      points_ = &scene.add_points();
    } else if (view_.as == "image") {
      texture_ = &scene.add_texture();
    } else if (view_.as == "mesh") {
      mesh_ = &scene.add_mesh(render::Mesh::load_obj(mesh_path(session)));
    }
  } catch (const Error& e) {
    fail(session, e.what());
  }
}

void ViewportPanel::render(LiveSession& session, render::SceneRenderer& scene, const render::Frame& frame) {
  if (!session.has_program()) {
    drop_layers();
    layers_for_.clear();
  } else {
    if (&scene != scene_ || layers_for_ != view_key(view_) + "|" + mesh_path(session)) rebuild_layers(session, scene);
    const void* program = &session.program();
    if (program != program_seen_) {
      program_seen_ = program;
      data_version_ = ~0ull;
    }
    if (session.data_version() != data_version_ && (points_ || texture_ || mesh_)) {
      data_version_ = session.data_version();
      try {
        if (points_ || mesh_) {
          PointsSnapshot s = read_points(session.program(), view_);
          render::PositionData pos;
          pos.name = view_.show;
          pos.data = s.positions.data();
          pos.count = s.count;
          pos.dims = s.dims;
          three_d_ = s.dims == 3;
          if (points_) {
            render::PointData d;
            d.positions = pos;
            d.scalars = s.scalars.empty() ? nullptr : s.scalars.data();
            points_->update(d);
            points_->style.shaded = three_d_;
            float auto_size = std::clamp(rect_.height * 0.5f / std::sqrt(static_cast<float>(std::max<size_t>(s.count, 1))), 2.0f, 8.0f);
            points_->style.size = view_.point_size > 0 ? view_.point_size : auto_size;
          } else {
            mesh_->update_positions(pos);
          }
        } else {
          ImageSnapshot img = read_image(session.program(), view_);
          render::TextureData t;
          t.name = view_.show;
          t.format = img.format;
          t.texels = img.texels.data();
          t.width = img.width;
          t.height = img.height;
          t.depth = img.depth;
          texture_->update(t);
          three_d_ = false;
        }
        ++uploads_;
        problem_.clear();
      } catch (const Error& e) {
        fail(session, e.what());
      }
    }
  }
  render::Bounds now = scene.bounds();
  if (auto_fit_ && !now.empty()) {  // refit when what is shown leaves what was framed
    render::Bounds grown = seen_;
    grown.add(now.min);
    grown.add(now.max);
    if (seen_.empty() || grown.min.x < seen_.min.x || grown.min.y < seen_.min.y || grown.min.z < seen_.min.z ||
        grown.max.x > seen_.max.x || grown.max.y > seen_.max.y || grown.max.z > seen_.max.z) {
      seen_ = grown;
      fit_pending_ = true;
    }
  }
  if (fit_pending_ && !now.empty() && rect_.width > 0 && rect_.height > 0) {
    fit_pending_ = false;
    render::CameraMode mode = three_d_ ? render::CameraMode::Orbit : render::CameraMode::Planar;
    if (mode != camera_.mode) {
      camera_.mode = mode;
      camera_.yaw = three_d_ ? 0.6f : 0.0f;
      camera_.pitch = three_d_ ? 0.45f : 0.0f;
    }
    camera_.fit(auto_fit_ && !seen_.empty() ? seen_ : now, rect_.width / rect_.height);
  }
  scene.draw(frame, rect_, camera_);
}

}  // namespace loom::editor
