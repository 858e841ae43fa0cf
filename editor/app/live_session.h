// The running simulation behind the editor: a loom::Program playing a document's `init`
// and `step` pipelines, hot-reloaded at frame boundaries when the document changes (in the
// editor or on disk), with the numbers the editor shows (frame, kernel and compile time,
// edit-to-running latency), a log, and an autosave/recovery file so a crash loses no edits.
// No UI here: the editor drives it once per frame, tests drive it directly.
//
// Threads. A frame's launches (`init` after a reset, `step` when playing) run off the UI
// thread, so a kernel that never ends cannot hang the editor:
//   - CPU: a worker thread (FrameWorker) runs one frame's launches per request.
//   - Vulkan: the UI thread records and submits them (cheap, and the queue may be the
//     renderer's, used from that thread only); the GPU runs them while the UI goes on.
// frame() waits for the frame it starts for at most frame_wait (500 ms): a usual frame has
// finished by then, so the editor sees what it always did. A longer one stays in flight:
// frame_in_flight() is true, has_program() is false (the UI must not touch the Program then;
// the viewport keeps drawing the last finished frame's data), and later frame() calls look
// (without waiting) and collect it once done. The UI thread touches the Program only between
// frames: edits, resets and snapshots land at the boundary after the frame in flight finished.
// program() waits for a frame in flight.
//
// A frame past stuck_limit (2 s) is reported once: a log error naming the kernel and its loop
// node (error() marks the node), stuck() true, playing paused (no next frame starts by itself).
// stop() ends it, pausing: on the CPU kernels are compiled `cancellable` (they poll at loop
// back-edges) and the launch is cancelled; on Vulkan, or if the cancel does not take within a
// second, the program is given up (left to finish on its own: the CPU worker thread or the GPU
// keeps it until then) and a fresh one is made from the running document. Either way the fields,
// ndarrays and textures go back to the snapshot of the last good frame boundary; the document is
// untouched, and an edit (undo) lands as usual. Snapshots are host copies of every array and
// texture, taken before a frame when an edit, a reset or a stop landed, or when the last one is
// older than a second (on Vulkan this reads the storage back and uploads it again: at most once a
// second).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"
#include "runtime/common/file_version.h"

namespace loom::editor {

using Clock = std::chrono::steady_clock;

struct LogEntry {
  enum class Level { Info, Notice, Error } level = Level::Info;
  std::string message;
  Place place;      // kernel/function, node and pin when the entry is about one
  int repeats = 1;  // the same entry again and again (an edit after edit failing alike) is one
};

struct FrameTimes {
  double step_ms = 0;      // kernels of this frame (the `step` pipeline, or `init` after a reset)
  double reload_ms = 0;    // validation, compilation and swap applied at this frame's start
  double latency_ms = -1;  // edit to the first frame running it; -1 when no edit landed now
};

class FrameWorker;

class LiveSession {
 public:
  // Kernels are compiled `cancellable` (ProgramOptions::cancellable) whatever `options` say.
  explicit LiveSession(ProgramOptions options);
  ~LiveSession();
  LiveSession(const LiveSession&) = delete;
  LiveSession& operator=(const LiveSession&) = delete;

  // Opens a document: from a file (watched for outside changes) or from memory. Throws
  // loom::Error when the file does not read as a document (the session keeps what it had).
  // A document that reads but does not compile stays open without a program: error() says
  // why (its place marks the node) and the next edit that compiles starts it.
  void open_file(const std::string& path);
  void open(graph::Document document);
  // A program runs the document and the UI may use it now: false while a frame is in flight.
  bool has_program() const { return program_ != nullptr && !flight_; }
  // Waits for a frame in flight, a stuck one too: ask has_program() first. (The frame's
  // results are collected by the next frame().)
  Program& program();
  const graph::Document& document() const { return running_; }
  const std::string& path() const { return path_; }

  // The document was edited: it becomes the running program at the next frame boundary, if
  // it compiles (an error is logged with its place, the previous kernels keep running).
  // Layout-only edits are not reloads. `edited_at` starts the edit-to-running clock.
  void edit(const graph::Document& document, Clock::time_point edited_at = Clock::now());
  // Runs `document` from the next frame boundary as edit() does, but it is not an edit: it
  // is not autosaved (the Optimise panel's trial values). The editor's next edit replaces it.
  void preview(const graph::Document& document);

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
  // disk, runs `step` when playing (or stepping), writes the autosave when due. Never waits
  // for kernels longer than frame_wait: a frame still running then is collected by a later
  // call (its times are reported then), and nothing else lands before it finished.
  FrameTimes frame();

  // A frame's launches are running (started by an earlier frame() and not yet collected).
  bool frame_in_flight() const { return flight_.has_value(); }
  // The frame in flight ran past the stuck limit (reported in the log and error()).
  bool stuck() const { return flight_ && flight_->stuck; }
  // Seconds the frame in flight has run, 0 when none.
  double running_seconds() const;
  // Ends the frame in flight and pauses: fields back to the last good frame. False when no
  // frame was in flight. See the top of the file for how, per backend.
  bool stop();
  void set_stuck_limit(std::chrono::milliseconds limit) { stuck_limit_ = limit; }
  // Bounds checks and assertions (ProgramOptions::debug) in the kernels: an index out of
  // range is then an error on its node instead of a write over other memory (CPU) or a
  // dropped store (Vulkan). A change recompiles the running document at the next frame
  // boundary, its data kept. On by default (editor_program_options), except on a Vulkan GPU
  // other than llvmpipe: there a checked launch waits for the GPU, and a kernel that never
  // ends would freeze the editor, so they start off unless set_bounds_checks asks.
  bool bounds_checks() const { return options_.debug; }
  void set_bounds_checks(bool on);
  void set_frame_wait(std::chrono::milliseconds wait) { frame_wait_ = wait; }

