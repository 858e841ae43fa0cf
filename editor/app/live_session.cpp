#include "editor/app/live_session.h"

#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>

#include "compiler/graph/document_json.h"
#include "engine_plugin/api/offline_cache.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/file_version.h"
#include "runtime/common/input_file.h"

namespace loom::editor {

namespace fs = std::filesystem;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A regular file of bounded size: a FIFO or a device in the document's place must be an
// error, not a frozen editor.
std::string read_text(const std::string& path) { return read_text_file_checked(path, "document"); }

// Writes atomically: a crash mid-write leaves the old file, never half a document.
void write_text(const std::string& path, const std::string& text) {
  std::error_code ec;
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path(), ec);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw Error(Place{path}, "cannot write " + tmp);
  }
  fs::rename(tmp, path, ec);
  if (ec) throw Error(Place{path}, "cannot replace " + path + ": " + ec.message());
}

std::string recovery_dir() {
  std::string base = OfflineCache::default_directory();
  return (fs::path(base.empty() ? fs::temp_directory_path().string() : base) / "recovery").string();
}

// The first `while` node of a graph, depth first: the loop a hanging kernel most likely spins in.
int first_while(const std::vector<graph::Node>& nodes) {
  for (const graph::Node& n : nodes) {
    if (n.type == "while") return n.id;
    for (const graph::Region& r : n.regions)
      if (int id = first_while(r.nodes); id >= 0) return id;
  }
  return -1;
}

}  // namespace

// Runs one job at a time on its own thread. The state is shared with the thread, so a worker
// whose job never ends can be let go (detached) without the thread outliving what it uses.
class FrameWorker {
 public:
  FrameWorker() : state_(std::make_shared<State>()) {
    thread_ = std::thread([s = state_] { run(*s); });
  }

  // Waits up to `patience` for a running job (cancelled by then, or finished), then joins;
  // a job still running is left to finish on its detached thread.
  ~FrameWorker() {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->quit = true;
    }
    state_->wake.notify_all();
    if (wait(std::chrono::milliseconds(1000)))
      thread_.join();
    else
      thread_.detach();
  }

  void start(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->job = std::move(job);
      state_->done = false;
      state_->error.reset();
    }
    state_->wake.notify_all();
  }

  // True when the job finished within `timeout` (or none runs).
  bool wait(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(state_->mutex);
    return state_->finished.wait_for(lock, timeout, [&] { return state_->done; });
  }
  void wait() {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->finished.wait(lock, [&] { return state_->done; });
  }

  // What the finished job threw.
  std::optional<Error> take_error() {
    std::lock_guard<std::mutex> lock(state_->mutex);
    std::optional<Error> e = std::move(state_->error);
    state_->error.reset();
    return e;
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable wake, finished;
    std::function<void()> job;
    bool done = true;
    bool quit = false;
    std::optional<Error> error;
  };

  static void run(State& s) {
    std::unique_lock<std::mutex> lock(s.mutex);
    for (;;) {
      s.wake.wait(lock, [&] { return s.quit || s.job; });
      if (!s.job) return;
      std::function<void()> job = std::move(s.job);
      s.job = nullptr;
      lock.unlock();
      std::optional<Error> error;
      try {
        job();
      } catch (const Error& e) {
        error = e;
      } catch (const std::exception& e) {
        error = Error(e.what());
      }
      job = nullptr;  // the program it holds may be the last reference: destroyed here
      lock.lock();
      s.error = std::move(error);
      s.done = true;
      s.finished.notify_all();
    }
  }

  std::shared_ptr<State> state_;
  std::thread thread_;
};

LiveSession::LiveSession(ProgramOptions options) : options_(std::move(options)) {
  options_.cancellable = true;
}

LiveSession::~LiveSession() {
  // A frame in flight: cancel it so the worker's thread ends (CPU); a GPU that does not
  // finish lets the program go (see reap_abandoned).
  if (flight_ && program_) {
    program_->cancel();
    if (flight_->vulkan) abandoned_.push_back(std::move(program_));
  }
  worker_.reset();
  retired_.clear();
  reap_abandoned(true);
}

