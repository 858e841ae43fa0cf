#include "editor/app/live_session.h"

#include <fstream>
#include <iterator>

#include "compiler/graph/document_json.h"
#include "engine_plugin/api/offline_cache.h"
#include "runtime/common/abi_serialize.h"

namespace loom::editor {

namespace fs = std::filesystem;

namespace {

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

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

}  // namespace

LiveSession::LiveSession(ProgramOptions options) : options_(std::move(options)) {}

void LiveSession::note(LogEntry::Level level, const std::string& message, Place place) {
  log_.push_back({level, message, std::move(place)});
  while (log_.size() > 500) log_.pop_front();
}

void LiveSession::start_program(const graph::Document& document) {
  auto program = std::make_unique<Program>(options_);
  program->load(document);
  program_ = std::move(program);
  ++data_version_;
  needs_init_ = true;
  steps_ = 0;
}

void LiveSession::open(graph::Document document) {
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
    note(LogEntry::Level::Error, "opened " + where + " but it does not run: " + e.message(), e.place());
  }
  running_ = std::move(document);
  running_key_ = graph::program_key(running_);
}

void LiveSession::open_file(const std::string& path) {
  std::string text = read_text(path);
  graph::Document doc = graph::load_document(text, path);
  open(std::move(doc));
  path_ = path;
  disk_text_ = text;
  std::error_code ec;
  disk_time_ = fs::last_write_time(path, ec);
}

void LiveSession::edit(const graph::Document& document, Clock::time_point edited_at) {
  if (!pending_) pending_since_ = edited_at;  // the oldest edit not yet running
  pending_ = document;
  unsaved_ = document;
  autosave_due_ = true;
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
      std::snprintf(buf, sizeof buf, "reloaded in %.1f ms: %d kernel instantiation%s compiled, %d kept", r.ms,
                    r.kernels_compiled, r.kernels_compiled == 1 ? "" : "s", r.kernels_reused);
      note(LogEntry::Level::Info, buf);
    }
    running_ = std::move(doc);
    running_key_ = std::move(key);
    error_.reset();
    return true;
  } catch (const Error& e) {
    error_ = e;
    note(LogEntry::Level::Error, e.message(), e.place());
    return false;
  }
}

void LiveSession::reload_from_disk() {
  std::error_code ec;
  auto t = fs::last_write_time(path_, ec);
  if (ec || t == disk_time_) return;
  disk_time_ = t;
  std::string text = read_text(path_);
  if (text == disk_text_) return;  // our own save, or a touch
  disk_text_ = text;
  try {
    graph::Document doc = graph::load_document(text, path_);
    note(LogEntry::Level::Notice, path_ + " changed on disk: reloading");
    external_ = doc;
    edit(doc);
  } catch (const Error& e) {
    error_ = e;
    note(LogEntry::Level::Error, "the file changed on disk and does not load: " + std::string(e.what()), e.place());
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
  bool landed = false;
  Clock::time_point edit_time = pending_since_;
  if (pending_) {
    auto t0 = Clock::now();
    landed = apply_edit();
    t.reload_ms = ms_since(t0);
  }
  if (!program_) return t;
  try {
    if (reset_requested_) {
      reset_requested_ = false;
      program_->load(running_);  // fresh storage
      needs_init_ = true;
      steps_ = 0;
    }
    auto t0 = Clock::now();
    bool ran = false;
    if (needs_init_) {
      needs_init_ = false;
      if (program_->has_pipeline("init")) program_->run_pipeline("init");
      ran = true;
    }
    if ((playing_ || step_requested_) && program_->has_pipeline("step")) {
      step_requested_ = false;
      program_->run_pipeline("step");
      ++steps_;
      ran = true;
    }
    if (ran || landed) ++data_version_;
    if (ran) {
      program_->synchronize();
      t.step_ms = ms_since(t0);
    }
  } catch (const Error& e) {
    playing_ = false;
    error_ = e;
    note(LogEntry::Level::Error, std::string("stopped: ") + e.message(), e.place());
  }
  if (landed && !error_) t.latency_ms = ms_since(edit_time);
  if (autosave_due_ && Clock::now() - last_autosave_ >= autosave_every_) write_autosave();
  return t;
}

std::string LiveSession::autosave_path() const {
  std::string name = path_.empty() ? "untitled" : fs::path(path_).stem().string();
  std::string where = path_.empty() ? "untitled" : fs::absolute(path_).string();
  return (fs::path(recovery_dir()) / (name + "-" + hash128_hex(where).substr(0, 12) + ".loom.json")).string();
}

std::string LiveSession::recovery_for(const std::string& path) {
  LiveSession probe{ProgramOptions{}};
  probe.path_ = path;
  std::string rec = probe.autosave_path();
  std::error_code ec;
  if (!fs::exists(rec, ec)) return "";
  if (!path.empty() && fs::exists(path, ec) && fs::last_write_time(rec, ec) <= fs::last_write_time(path, ec)) return "";
  return rec;
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
  disk_time_ = fs::last_write_time(target, ec);
  unsaved_.reset();
  autosave_due_ = false;
  note(LogEntry::Level::Info, "saved " + target);
}

}  // namespace loom::editor
