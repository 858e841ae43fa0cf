#include "editor/app/optimise_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace loom::editor {

namespace {

constexpr std::chrono::milliseconds kPreviewEvery{1000};  // a replay in the viewport at most

void wrapped(const ImVec4& colour, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

const ImVec4 kGrey(0.6f, 0.6f, 0.6f, 1), kRed(1, 0.45f, 0.4f, 1);

// The range a value starts with: from 0 to twice it (a positive value stays positive, a
// small one moves at its own scale); -1 to 1 around 0.
std::pair<double, double> default_range(double v) {
  if (v == 0) return {-1, 1};
  return {std::min(0.0, 2 * v), std::max(0.0, 2 * v)};
}

}  // namespace

OptimisePanel::OptimisePanel() = default;
OptimisePanel::~OptimisePanel() = default;

void OptimisePanel::refresh_rows(const graph::Document& doc) {
  std::vector<Row> rows;
  for (TunableValue& v : tunable_values(doc)) {
    auto old = std::find_if(rows_.begin(), rows_.end(),
                            [&](const Row& r) { return r.value.name == v.name; });
    Row row;
    if (old != rows_.end()) {
      row = *old;
    } else {
      std::tie(row.min, row.max) = default_range(v.value);
    }
    row.value = std::move(v);
    if (!row.value.problem.empty()) row.tune = false;
    rows.push_back(std::move(row));
  }
  rows_ = std::move(rows);
}

void OptimisePanel::start(LiveSession& session, const graph::Document& doc) {
  refresh_rows(doc);
  message_.clear();
  message_place_ = Place{};
  OptimiseSettings s = settings;
  std::vector<std::string> losses = loss_candidates(doc);
  s.loss = !loss.empty() ? loss : losses.empty() ? std::string() : losses.front();
  s.parameters.clear();
  for (const Row& r : rows_)
    if (r.tune) s.parameters.push_back({r.value.name, r.value.value, r.min, r.max});
  try {
    optimiser_ = std::make_unique<Optimiser>(doc, s);
  } catch (const Error& e) {
    optimiser_.reset();
    message_ = e.what();
    message_place_ = e.place();
    session.note(LogEntry::Level::Error, e.what(), e.place());
    return;
  }
  previewed_ = -1;
  error_logged_ = false;
  optimiser_->start();
  session.note(LogEntry::Level::Info, "optimising " + s.loss + " over " +
                                          std::to_string(s.parameters.size()) + " value" +
                                          (s.parameters.size() == 1 ? "" : "s"));
}

void OptimisePanel::stop() {
  if (optimiser_) optimiser_->stop();
}

void OptimisePanel::keep(LiveSession& session, PanelState& state, const graph::Document& doc) {
  if (!optimiser_) return;
  optimiser_->stop();
  optimiser_->wait();
  graph::Document tuned = optimiser_->tuned(doc);
  OptimiseProgress p = optimiser_->progress();
  std::string label = "Optimise", values;
  for (size_t i = 0; i < optimiser_->settings().parameters.size(); ++i) {
    const std::string& name = optimiser_->settings().parameters[i].name;
    label += (i == 0 ? " " : ", ") + name;
    char text[64];
    std::snprintf(text, sizeof text, " = %.6g", p.values.at(i));
    values += (i == 0 ? "" : ", ") + name + text;
  }
  optimiser_.reset();
  message_.clear();
  if (state.begin_edit) state.begin_edit(label);  // one undo step, named
  if (state.edit) state.edit(std::move(tuned));
  if (state.end_edit) state.end_edit();
  session.reset();
  session.note(LogEntry::Level::Info, "kept " + values + " (Ctrl+Z gives the old values back)");
}

void OptimisePanel::revert(LiveSession& session, const graph::Document& doc) {
  if (!optimiser_) return;
  optimiser_->stop();
  optimiser_->wait();
  optimiser_.reset();
  message_.clear();
  session.preview(doc);  // the document's own values run again
  session.reset();
}

// The viewport replays the simulation with the values now: after each iteration, at most
// once a second (a replay needs time to be seen), and when the run ends.
void OptimisePanel::follow(LiveSession& session, const graph::Document& doc) {
  if (!optimiser_) return;
  OptimiseProgress p = optimiser_->progress();
  if (p.error && !error_logged_) {
    error_logged_ = true;
    message_ = p.error->what();
    message_place_ = p.error->place();
    session.note(LogEntry::Level::Error, message_, message_place_);
  }
  if (p.done() == previewed_ || p.done() == 0) return;
  Clock::time_point now = Clock::now();
  if (p.running && now - preview_at_ < kPreviewEvery) return;
  previewed_ = p.done();
  preview_at_ = now;
  session.preview(optimiser_->tuned(doc));
  session.reset();
  session.play();
}

void OptimisePanel::parameter_table(bool running) {
  ImGuiTableFlags flags =
      ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV;
  if (!ImGui::BeginTable("##tuned values", 4, flags)) return;
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 1.3f);
  ImGui::TableSetupColumn("now", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableSetupColumn("min", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableSetupColumn("max", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableHeadersRow();
  OptimiseProgress p;
  if (optimiser_) p = optimiser_->progress();
  for (Row& r : rows_) {
    const std::string& name = r.value.name;
    ImGui::PushID(name.c_str());
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    bool can = r.value.problem.empty() && !running;
    ImGui::BeginDisabled(!can);
    if (ImGui::Checkbox(name.c_str(), &r.tune)) message_.clear();  // answered
    ImGui::EndDisabled();
    controls_["tune." + name] = ControlRect::last_item();
    std::string where;
    for (const std::string& l : r.value.launches) where += "\n  " + l;
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", (r.value.problem.empty() ? "passed by" + where
                                                       : r.value.problem + "\npassed by" + where)
                                  .c_str());
    ImGui::TableNextColumn();
    // The value now: the optimiser's while it has one, else the document's.
    double now = r.value.value;
    std::optional<double> gradient;
    if (optimiser_) {
      const auto& params = optimiser_->settings().parameters;
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].name != name || i >= p.values.size()) continue;
        now = p.values[i];
        if (i < p.gradients.size()) gradient = p.gradients[i];
      }
    }
    if (!r.value.problem.empty()) {
      ImGui::TextColored(kGrey, "(not tunable)");
      ImGui::PopID();
      continue;
    }
    ImGui::Text("%.5g", now);
    if (gradient && ImGui::IsItemHovered())
      ImGui::SetTooltip("d loss / d %s = %.6g (the last iteration)", name.c_str(), *gradient);
    ImGui::BeginDisabled(running);
    ImGui::TableNextColumn();
    ImGui::SetNextItemWidth(-FLT_MIN);
    ImGui::InputDouble("##min", &r.min, 0, 0, "%.5g");
    controls_["min." + name] = ControlRect::last_item();
    ImGui::TableNextColumn();
    ImGui::SetNextItemWidth(-FLT_MIN);
    ImGui::InputDouble("##max", &r.max, 0, 0, "%.5g");
    controls_["max." + name] = ControlRect::last_item();
    ImGui::EndDisabled();
    ImGui::PopID();
  }
  ImGui::EndTable();
}