Program& LiveSession::program() {
  if (flight_) {
    if (flight_->vulkan)
      program_->synchronize();
    else
      worker_->wait();
  }
  return *program_;
}

double LiveSession::running_seconds() const {
  if (!flight_) return 0;
  return std::chrono::duration<double>(Clock::now() - flight_->started).count();
}

void LiveSession::note(LogEntry::Level level, const std::string& message, Place place) {
  if (!log_.empty() && log_.back().level == level && log_.back().message == message &&
      log_.back().place.kernel == place.kernel && log_.back().place.node == place.node) {
    ++log_.back().repeats;  // the log stays readable while edits keep failing the same way
    return;
  }
  log_.push_back({level, message, std::move(place), 1});
  while (log_.size() > 500) log_.pop_front();
}

void LiveSession::start_program(const graph::Document& document) {
  auto program = std::make_shared<Program>(options_);
  // A kernel with checks makes each Vulkan launch wait for the GPU to read its error record.
  // On a GPU that runs a loop for ever (every real one: only llvmpipe ends long loops, and
  // reports it) that wait would freeze the editor where a stuck frame is otherwise stopped,
  // so checks start off there unless asked for (Run > Bounds checks).
  if (options_.debug && !bounds_checks_chosen_ && program->backend() == Backend::Vulkan &&
      program->device_name().find("llvmpipe") == std::string::npos) {
    options_.debug = false;
    program = std::make_shared<Program>(options_);
    note(LogEntry::Level::Notice,
         "bounds checks are off on " + program->device_name() +
             ": with them every launch waits for the GPU, and a kernel that never ends would "
             "freeze the editor (Run > Bounds checks turns them on)");
  }
  program->load(document);
  // Compiled here, not by the first launch: a frame's time on the worker is the kernels'
  // alone, so a long compile is never taken for a kernel that hangs.
  program->prepare_pipelines(true);
  program_ = std::move(program);
  refresh_warnings();
  ++data_version_;
  needs_init_ = true;
  snapshot_due_ = true;
  steps_ = 0;
}

void LiveSession::open(graph::Document document) {
  if (flight_) stop();  // the old program's frame ends before another document opens
  pending_.reset();
  error_.reset();
  unsaved_.reset();
  std::string where = document.path.empty() ? std::string("<memory>") : document.path;
  try {
    start_program(document);
    note(LogEntry::Level::Info, "opened " + where + " on " + program_->device_name());
  } catch (const Error& e) {  // the document stays open for editing; the next good edit starts it
    program_.reset();
    error_ = e;
    note(LogEntry::Level::Error, "opened " + where + " but it does not run: " + e.message(),
         e.place());
  }
  running_ = std::move(document);
  running_key_ = graph::program_key(running_);
}

void LiveSession::open_file(const std::string& path) {
  FileStamp stamp = file_stamp(path);  // before reading: a later write shows a later stamp
  std::string text = read_text(path);
  graph::Document doc = graph::load_document(text, path);
  open(std::move(doc));
  path_ = path;
  disk_text_ = text;
  disk_stamp_ = stamp;
}

void LiveSession::edit(const graph::Document& document, Clock::time_point edited_at) {
  if (!pending_) pending_since_ = edited_at;  // the oldest edit not yet running
  pending_ = document;
  unsaved_ = document;
  autosave_due_ = true;
}

void LiveSession::preview(const graph::Document& document) {
  if (!pending_) pending_since_ = Clock::now();
  pending_ = document;
}

bool LiveSession::apply_edit() {
  graph::Document doc = std::move(*pending_);
  pending_.reset();
  std::string key = graph::program_key(doc);
  if (program_ && key == running_key_) {  // layout only (or back to what runs): nothing to compile
    running_ = std::move(doc);
    error_.reset();
    return false;
  }
  try {
    if (!program_) {
      start_program(doc);
      note(LogEntry::Level::Info, "started on " + program_->device_name());
    } else {
      ReloadReport r = program_->reload(doc);
      for (const std::string& n : r.notices) note(LogEntry::Level::Notice, n);
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "reloaded in %.1f ms: %d kernel instantiation%s compiled, %d kept", r.ms,
                    r.kernels_compiled, r.kernels_compiled == 1 ? "" : "s", r.kernels_reused);
      note(LogEntry::Level::Info, buf);
    }
    running_ = std::move(doc);
    running_key_ = std::move(key);
    error_.reset();
    refresh_warnings();
    snapshot_due_ = true;
    return true;
  } catch (const Error& e) {
    error_ = e;
    note(LogEntry::Level::Error, e.message(), e.place());
    return false;
  }
}