  // A document that changed on disk since the last call (the editor replaces its model).
  std::optional<graph::Document> take_external_change();

  // The last failed reload, failed frame, or a frame stuck or stopped (its place marks the
  // node: the loop's, for a stuck frame), cleared by the next good reload.
  const std::optional<Error>& error() const { return error_; }
  const std::deque<LogEntry>& log() const { return log_; }
  // Likely mistakes in the running program's kernels (Program::warnings), refreshed when
  // new kernels start; warnings_version() bumps then, so the canvas re-marks its nodes.
  const std::vector<Program::Warning>& warnings() const { return warnings_; }
  uint64_t warnings_version() const { return warnings_version_; }
  // How each task of the running kernels runs (Program::task_notes: parallel, a reduction,
  // or serial and why), refreshed with the warnings, for the loop nodes.
  const std::vector<Program::TaskNote>& task_notes() const { return task_notes_; }
  void note(LogEntry::Level level, const std::string& message, Place place = {});

  // Saving and recovery. save() writes the document canonically and removes the autosave.
  void save(const graph::Document& document, const std::string& path = "");
  std::string autosave_path() const;
  // The editor's document is the saved one again (an undo back to it, a reload from disk, a
  // quit without saving): nothing is autosaved and the recovery file goes.
  void forget_unsaved();
  // A recovery file newer than the document at `path` (edits a crash did not save), or "".
  static std::string recovery_for(const std::string& path);
  void set_autosave_interval(std::chrono::milliseconds every) { autosave_every_ = every; }

 private:
  bool apply_edit();  // true when new kernels now run
  void reload_from_disk();
  void start_program(const graph::Document& document);
  void write_autosave();

  // The frame whose launches run now.
  struct Flight {
    Clock::time_point started;
    bool vulkan = false;
    bool stuck = false;
    bool landed = false;  // the first frame of an edit: its latency is reported when it ends
    Clock::time_point edit_time;
    int64_t steps_before = 0;
    std::vector<std::string> pipelines;
  };
  // Host copies of every array and texture at a frame boundary.
  struct Snapshot {
    struct Data {
      std::string name;
      bool texture = false;
      std::vector<uint8_t> bytes;
    };
    std::vector<Data> data;
    int64_t steps = 0;
    Clock::time_point taken{};
  };

  bool finish_flight(std::chrono::milliseconds wait, FrameTimes& t);
  void frame_failed(const Error& e);
  void report_stuck();
  Place stuck_place(const Flight& flight, const std::string& running_kernel) const;
  void take_snapshot();
  void refresh_warnings();
  void restore_snapshot(Program& program);
  void give_up_program();
  void recompile_keeping_data();
  void reap_abandoned(bool at_exit);

  ProgramOptions options_;
  std::shared_ptr<Program> program_;     // shared with the worker's job while it runs
  std::unique_ptr<FrameWorker> worker_;  // CPU frames
  std::vector<std::unique_ptr<FrameWorker>>
      retired_;  // CPU workers left with a program that did not stop
  std::vector<std::shared_ptr<Program>> abandoned_;  // Vulkan programs the GPU has not finished
  std::optional<Flight> flight_;
  Snapshot snapshot_;
  bool snapshot_due_ = true;
  std::chrono::milliseconds stuck_limit_{2000};
  std::chrono::milliseconds frame_wait_{500};
  std::vector<Program::Warning> warnings_;
  std::vector<Program::TaskNote> task_notes_;
  uint64_t warnings_version_ = 0;
  std::string stuck_message_;  // error() while stuck, cleared if the frame ends on its own
  graph::Document running_;    // what the program runs
  std::optional<graph::Document> pending_;  // an edit waiting for the frame boundary
  Clock::time_point pending_since_{};
  std::string running_key_;  // the document without its layout
  std::string path_;
  // The file's time and size when disk_text_ was read or written: when to read it again.
  FileStamp disk_stamp_;
  std::string disk_text_;  // what is on disk (ours or loaded): what decides a change
  Clock::time_point last_disk_check_{};
  bool playing_ = false;
  bool step_requested_ = false;
  bool reset_requested_ = false;
  bool recompile_due_ = false;         // the options changed (set_bounds_checks)
  bool bounds_checks_chosen_ = false;  // set_bounds_checks was called: no automatic choice
  bool needs_init_ = true;
  int64_t steps_ = 0;
  uint64_t data_version_ = 0;
  std::optional<Error> error_;
  std::deque<LogEntry> log_;
  std::optional<graph::Document> unsaved_;   // the editor's latest document, for autosave
  std::optional<graph::Document> external_;  // changed on disk, for the editor's model
  bool autosave_due_ = false;
  Clock::time_point last_autosave_{};
  std::chrono::milliseconds autosave_every_{2000};
};

}  // namespace loom::editor