// The buttons for where the run is, and its iteration and loss.
void OptimisePanel::toolbar(LiveSession& session, PanelState& state, const graph::Document& doc,
                            bool can_start) {
  if (!optimiser_) {
    ImGui::BeginDisabled(!can_start);
    if (ImGui::Button("Optimise")) start(session, doc);
    controls_["optimise"] = ControlRect::last_item();
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextColored(kGrey, "tick the values to tune, then Optimise");
    return;
  }
  OptimiseProgress p = optimiser_->progress();
  const OptimiseSettings& s = optimiser_->settings();
  if (p.running) {
    if (ImGui::Button("Stop")) stop();
    controls_["stop"] = ControlRect::last_item();
  } else {
    ImGui::BeginDisabled(p.done() == 0);
    bool keep_now = ImGui::Button("Keep");
    controls_["keep"] = ControlRect::last_item();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(
          "write the values now into the document: launch arguments and argpack values (one undo "
          "step)");
    ImGui::SameLine();
    bool revert_now = ImGui::Button("Revert");
    controls_["revert"] = ControlRect::last_item();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("leave the document as it was");
    if (keep_now || revert_now) {
      keep_now ? keep(session, state, doc) : revert(session, doc);
      return;
    }
  }
  char line[200];
  int n = std::snprintf(line, sizeof line, "%s %d/%d", p.running ? "iteration" : "done", p.done(),
                        s.iterations);
  if (!p.running && (p.stopped || p.error))
    n = std::snprintf(line, sizeof line, "%s after %d of %d", p.error ? "failed" : "stopped",
                      p.done(), s.iterations);
  if (!p.losses.empty() && n > 0 && static_cast<size_t>(n) < sizeof line)
    std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "   %s %.4g (from %.4g)",
                  s.loss.c_str(), p.losses.back(), p.losses.front());
  ImGui::SameLine();
  ImGui::TextUnformatted(line);
}