void LiveSession::reload_from_disk() {
  // The time and size say when to read (a stamp not yet settled says nothing: a write within
  // the same timestamp tick keeps it); the text decides (runtime/common/file_version.h).
  FileStamp stamp = file_stamp(path_);
  if (!stamp.exists) return;
  if (disk_stamp_.settled && stamp.same_time_and_size(disk_stamp_)) return;
  disk_stamp_ = stamp;
  std::string text;
  try {
    text = read_text(path_);
  } catch (const Error& e) {
    error_ = e;
    note(LogEntry::Level::Error,
         "the file changed on disk and cannot be read: " + std::string(e.what()), e.place());
    return;
  }
  if (text == disk_text_) return;  // our own save, or a touch
  disk_text_ = text;
  try {
    graph::Document doc = graph::load_document(text, path_);
    note(LogEntry::Level::Notice, path_ + " changed on disk: reloading");
    external_ = doc;
    edit(doc);
  } catch (const Error& e) {
    error_ = e;
    note(LogEntry::Level::Error,
         "the file changed on disk and does not load: " + std::string(e.what()), e.place());
  }
}

std::optional<graph::Document> LiveSession::take_external_change() {
  std::optional<graph::Document> out = std::move(external_);
  external_.reset();
  return out;
}

FrameTimes LiveSession::frame() {
  FrameTimes t;
  if (!path_.empty() && Clock::now() - last_disk_check_ > std::chrono::milliseconds(250)) {
    last_disk_check_ = Clock::now();
    reload_from_disk();
  }
  reap_abandoned(false);
  // The frame in flight ends first: nothing lands while its launches run. It was waited for
  // when it started; now it is only looked at, so the UI runs on at its own rate.
  if (flight_ && !finish_flight(std::chrono::milliseconds(0), t)) {
    report_stuck();
    if (autosave_due_ && Clock::now() - last_autosave_ >= autosave_every_) write_autosave();
    return t;
  }
  bool landed = false;
  Clock::time_point edit_time = pending_since_;
  if (pending_) {
    auto t0 = Clock::now();
    landed = apply_edit();
    t.reload_ms = ms_since(t0);
  }
  if (recompile_due_) {
    recompile_due_ = false;
    if (program_) recompile_keeping_data();
  }
  if (program_) {
    Flight f;
    try {
      if (reset_requested_) {
        reset_requested_ = false;
        program_->load(running_);  // fresh storage
        program_->prepare_pipelines(true);
        needs_init_ = true;
        snapshot_due_ = true;
        steps_ = 0;
      }
      f.steps_before = steps_;
      if (needs_init_) {
        needs_init_ = false;
        if (program_->has_pipeline("init")) f.pipelines.push_back("init");
      }
      if ((playing_ || step_requested_) && program_->has_pipeline("step")) {
        step_requested_ = false;
        f.pipelines.push_back("step");
        ++steps_;
      }
      if (landed) ++data_version_;
      if (!f.pipelines.empty()) {
        if (snapshot_due_ || Clock::now() - snapshot_.taken >= std::chrono::seconds(1)) {
          take_snapshot();
          snapshot_.steps = f.steps_before;
        }
        f.landed = landed;
        f.edit_time = edit_time;
        f.vulkan = program_->backend() == Backend::Vulkan;
        f.started = Clock::now();
        landed = false;  // its latency is the frame's, reported when it ends
        if (f.vulkan) {
          // Recorded and submitted here; the GPU runs it while the UI goes on.
          for (const std::string& p : f.pipelines) program_->run_pipeline(p);
        } else {
          if (!worker_) worker_ = std::make_unique<FrameWorker>();
          worker_->start([program = program_, pipelines = f.pipelines] {
            for (const std::string& p : pipelines) program->run_pipeline(p);
          });
        }
        flight_ = f;
        if (!finish_flight(frame_wait_, t)) report_stuck();
      }
    } catch (const Error& e) {  // a launch refused while recording (Vulkan), a reset that failed
      if (!f.pipelines.empty()) steps_ = f.steps_before;
      flight_.reset();
      frame_failed(e);
    }
  }
  if (landed && !error_) t.latency_ms = ms_since(edit_time);
  if (autosave_due_ && Clock::now() - last_autosave_ >= autosave_every_) write_autosave();
  return t;
}

