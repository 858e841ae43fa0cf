// The running simulation behind the editor: a loom::Program playing a document's `init`
// and `step` pipelines, hot-reloaded at frame boundaries when the document changes (in the
// editor or on disk), with the numbers the editor shows (frame, kernel and compile time,
// edit-to-running latency), a log, and an autosave/recovery file so a crash loses no edits.
// No UI here: the editor drives it once per frame, tests drive it directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "compiler/graph/document.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

namespace loom::editor {

using Clock = std::chrono::steady_clock;

struct LogEntry {
  enum class Level { Info, Notice, Error } level = Level::Info;
  std::string message;
  Place place;  // kernel/function, node and pin when the entry is about one
};

struct FrameTimes {
  double step_ms = 0;      // kernels of this frame (the `step` pipeline, or `init` after a reset)
  double reload_ms = 0;    // validation, compilation and swap applied at this frame's start
  double latency_ms = -1;  // edit to the first frame running it; -1 when no edit landed now
};

class LiveSession {
 public:
  explicit LiveSession(ProgramOptions options);

  // Opens a document: from a file (watched for outside changes) or from memory. Throws
  // loom::Error when the file does not read as a document (the session keeps what it had).
  // A document that reads but does not compile stays open without a program: error() says
  // why (its place marks the node) and the next edit that compiles starts it.
  void open_file(const std::string& path);
  void open(graph::Document document);
  bool has_program() const { return program_ != nullptr; }
  Program& program() { return *program_; }
  const graph::Document& document() const { return running_; }
  const std::string& path() const { return path_; }

  // The document was edited: it becomes the running program at the next frame boundary, if
  // it compiles (an error is logged with its place, the previous kernels keep running).
  // Layout-only edits are not reloads. `edited_at` starts the edit-to-running clock.
  void edit(const graph::Document& document, Clock::time_point edited_at = Clock::now());

  // Play controls. A reset re-runs `init` on fresh storage at the next frame.
  void play() { playing_ = true; }
  void pause() { playing_ = false; }
  void step_once() { step_requested_ = true; }
  void reset() { reset_requested_ = true; }
  bool playing() const { return playing_; }
  int64_t steps() const { return steps_; }
  // Bumps whenever the program's data may have changed (kernels ran, a reload or a reset):
  // the viewport re-reads what it shows only then.
  uint64_t data_version() const { return data_version_; }

  // One frame boundary: applies a pending edit or reset, reloads the file if it changed on
  // disk, runs `step` when playing (or stepping), writes the autosave when due.
  FrameTimes frame();

  // A document that changed on disk since the last call (the editor replaces its model).
  std::optional<graph::Document> take_external_change();

  // The last failed reload (its place marks the node), cleared by the next good one.
  const std::optional<Error>& error() const { return error_; }
  const std::deque<LogEntry>& log() const { return log_; }
  void note(LogEntry::Level level, const std::string& message, Place place = {});

  // Saving and recovery. save() writes the document canonically and removes the autosave.
  void save(const graph::Document& document, const std::string& path = "");
  std::string autosave_path() const;
  // A recovery file newer than the document at `path` (edits a crash did not save), or "".
  static std::string recovery_for(const std::string& path);
  void set_autosave_interval(std::chrono::milliseconds every) { autosave_every_ = every; }

 private:
  bool apply_edit();  // true when new kernels now run
  void reload_from_disk();
  void start_program(const graph::Document& document);
  void write_autosave();

  ProgramOptions options_;
  std::unique_ptr<Program> program_;
  graph::Document running_;                   // what the program runs
  std::optional<graph::Document> pending_;    // an edit waiting for the frame boundary
  Clock::time_point pending_since_{};
  std::string running_key_;                   // the document without its layout
  std::string path_;
  std::filesystem::file_time_type disk_time_{};
  std::string disk_text_;                     // what is on disk (ours or loaded)
  Clock::time_point last_disk_check_{};
  bool playing_ = false;
  bool step_requested_ = false;
  bool reset_requested_ = false;
  bool needs_init_ = true;
  int64_t steps_ = 0;
  uint64_t data_version_ = 0;
  std::optional<Error> error_;
  std::deque<LogEntry> log_;
  std::optional<graph::Document> unsaved_;    // the editor's latest document, for autosave
  std::optional<graph::Document> external_;   // changed on disk, for the editor's model
  bool autosave_due_ = false;
  Clock::time_point last_autosave_{};
  std::chrono::milliseconds autosave_every_{2000};
};

}  // namespace loom::editor
