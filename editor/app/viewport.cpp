#include "editor/app/viewport.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "editor/app/view_data.h"
#include "runtime/common/error.h"
#include "runtime/render/colormap.h"
#include "runtime/render/scene_renderer.h"

namespace loom::editor {

namespace {

std::string view_key(const graph::ViewSettings& v) {
  return v.show + "|" + v.as + "|" + v.color_by + "|" + v.mesh + "|" + std::to_string(v.point_size);
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// "0.25" or "(0.25, 1, 3)"
std::string values_text(const std::vector<double>& values) {
  if (values.size() == 1) return number(values[0]);
  std::string s = "(";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + number(values[i]);
  return s + ")";
}

ImU32 ramp_color(double t) {
  uint8_t rgb[3];
  colormap_ramp(t, rgb);
  return IM_COL32(rgb[0], rgb[1], rgb[2], 255);
}

}  // namespace

ViewportPanel::ViewportPanel() = default;
ViewportPanel::~ViewportPanel() = default;

void ViewportPanel::set_view(const graph::ViewSettings& view) {
  if (view == doc_view_) return;
  doc_view_ = view;
  chosen_.reset();
  show(view);
}

void ViewportPanel::choose(const graph::ViewSettings& view) {
  if (view == doc_view_)
    chosen_.reset();
  else
    chosen_ = view;
  show(view);
  if (on_choose) on_choose(view);
}

void ViewportPanel::show(const graph::ViewSettings& view) {
  if (view == view_) return;
  bool same_data = view.show == view_.show && view.as == view_.as;
  view_ = view;
  hovered_.reset();
  hovered_text_.clear();
  hover_key_.clear();
  if (!same_data) fit();
}

std::string ViewportPanel::colored_resource() const {
  if (drawn().as == "points") return drawn().color_by;
  if (drawn().as == "image" && image_data_.colormapped()) return drawn().show;
  return "";
}

ValueRange ViewportPanel::legend_range() const {
  auto it = ranges_.find(colored_resource());
  ColorRange setting = it == ranges_.end() ? ColorRange{} : it->second;
  if (drawn().as == "image")
    return colormap_range(setting, image_data_.value_min, image_data_.value_max);
  return colormap_range(setting, points_data_.scalar_min, points_data_.scalar_max);
}

// ---------------------------------------------------------------- the panel

void ViewportPanel::draw(LiveSession& session, const ViewportTimes& times) {
  // A choice is for the program it was made in: another document opened forgets it.
  const void* program = session.has_program() ? &session.program() : nullptr;
  if (chosen_ && program && (program != chosen_for_ || session.path() != chosen_path_)) {
    chosen_.reset();
    show(doc_view_);
  }
  if (!chosen_ && program) chosen_for_ = program, chosen_path_ = session.path();
  ImGui::Begin("Viewport", nullptr,
               window_flags | ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoScrollbar |
                   ImGuiWindowFlags_NoScrollWithMouse);
  // The toolbar gets the panel colour; below it the scene shows through.
  ImVec2 top = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float toolbar_h = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
  dl->AddRectFilled(ImGui::GetWindowPos(),
                    ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowWidth(), top.y + toolbar_h),
                    ImGui::GetColorU32(ImGuiCol_WindowBg));
  toolbar(session);
  ImGui::Dummy(ImVec2(0, 0));