// Collects the frame in flight if it finished within `wait`.
bool LiveSession::finish_flight(std::chrono::milliseconds wait, FrameTimes& t) {
  Flight& f = *flight_;
  std::optional<Error> failure;
  if (f.vulkan) {
    try {
      if (!program_->synchronize(static_cast<double>(wait.count()))) return false;
    } catch (const Error& e) {
      failure = e;
    }
  } else {
    if (!worker_->wait(wait)) return false;
    failure = worker_->take_error();
  }
  Flight done = std::move(f);
  flight_.reset();
  ++data_version_;
  if (failure) {
    steps_ = done.steps_before;
    frame_failed(*failure);
    return true;
  }
  t.step_ms = ms_since(done.started);
  if (!done.stuck && Clock::now() - done.started >= stuck_limit_) {
    // Past the limit, but nobody looked while it ran: the UI thread was held elsewhere (a
    // renderer sharing the GPU's queue waits for it too). Pause, so it does not go on so.
    playing_ = false;
    char buf[128];
    std::snprintf(buf, sizeof buf, "the frame took %.1f s: paused", t.step_ms / 1000);
    note(LogEntry::Level::Notice, buf, stuck_place(done, ""));
  }
  if (done.stuck) {  // it ended on its own after all
    char buf[96];
    std::snprintf(buf, sizeof buf, "the frame finished after %.1f s", t.step_ms / 1000);
    note(LogEntry::Level::Notice, buf);
    if (error_ && error_->message() == stuck_message_) error_.reset();
  }
  if (done.landed && !error_) t.latency_ms = ms_since(done.edit_time);
  return true;
}

void LiveSession::frame_failed(const Error& e) {
  playing_ = false;
  error_ = e;
  note(LogEntry::Level::Error, std::string("stopped: ") + e.message(), e.place());
}

Place LiveSession::stuck_place(const Flight& flight, const std::string& running_kernel) const {
  Place place;
  place.document = running_.path;
  // On Vulkan a launch returns once recorded: the frame's first kernel with a loop is the
  // likely one.
  std::string kernel = running_kernel;
  if (kernel.empty()) {
    for (const std::string& p : flight.pipelines)
      if (const graph::Pipeline* pipe = running_.pipeline(p))
        for (const auto& launch : pipe->launches)
          if (const graph::KernelDecl* k = running_.kernel(launch.kernel);
              k && first_while(k->nodes) >= 0) {
            if (kernel.empty()) kernel = k->name;
          }
  }
  place.kernel = kernel;
  if (const graph::KernelDecl* k = running_.kernel(kernel)) place.node = first_while(k->nodes);
  return place;
}

void LiveSession::report_stuck() {
  if (!flight_ || flight_->stuck || Clock::now() - flight_->started < stuck_limit_) return;
  flight_->stuck = true;
  // No further frame starts by itself: a frame that ends on its own after all (a GPU that
  // cuts long loops short, a heavy step) does not begin another such wait.
  playing_ = false;
  Place place = stuck_place(*flight_, flight_->vulkan ? std::string() : program_->running_kernel());
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", running_seconds());
  std::string what =
      place.kernel.empty() ? std::string("the frame") : "kernel '" + place.kernel + "'";
  // error() names the place itself (what() prefixes it); the log line says it in words.
  std::string msg = std::string("running for ") + secs +
                    (place.node >= 0 ? ": does this loop ever end?" : "") +
                    " Paused; Stop ends it (the data goes back to the last finished frame)";
  error_ = Error(place, msg);
  stuck_message_ = msg;
  note(LogEntry::Level::Error, what + " has been " + msg, place);
}