void OptimisePanel::plot() {
  if (!optimiser_) return;
  OptimiseProgress p = optimiser_->progress();
  if (p.losses.empty()) return;
  std::vector<float> plotted;
  plotted.reserve(p.losses.size());
  for (double l : p.losses)
    plotted.push_back(static_cast<float>(log_scale ? std::log10(std::max(l, 1e-30)) : l));
  ImGui::PlotLines("##loss", plotted.data(), static_cast<int>(plotted.size()), 0,
                   log_scale ? "log10 loss" : "loss", FLT_MAX, FLT_MAX,
                   ImVec2(ImGui::GetContentRegionAvail().x, 90));  // 1.86: no -FLT_MIN here
  controls_["plot"] = ControlRect::last_item();
}

void OptimisePanel::draw(LiveSession& session, PanelState& state, int window_flags) {
  ImGui::Begin("Optimise", nullptr, window_flags);
  const graph::Document& doc = state.document ? *state.document : session.document();
  refresh_rows(doc);
  follow(session, doc);
  std::vector<std::string> losses = loss_candidates(doc);
  if (!loss.empty() && std::find(losses.begin(), losses.end(), loss) == losses.end()) loss.clear();
  std::string shown = !loss.empty() ? loss : losses.empty() ? "" : losses.front();

  toolbar(session, state, doc, !losses.empty());
  bool reviewing = optimiser_ != nullptr;  // a run to keep or revert (or still running)
  if (!message_.empty()) {
    wrapped(kRed, message_);
    if (ImGui::IsItemClicked() && state.focus) state.focus(message_place_);
    if (ImGui::IsItemHovered() && message_place_.node >= 0)
      ImGui::SetTooltip("click: show the node");
  }
  if (losses.empty())
    wrapped(kGrey,
            "No loss: declare a float field or ndarray with gradients (its inspector's "
            "gradients row: grad) and write the loss into it from the pipelines.");

  // The settings, on three short lines.
  float third = ImGui::GetContentRegionAvail().x * 0.22f;
  ImGui::BeginDisabled(reviewing);
  ImGui::SetNextItemWidth(third);
  if (ImGui::BeginCombo("loss", shown.c_str())) {
    for (const std::string& l : losses)
      if (ImGui::Selectable(l.c_str(), l == shown)) loss = l;
    ImGui::EndCombo();
  }
  controls_["loss"] = ControlRect::last_item();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("minimised: the sum of its elements after init, the steps and loss");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(third);
  int method = settings.method == OptimiseSettings::Method::Adam ? 0 : 1;
  if (ImGui::Combo("method", &method, "Adam\0gradient\0"))
    settings.method =
        method == 0 ? OptimiseSettings::Method::Adam : OptimiseSettings::Method::Gradient;
  controls_["method"] = ControlRect::last_item();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(third);
  ImGui::InputDouble("step size", &settings.step_size, 0, 0, "%.4g");
  controls_["step_size"] = ControlRect::last_item();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "Adam: each iteration moves a value by about this fraction of its range\n"
        "gradient: value -= step size x d loss / d value");
  ImGui::SetNextItemWidth(third);
  ImGui::InputInt("steps", &settings.steps, 0);
  controls_["steps"] = ControlRect::last_item();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("runs of the step pipeline recorded per iteration");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(third);
  ImGui::InputInt("iterations", &settings.iterations, 0);
  controls_["iterations"] = ControlRect::last_item();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::Checkbox("log plot", &log_scale);

  plot();
  if (rows_.empty())
    wrapped(kGrey, "No launch of init, step or loss passes a float value to tune.");
  else
    parameter_table(reviewing);
  ImGui::End();
}

}  // namespace loom::editor