  ImVec2 at = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 1.0f);
  size.y = std::max(size.y, 1.0f);
  ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  rect_ = render::Rect{at.x * scale.x, at.y * scale.y, size.x * scale.x, size.y * scale.y};
  ImGui::InvisibleButton("##scene", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  controls_["scene"] = ControlRect::last_item();
  camera_input();
  if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
    hover(drawn().show);
  else
    hovered_.reset(), hovered_text_.clear(), hover_key_.clear();
  overlay(session, times);
  if (ImGui::BeginPopup("colour range")) {
    range_controls();
    ImGui::EndPopup();
  }
  ImGui::End();
}

void ViewportPanel::toolbar(LiveSession& session) {
  bool can_run = session.has_program() || session.frame_in_flight();
  if (!can_run) ImGui::BeginDisabled();
  if (ImGui::Button(session.playing() ? "Pause" : "Play", ImVec2(56, 0)))
    session.playing() ? session.pause() : session.play();
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
  // Stop: a frame still running (a loop that never ends) is cancelled and the fields go back
  // to the last good frame; red while the frame is reported stuck.
  ImGui::SameLine();
  bool running = session.frame_in_flight();
  if (!running) ImGui::BeginDisabled();
  bool stuck = session.stuck();  // stop() clears it: pop what was pushed
  if (stuck) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.75f, 0.2f, 0.18f, 1));
  if (ImGui::Button("Stop")) session.stop();
  if (stuck) ImGui::PopStyleColor();
  controls_["stop"] = ControlRect::last_item();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Cancel the frame that is running and go back to the last good frame (Esc)");
  if (!running) ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(120.0f, ImGui::GetContentRegionAvail().x));
  std::vector<graph::ViewSettings> choices;
  if (session.has_program()) choices = view_choices(session.document());
  // A chosen view the program no longer has (a resource renamed or deleted): the document's.
  if (chosen_ && !choices.empty() &&
      std::find(choices.begin(), choices.end(), *chosen_) == choices.end()) {
    chosen_.reset();
    show(doc_view_);
  }
  std::string label = "Show: " + view_label(view_) + (chosen_ ? "  (this session)" : "");
  bool open = ImGui::BeginCombo("##show", label.c_str(), ImGuiComboFlags_HeightLarge);
  controls_["show"] = ControlRect::last_item();
  if (open) {
    for (size_t i = 0; i < choices.size(); ++i) {
      ImGui::PushID(static_cast<int>(i));
      bool selected = choices[i] == view_;
      if (ImGui::Selectable(view_label(choices[i]).c_str(), selected) && !selected)
        choose(choices[i]);
      controls_["show." + std::to_string(i)] = ControlRect::last_item();
      ImGui::PopID();
    }
    if (choices.empty())
      ImGui::TextDisabled("the document has no field, ndarray or texture to show");
    ImGui::Separator();
    bool can_save = !view_.empty() && session.has_program() && session.document().view != view_;
    if (ImGui::Selectable("Save as the default view", false,
                          can_save ? 0 : ImGuiSelectableFlags_Disabled) &&
        on_save_default)
      on_save_default(view_);
    controls_["save-default"] = ControlRect::last_item();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(can_save ? "Write this view into the document (an edit: undo takes it back)"
                                 : "The document already opens with this view");
    if (!colored_resource().empty()) {
      ImGui::Separator();
      range_controls();
    }
    ImGui::EndCombo();
  }
}

// Auto: the colours follow the data's range at each upload; fixed: a value keeps its colour.
void ViewportPanel::range_controls() {
  std::string resource = colored_resource();
  ImGui::PushID("range");
  ColorRange& r = ranges_[resource];
  ImGui::TextDisabled("Colour range of %s", resource.c_str());
  if (ImGui::RadioButton("auto", !r.fixed)) r.fixed = false;
  controls_["range.auto"] = ControlRect::last_item();
  ImGui::SameLine();
  if (ImGui::RadioButton("fixed", r.fixed) && !r.fixed) {
    ValueRange now = legend_range();  // start from what is shown: no colour jumps
    r = ColorRange{true, now.min, now.max};
  }
  controls_["range.fixed"] = ControlRect::last_item();
  if (!r.fixed) ImGui::BeginDisabled();
  ImGui::SetNextItemWidth(110);
  ImGui::InputFloat("min", &r.min, 0, 0, "%.6g");
  controls_["range.min"] = ControlRect::last_item();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::InputFloat("max", &r.max, 0, 0, "%.6g");
  controls_["range.max"] = ControlRect::last_item();
  if (!r.fixed) ImGui::EndDisabled();
  ImGui::PopID();
}