bool LiveSession::stop() {
  if (!flight_) return false;
  Place place = stuck_place(*flight_, flight_->vulkan ? std::string() : program_->running_kernel());
  Flight f = std::move(*flight_);
  flight_.reset();
  playing_ = false;
  step_requested_ = false;
  program_->cancel();
  bool ended = false;
  std::optional<Error> why;
  if (f.vulkan) {
    try {
      ended = program_->synchronize(0.0);
    } catch (const Error& e) {  // a lost device: give it up
      why = e;
    }
  } else {
    ended = worker_->wait(std::chrono::milliseconds(1000));  // a cancel takes microseconds
    if (ended) why = worker_->take_error();
  }
  if (why && why->place().node >= 0)
    place.node = why->place().node;  // the loop that saw the cancel
  std::string what =
      place.kernel.empty() ? std::string("the frame") : "kernel '" + place.kernel + "'";
  ++data_version_;
  try {
    if (ended) {
      program_->clear_cancel();
      restore_snapshot(*program_);
    } else {
      give_up_program();
    }
  } catch (const Error& e) {
    program_.reset();
    error_ = e;
    note(LogEntry::Level::Error,
         "stopped " + what + " but the program could not be made again: " + e.message(), e.place());
    return true;
  }
  std::string msg = "stopped " + what + (ended ? "" : " (left to finish on its own)") +
                    ": the data is back at the last finished frame, step " + std::to_string(steps_);
  error_ = Error(place, "stopped: it did not finish");  // marks the node until an edit runs
  note(LogEntry::Level::Error, msg, place);
  return true;
}

// The program did not stop: it is left to its worker (CPU) or the GPU (Vulkan), and a fresh
// one runs the same document from the snapshot.
void LiveSession::give_up_program() {
  if (program_->backend() == Backend::Vulkan) {
    abandoned_.push_back(std::move(program_));
  } else {
    retired_.push_back(std::move(worker_));
    program_.reset();
  }
  auto fresh = std::make_shared<Program>(options_);
  fresh->load(running_);
  fresh->prepare_pipelines(true);
  restore_snapshot(*fresh);
  program_ = std::move(fresh);
  needs_init_ = false;
}

void LiveSession::set_bounds_checks(bool on) {
  bounds_checks_chosen_ = true;
  if (options_.debug == on) return;
  options_.debug = on;
  recompile_due_ = true;
}

// The running document compiled afresh with the session's options, its data carried over
// from the program that ran it (no frame is in flight: frame() calls this after the last one
// ended). A document that no longer compiles keeps its old program, the error on its node.
void LiveSession::recompile_keeping_data() {
  take_snapshot();
  snapshot_.steps = steps_;
  try {
    auto fresh = std::make_shared<Program>(options_);
    fresh->load(running_);
    fresh->prepare_pipelines(true);
    restore_snapshot(*fresh);
    program_ = std::move(fresh);
    refresh_warnings();
    ++data_version_;
    note(LogEntry::Level::Info,
         std::string("bounds checks ") + (options_.debug ? "on" : "off") + ": kernels recompiled");
  } catch (const Error& e) {
    error_ = e;
    note(LogEntry::Level::Error, e.message(), e.place());
  }
}

void LiveSession::refresh_warnings() {
  try {
    warnings_ = program_->warnings();
    task_notes_ = program_->task_notes();
  } catch (const Error& e) {  // the program compiled, so its kernels lower; kept for safety
    warnings_.clear();
    task_notes_.clear();
    note(LogEntry::Level::Error, "checking for likely mistakes failed: " + e.message(), e.place());
  }
  ++warnings_version_;
}

