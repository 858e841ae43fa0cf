// The Optimise panel (a tab beside Code and Spreadsheet): gradient descent on the document's
// launch values (optimiser.h). The user picks the loss, ticks the values to tune with a range
// each, sets the steps recorded per iteration, the step size, the method and the iterations,
// and presses Optimise: a worker thread iterates while the panel plots the loss and shows
// the values, and the viewport replays the simulation with the values now (the live session
// runs them as a preview, not an edit). Stop ends it; Keep writes the values into the
// document (one undo step), Revert leaves the document as it was.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "editor/app/control_rect.h"
#include "editor/app/live_session.h"
#include "editor/app/optimiser.h"
#include "editor/app/panels.h"

namespace loom::editor {

class OptimisePanel {
 public:
  OptimisePanel();
  ~OptimisePanel();
  OptimisePanel(const OptimisePanel&) = delete;
  OptimisePanel& operator=(const OptimisePanel&) = delete;

  // The ImGui window "Optimise": edits the document through `state.edit` (Keep), shows a
  // failure's node through `state.focus`, previews values in `session`.
  void draw(LiveSession& session, PanelState& state, int window_flags = 0);

  // What the buttons do (tests call them too). start() logs and shows why it cannot start.
  void start(LiveSession& session, const graph::Document& doc);
  void stop();
  void keep(LiveSession& session, PanelState& state, const graph::Document& doc);
  void revert(LiveSession& session, const graph::Document& doc);

  // A row of the parameter table: a tunable value, ticked or not, and its range.
  struct Row {
    TunableValue value;
    bool tune = false;
    double min = 0, max = 0;
  };
  std::vector<Row>& rows() { return rows_; }
  std::string loss;  // "" the first candidate
  OptimiseSettings
      settings;           // steps, iterations, step size, method (loss and parameters: the rows)
  bool log_scale = true;  // plot log10 of the loss
  const Optimiser* optimiser() const { return optimiser_.get(); }
  const std::string& message() const { return message_; }  // why it could not start, or failed
  bool select_tab = false;  // the app shows the Optimise tab at the next frame (and clears it)
  // "loss", "tune.<name>", "min.<name>", "max.<name>", "steps", "iterations", "step_size",
  // "method", "optimise", "stop", "keep", "revert", "plot": where they were drawn.
  const std::map<std::string, ControlRect>& controls() const { return controls_; }

 private:
  void refresh_rows(const graph::Document& doc);
  void follow(LiveSession& session, const graph::Document& doc);
  void parameter_table(bool running);
  void toolbar(LiveSession& session, PanelState& state, const graph::Document& doc, bool can_start);
  void plot();

  std::vector<Row> rows_;
  std::unique_ptr<Optimiser> optimiser_;
  int previewed_ = -1;  // the iterations done when the viewport last got the values
  Clock::time_point preview_at_{};
  bool error_logged_ = false;
  std::string message_;
  Place message_place_;
  std::map<std::string, ControlRect> controls_;
};

}  // namespace loom::editor