void ViewportPanel::camera_input() {
  const ImGuiIO& io = ImGui::GetIO();
  float sx = io.DisplayFramebufferScale.x, sy = io.DisplayFramebufferScale.y;
  if (ImGui::IsItemActive()) {
    const render::DragButton buttons[] = {render::DragButton::Left, render::DragButton::Right,
                                          render::DragButton::Middle};
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

void ViewportPanel::overlay(LiveSession& session, const ViewportTimes& times) {
  ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  ImVec2 at(rect_.x / scale.x + 8, rect_.y / scale.y + 6);
  char text[512];
  if (!session.has_program() && session.frame_in_flight()) {
    std::snprintf(text, sizeof text,
                  session.stuck() ? "running %.1f s: stuck? Stop cancels it" : "running %.1f s",
                  session.running_seconds());
  } else if (!session.has_program()) {
    std::snprintf(text, sizeof text, "no program");
  } else {
    auto ms = [](double v, const char* format) {
      char b[32] = "--";
      if (v >= 0) std::snprintf(b, sizeof b, format, v);
      return std::string(b) + " ms";
    };
    char fps[32] = "--";
    if (times.frame_ms > 0) std::snprintf(fps, sizeof fps, "%.0f", 1000.0 / times.frame_ms);
    std::snprintf(
        text, sizeof text,
        "%s fps   frame %s   kernels %s   compile %s\nedit to running %s   step %lld   %s   %s",
        fps, ms(times.frame_ms, "%.1f").c_str(), ms(times.kernel_ms, "%.2f").c_str(),
        ms(times.compile_ms, "%.1f").c_str(), ms(times.latency_ms, "%.0f").c_str(),
        static_cast<long long>(session.steps()), session.playing() ? "playing" : "paused",
        session.program().device_name().c_str());
  }
  if (probe_) {  // the probe replaces the view: say so, and print what has no picture
    std::string line = probe_view_.as == "numbers" ? probe_numbers() : probe_view_.show;
    std::snprintf(text + std::strlen(text), sizeof text - std::strlen(text), "\n%s", line.c_str());
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 size = ImGui::CalcTextSize(text);
  dl->AddRectFilled(ImVec2(at.x - 4, at.y - 2), ImVec2(at.x + size.x + 4, at.y + size.y + 2),
                    IM_COL32(0, 0, 0, 150), 3.0f);
  dl->AddText(at, IM_COL32(230, 230, 230, 255), text);
  legend_ = problem_.empty() && !colored_resource().empty() &&
            (drawn().as == "image" ? texture_ != nullptr
                                   : points_ != nullptr && !points_data_.scalars.empty());
  if (legend_) legend(dl);
  if (!problem_.empty()) {
    ImVec2 p(rect_.x / scale.x + 8,
             (rect_.y + rect_.height) / scale.y - ImGui::GetTextLineHeight() * 2 - 8);
    float wrap = std::max(100.0f, rect_.width / scale.x - 16);
    ImVec2 s = ImGui::CalcTextSize(problem_.c_str(), nullptr, false, wrap);
    dl->AddRectFilled(ImVec2(p.x - 4, p.y - 2), ImVec2(p.x + s.x + 4, p.y + s.y + 2),
                      IM_COL32(60, 10, 10, 200), 3.0f);
    dl->AddText(nullptr, 0.0f, p, IM_COL32(255, 150, 140, 255), problem_.c_str(), nullptr, wrap);
  }
}

// The colour map with the values at its ends, bottom right; a click opens the range's
// controls.
void ViewportPanel::legend(ImDrawList* dl) {
  ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  ValueRange r = legend_range();
  std::string resource = colored_resource();
  const ColorRange& setting = ranges_[resource];
  std::string title = resource + (setting.fixed ? "  (fixed)" : "  (auto)");
  std::string lo = number(r.min), hi = number(r.max);
  float line = ImGui::GetTextLineHeight();
  float bar_w = std::clamp(rect_.width / scale.x * 0.3f, 120.0f, 220.0f), bar_h = 10.0f;
  float right = (rect_.x + rect_.width) / scale.x - 10,
        bottom = (rect_.y + rect_.height) / scale.y - 8;
  ImVec2 box0(right - bar_w - 8, bottom - bar_h - 2 * line - 10), box1(right, bottom);
  dl->AddRectFilled(box0, box1, IM_COL32(0, 0, 0, 150), 3.0f);
  ImVec2 bar0(box0.x + 4, box0.y + line + 5);
  const int kSteps = 32;
  for (int i = 0; i < kSteps; ++i) {
    float x0 = bar0.x + bar_w * i / kSteps, x1 = bar0.x + bar_w * (i + 1) / kSteps;
    ImU32 a = ramp_color(static_cast<double>(i) / kSteps),
          b = ramp_color(static_cast<double>(i + 1) / kSteps);
    dl->AddRectFilledMultiColor(ImVec2(x0, bar0.y), ImVec2(x1 + 0.5f, bar0.y + bar_h), a, b, b, a);
  }
  ImU32 text = IM_COL32(230, 230, 230, 255);
  dl->AddText(ImVec2(box0.x + 4, box0.y + 3), text, title.c_str());
  float label_y = bar0.y + bar_h + 2;
  dl->AddText(ImVec2(bar0.x, label_y), text, lo.c_str());
  dl->AddText(ImVec2(bar0.x + bar_w - ImGui::CalcTextSize(hi.c_str()).x, label_y), text,
              hi.c_str());
  controls_["legend"] = ControlRect{box0.x, box0.y, box1.x, box1.y};
  ImVec2 m = ImGui::GetIO().MousePos;
  bool over = m.x >= box0.x && m.x <= box1.x && m.y >= box0.y && m.y <= box1.y;
  if (over && ImGui::IsWindowHovered() && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
      ImGui::GetIO().MouseDragMaxDistanceSqr[0] < 16)
    ImGui::OpenPopup("colour range");
}

// The element under the cursor: the image's texel, or the nearest point within 12 pixels.
void ViewportPanel::hover(const std::string& resource_label) {
  const ImGuiIO& io = ImGui::GetIO();
  float mx = io.MousePos.x * io.DisplayFramebufferScale.x,
        my = io.MousePos.y * io.DisplayFramebufferScale.y;
  char key[256];
  std::snprintf(key, sizeof key, "%g %g %llu %g %g %g %g %g %g", mx, my,
                static_cast<unsigned long long>(uploads_), camera_.target.x, camera_.target.y,
                camera_.target.z, camera_.view_height, camera_.distance,
                camera_.yaw + camera_.pitch * 7);
  if (key != hover_key_) {
    hover_key_ = key;
    hovered_.reset();
    hovered_text_.clear();
    if (texture_ && image_data_.width > 0 && camera_.mode == render::CameraMode::Planar) {
      render::Vec3 w = camera_.world_at(mx, my, rect_);
      hovered_ = image_value_at(image_data_, w.x, w.y);
      if (hovered_)
        hovered_text_ = resource_label + "[" + std::to_string(hovered_->index[0]) + ", " +
                        std::to_string(hovered_->index[1]) + "] = " + values_text(hovered_->values);
    } else if ((points_ || mesh_) && points_data_.count > 0) {
      float radius = 12.0f * io.DisplayFramebufferScale.x;
      hovered_ =
          point_value_at(points_data_, camera_.view_projection(rect_), rect_, mx, my, radius);
      if (hovered_) {
        hovered_text_ = resource_label + "[" + std::to_string(hovered_->element) +
                        "] = " + values_text(hovered_->values);
        if (hovered_->has_color_value)
          hovered_text_ += "\n" + drawn().color_by + ": " + number(hovered_->color_value);
      }
    }
  }
  if (!hovered_text_.empty()) ImGui::SetTooltip("%s", hovered_text_.c_str());
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
  if (!doc.empty() && doc != "<memory>")
    return (fs::path(doc).parent_path() / mesh).lexically_normal().string();
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

// ---------------------------------------------------------------- probes

void ViewportPanel::show_probe(const ProbeValues* probe, uint64_t version) {
  if (probe && !probe->error.empty()) probe = nullptr;
  probe_ = probe;
  probe_version_ = version;
  if (!probe) return;
  std::string what = probe->kernel + " #" + std::to_string(probe->pin.node) + "." + probe->pin.pin;
  int comps = probe->type.components();
  probe_view_ = graph::ViewSettings{};
  probe_view_.show = "probe " + what;
  if (probe->shape.size() == 2 && comps <= 4) {
    probe_view_.as = "image";
  } else if (probe->shape.size() == 1 && probe->shape[0] > 1 && (comps == 2 || comps == 3)) {
    probe_view_.as = "points";
  } else {
    probe_view_.as = "numbers";
  }
}

std::string ViewportPanel::layer_key(const LiveSession& session) const {
  if (probe_) return "probe|" + probe_view_.show + "|" + probe_view_.as;
  return view_key(view_) + "|" + mesh_path(session);
}

ImageSnapshot ViewportPanel::probe_image(const ProbeValues& p) {
  int comps = p.type.components();
  return image_of(p.shape.at(0), p.shape.at(1), comps, [&](size_t e, int c) {
    return p.values[e * static_cast<size_t>(comps) + static_cast<size_t>(c)];
  });
}

PointsSnapshot ViewportPanel::probe_points(const ProbeValues& p) {
  PointsSnapshot s;
  int comps = p.type.components();
  s.dims = comps;
  s.count = static_cast<size_t>(p.shape.at(0));
  s.positions.reserve(p.values.size());
  for (double v : p.values) s.positions.push_back(static_cast<float>(v));
  return s;
}

// A probe too small for a picture (one value, or a short list): its numbers on the scene.
std::string ViewportPanel::probe_numbers() const {
  if (!probe_) return "";
  std::string text = probe_view_.show + " = ";
  int comps = probe_->type.components();
  size_t shown =
      std::min<size_t>(probe_->values.size() / static_cast<size_t>(std::max(comps, 1)), 8);
  for (size_t e = 0; e < shown; ++e) {
    text += e ? ", " : "";
    if (comps > 1) text += "(";
    for (int c = 0; c < comps; ++c)
      text += (c ? ", " : "") +
              number(probe_->values[e * static_cast<size_t>(comps) + static_cast<size_t>(c)]);
    if (comps > 1) text += ")";
  }
  if (probe_->values.size() / static_cast<size_t>(std::max(comps, 1)) > shown) text += ", ...";
  return text;
}

void ViewportPanel::rebuild_layers(LiveSession& session, render::SceneRenderer& scene) {
  drop_layers();
  scene_ = &scene;
  layers_for_ = layer_key(session);
  data_version_ = ~0ull;
  problem_.clear();
  points_data_ = PointsSnapshot{};
  image_data_ = ImageSnapshot{};
  if (drawn().empty()) return;
  try {
    if (drawn().as == "points") {
      points_ = &scene.add_points();
    } else if (drawn().as == "image") {
      texture_ = &scene.add_texture();
    } else if (drawn().as == "mesh") {
      mesh_ = &scene.add_mesh(render::Mesh::load_obj(mesh_path(session)));
    }
  } catch (const Error& e) {
    fail(session, e.what());
  }
}

void ViewportPanel::render(LiveSession& session, render::SceneRenderer& scene,
                           const render::Frame& frame) {
  if (!session.has_program()) {
    if (!session.frame_in_flight()) {  // while a frame runs, the last one's picture stays
      drop_layers();
      layers_for_.clear();
    }
  } else {
    if (&scene != scene_ || layers_for_ != layer_key(session)) rebuild_layers(session, scene);
    const void* program = &session.program();
    if (program != program_seen_) {
      program_seen_ = program;
      data_version_ = ~0ull;
    }
    uint64_t version = probe_ ? probe_version_ : session.data_version();
    if (version != data_version_ && (points_ || texture_ || mesh_)) {
      data_version_ = version;
      try {
        if (points_ || mesh_) {
          points_data_ = probe_ ? probe_points(*probe_) : read_points(session.program(), view_);
          image_data_ = ImageSnapshot{};
          const PointsSnapshot& s = points_data_;
          render::PositionData pos;
          pos.name = drawn().show;
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
            float auto_size = std::clamp(
                rect_.height * 0.5f / std::sqrt(static_cast<float>(std::max<size_t>(s.count, 1))),
                2.0f, 8.0f);
            points_->style.size = drawn().point_size > 0 ? drawn().point_size : auto_size;
          } else {
            mesh_->update_positions(pos);
          }
        } else {
          image_data_ = probe_ ? probe_image(*probe_) : read_image(session.program(), view_);
          points_data_ = PointsSnapshot{};
          const ImageSnapshot& img = image_data_;
          render::TextureData t;
          t.name = drawn().show;
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
    // The colour map's range: cheap to set every frame, so a fixed range applies at once.
    ValueRange range = legend_range();
    if (points_) points_->style.scalar_min = range.min, points_->style.scalar_max = range.max;
    if (texture_) texture_->style.value_min = range.min, texture_->style.value_max = range.max;
  }
  render::Bounds now = scene.bounds();
  if (auto_fit_ && !now.empty()) {  // refit when what is shown leaves what was framed
    render::Bounds grown = seen_;
    grown.add(now.min);
    grown.add(now.max);
    if (seen_.empty() || grown.min.x < seen_.min.x || grown.min.y < seen_.min.y ||
        grown.min.z < seen_.min.z || grown.max.x > seen_.max.x || grown.max.y > seen_.max.y ||
        grown.max.z > seen_.max.z) {
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