void LiveSession::take_snapshot() {
  snapshot_ = Snapshot{};
  snapshot_.steps = steps_;
  snapshot_.taken = Clock::now();
  snapshot_due_ = false;
  for (const std::string& name : program_->resource_names()) {
    Snapshot::Data d;
    d.name = name;
    try {
      ArrayView a = program_->array(name);
      d.bytes.assign(a.data, a.data + a.bytes);
    } catch (const Error&) {
      try {
        TextureView tv = program_->texture(name);
        d.texture = true;
        d.bytes.assign(tv.data, tv.data + tv.bytes);
      } catch (const Error&) {
        continue;  // an argpack: its values are the document's and set_argpack's, not a frame's
      }
    }
    snapshot_.data.push_back(std::move(d));
  }
}

void LiveSession::restore_snapshot(Program& program) {
  for (const Snapshot::Data& d : snapshot_.data) {
    try {
      uint8_t* data = nullptr;
      size_t bytes = 0;
      if (d.texture) {
        TextureView tv = program.texture(d.name);
        data = tv.data;
        bytes = tv.bytes;
      } else {
        ArrayView a = program.array(d.name);
        data = a.data;
        bytes = a.bytes;
      }
      if (bytes == d.bytes.size()) std::memcpy(data, d.bytes.data(), bytes);
    } catch (const Error&) {  // gone from the program since: nothing to restore
    }
  }
  steps_ = snapshot_.steps;
  snapshot_due_ = true;
}

// Programs given up on Vulkan are destroyed once the GPU finished their work (destroying one
// earlier would wait for it). At exit, a GPU that never finishes keeps its program: leaked.
void LiveSession::reap_abandoned(bool at_exit) {
  for (auto it = abandoned_.begin(); it != abandoned_.end();) {
    bool idle = true;
    try {
      idle = (*it)->synchronize(at_exit ? 10000.0 : 0.0);
    } catch (const Error&) {  // a lost device is idle
    }
    if (idle) {
      it = abandoned_.erase(it);
      continue;
    }
    if (at_exit) {
      // Destroying it would wait for the GPU forever; the process ends without it.
      static_cast<void>(new std::shared_ptr<Program>(std::move(*it)));
      it = abandoned_.erase(it);
      continue;
    }
    ++it;
  }
}

std::string LiveSession::autosave_path() const {
  std::string name = path_.empty() ? "untitled" : fs::path(path_).stem().string();
  std::string where = path_.empty() ? "untitled" : fs::absolute(path_).string();
  return (fs::path(recovery_dir()) / (name + "-" + hash128_hex(where).substr(0, 12) + ".loom.json"))
      .string();
}

std::string LiveSession::recovery_for(const std::string& path) {
  LiveSession probe{ProgramOptions{}};
  probe.path_ = path;
  std::string rec = probe.autosave_path();
  std::error_code ec;
  if (!fs::exists(rec, ec)) return "";
  if (!path.empty() && fs::exists(path, ec) &&
      fs::last_write_time(rec, ec) <= fs::last_write_time(path, ec))
    return "";
  return rec;
}

void LiveSession::forget_unsaved() {
  unsaved_.reset();
  autosave_due_ = false;
  std::error_code ec;
  fs::remove(autosave_path(), ec);
}

void LiveSession::write_autosave() {
  autosave_due_ = false;
  last_autosave_ = Clock::now();
  if (!unsaved_) return;
  try {
    write_text(autosave_path(), graph::save_document(*unsaved_));
  } catch (const Error& e) {
    note(LogEntry::Level::Notice, std::string("autosave failed: ") + e.what());
  }
}

void LiveSession::save(const graph::Document& document, const std::string& path) {
  std::string target = path.empty() ? path_ : path;
  if (target.empty()) throw Error("the document has no file yet: choose where to save it");
  std::string text = graph::save_document(document);
  write_text(target, text);
  std::error_code ec;
  fs::remove(autosave_path(), ec);  // the file has every edit now
  path_ = target;
  disk_text_ = text;
  disk_stamp_ = file_stamp(target);  // a write after ours and in the same tick: not settled
  unsaved_.reset();
  autosave_due_ = false;
  note(LogEntry::Level::Info, "saved " + target);
}

}  // namespace loom::editor
