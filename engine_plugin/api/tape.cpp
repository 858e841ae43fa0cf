#include <loom/tape.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

namespace loom {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// What the program has spent compiling (and reading compiled kernels) so far: the tape's
// times leave it out.
double compile_ms(const Program& p) {
  const Stats& s = p.stats();
  return s.ms_lower + s.ms_passes + s.ms_codegen + s.ms_optimize + s.ms_emit + s.ms_cache_read +
         s.ms_load;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Binomial checkpointing (Griewank's revolve): beta(s, r) = C(s + r, s) launches can be
// reversed with s spare copies when no launch runs forward more than r times after the first.
// Saturates instead of overflowing.
size_t beta(size_t s, size_t r) {
  double b = 1;
  for (size_t i = 1; i <= s; ++i) {
    b = b * static_cast<double>(r + i) / static_cast<double>(i);
    if (b > 1e18) return std::numeric_limits<size_t>::max();
  }
  return static_cast<size_t>(std::llround(b));
}

// Where to put the next copy when reversing n > 1 launches with s >= 1 spare copies: the
// smallest r with beta(s, r) >= n bounds the repetitions; the launches after the split must
// be reversible with s - 1 copies in r repetitions, those before it with s in r - 1.
size_t revolve_split(size_t n, size_t s) {
  size_t r = 1;
  while (beta(s, r) < n) ++r;
  size_t right = std::min(beta(s - 1, r), n - 1);
  return std::clamp<size_t>(n - right, 1, n - 1);
}

std::string kib(size_t bytes) {
  char text[32];
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  if (bytes < (size_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / 1048576.0);
  }
  return text;
}

}  // namespace

struct Tape::Impl {
  // A copy of the state: one byte string per state resource, in the order of `state`; a
  // copy made before later resources joined the state has fewer (those come from `base`).
  struct Copy {
    std::vector<std::vector<uint8_t>> data;
    size_t bytes = 0;
  };
  struct Recorded {
    std::string kernel;
    Args args;
    std::vector<std::string> reads;  // what its adjoint recomputes from
  };
  struct Access {
    std::vector<std::string> reads, writes;
  };
  struct Checkpoint {
    size_t at = 0;  // the state before recorded launch `at`
    Copy copy;
  };

  Program& program;
  TapeOptions options;
  std::vector<Recorded> recorded;
  std::vector<std::string> state;
  std::map<std::string, std::vector<uint8_t>> base;  // each state resource before its first writer
  size_t base_bytes = 0;
  std::vector<Checkpoint> checkpoints;
  std::map<std::string, Access> access_by_launch;  // by launch_key: asked once per binding
  size_t held_copies = 0, held_bytes = 0;          // copies alive now (checkpoints and backward's)
  TapeReport report;

  Impl(Program& p, TapeOptions o) : program(p), options(std::move(o)) {
    std::vector<std::string> names = program.resource_names();
    auto has = [&](const std::string& n) {
      return std::find(names.begin(), names.end(), n) != names.end();
    };
    if (options.loss.empty()) throw Error(Place{}, "tape: no loss given (TapeOptions::loss)");
    if (!has(options.loss))
      throw Error(Place{"", "", -1, options.loss},
                  "tape: the loss '" + options.loss + "' is not a resource of the program");
    if (!has(options.loss + ".grad"))
      throw Error(Place{"", "", -1, options.loss},
                  "tape: the loss '" + options.loss +
                      "' has no adjoint: declare it \"needs_grad\": true in the document");
  }

  bool is_adjoint(const std::string& name) const {
    return ends_with(name, ".grad") || ends_with(name, ".dual");
  }

  bool is_array(const std::string& name) {
    try {
      program.array(name);
      return true;
    } catch (const Error&) {
      return false;  // a texture: not state (not differentiable)
    }
  }

  std::vector<uint8_t> bytes_of(const std::string& name) {
    ArrayView v = program.array(name);
    return std::vector<uint8_t>(v.data, v.data + v.bytes);
  }

  Copy take_copy() {
    Copy c;
    for (const std::string& name : state) {
      c.data.push_back(bytes_of(name));
      c.bytes += c.data.back().size();
    }
    hold(c.bytes);
    return c;
  }

  void hold(size_t bytes) {
    ++held_copies;
    held_bytes += bytes;
    if (held_bytes + base_bytes > report.peak_bytes) report.peak_bytes = held_bytes + base_bytes;
    report.peak_copies = std::max(report.peak_copies, held_copies);
  }

  void release(Copy& c) {
    --held_copies;
    held_bytes -= c.bytes;
    c = Copy{};
  }

  // Writes the state `c` holds back (only the resources in `only`, when given).
  void restore(const Copy& c, const std::vector<std::string>* only = nullptr) {
    for (size_t i = 0; i < state.size(); ++i) {
      if (only && std::find(only->begin(), only->end(), state[i]) == only->end()) continue;
      const std::vector<uint8_t>& src = i < c.data.size() ? c.data[i] : base.at(state[i]);
      program.write_array(state[i], src.data(), src.size());
    }
  }

  size_t state_bytes() {
    size_t b = 0;
    for (const std::string& name : state) b += program.array(name).bytes;
    return b;
  }

  [[noreturn]] void over_budget() {
    std::string names;
    for (const std::string& n : state) names += (names.empty() ? "" : ", ") + n;
    throw Error(Place{}, "tape: a memory budget of " + kib(options.memory_budget) +
                             " cannot hold one copy of the state (" + kib(state_bytes()) + ": " +
                             names +
                             "); raise TapeOptions::memory_budget (loom grad --memory-budget)");
  }

  // Makes room for `need` more bytes of copies within `limit` bytes by doubling the stride
  // (dropping every other checkpoint); false when only the first checkpoint is left.
  bool make_room(size_t need, size_t limit) {
    if (options.memory_budget == 0) return true;
    while (held_bytes + base_bytes + need > limit) {
      if (checkpoints.size() <= 1) return false;
      report.stride *= 2;
      std::vector<Checkpoint> kept;
      for (Checkpoint& c : checkpoints) {
        if (c.at % report.stride == 0) {
          kept.push_back(std::move(c));
        } else {
          release(c.copy);
        }
      }
      checkpoints = std::move(kept);
    }
    return true;
  }

  std::string where(size_t i) const {
    return "tape: launch #" + std::to_string(i) + " ('" + recorded[i].kernel + "')";
  }

  // The launch's identity for access_by_launch: the kernel and every argument.
  static std::string launch_key(const std::string& kernel, const Args& args) {
    std::string key = kernel;
    for (const auto& [name, a] : args) {
      key += '\n' + name + '=' + std::to_string(static_cast<int>(a.kind())) + ':';
      switch (a.kind()) {
        case Arg::Kind::Resource: key += a.resource(); break;
        case Arg::Kind::List:
          for (double d : a.list()) key += std::to_string(d) + ',';
          break;
        default: key += std::to_string(a.as_int()) + '/' + std::to_string(a.as_double());
      }
    }
    return key;
  }

  const Access& access(const std::string& kernel, const Args& args) {
    std::string key = launch_key(kernel, args);
    auto it = access_by_launch.find(key);
    if (it != access_by_launch.end()) return it->second;
    LaunchAccess a = program.launch_access(kernel, args);
    // The adjoint too, so a kernel that cannot be differentiated is refused now, not after a
    // long recording.
    program.launch_access(kernel + ".grad", args);
    Access made{a.reads, a.writes};
    if (!a.complete) {  // reaches resources through argpacks: every array is state
      for (const std::string& n : program.resource_names())
        if (!is_adjoint(n)) {
          made.writes.push_back(n);
          made.reads.push_back(n);
        }
    }
    return access_by_launch.emplace(key, std::move(made)).first->second;
  }

  KernelResult record(const std::string& kernel, const Args& args) {
    auto t0 = Clock::now();
    double compiled = compile_ms(program);
    size_t i = recorded.size();
    if (is_adjoint(kernel))
      throw Error(Place{"", kernel, -1, ""},
                  "tape: launch #" + std::to_string(i) + " runs '" + kernel +
                      "', itself a derivative: a tape records forward launches only");
    const Access& touched = access(kernel, args);
    for (const std::string& name : touched.writes) {
      if (is_adjoint(name))
        throw Error(Place{"", kernel, -1, name},
                    "tape: launch #" + std::to_string(i) + " ('" + kernel + "') writes '" + name +
                        "': a recorded launch must not write an adjoint (backward() owns them)");
      if (std::find(state.begin(), state.end(), name) != state.end() || !is_array(name)) continue;
      state.push_back(name);
      // Checkpoints made before this launch lack it: they restore it from this copy.
      if (checkpoints.empty()) continue;
      std::vector<uint8_t> b = bytes_of(name);
      if (!make_room(b.size(), options.memory_budget)) over_budget();
      base_bytes += b.size();
      base.emplace(name, std::move(b));
    }
    if (i % report.stride == 0) {
      // Checkpoints take at most half the budget, past the first: backward() reverses each
      // stretch between two of them with the copies the other half holds, and spare copies
      // save more recomputation there than more checkpoints would.
      size_t need = state_bytes();
      size_t limit = checkpoints.empty() ? options.memory_budget : options.memory_budget / 2;
      bool room = make_room(need, limit);
      if (!room && checkpoints.empty()) over_budget();
      if (room && i % report.stride == 0) checkpoints.push_back({i, take_copy()});
    }
    report.forward_ms += ms_since(t0);
    auto t1 = Clock::now();
    KernelResult r;
    try {
      r = program.launch(kernel, args);
    } catch (const Error&) {  // not recorded: the checkpoint made for it goes too
      if (!checkpoints.empty() && checkpoints.back().at == i) {
        release(checkpoints.back().copy);
        checkpoints.pop_back();
      }
      throw;
    }
    recorded.push_back({kernel, args, touched.reads});
    report.forward_ms += ms_since(t1);
    double compiling = compile_ms(program) - compiled;
    report.compile_ms += compiling;
    report.forward_ms -= compiling;
    return r;
  }

  // ---- backward

  // An argpack member's gradient is named by the argpack the launch passed ("world.wind"),
  // not by the kernel's parameter ("p.wind"): launches of different kernels that share the
  // argpack add up, as they share its values.
  static std::string gradient_name(const std::string& returned, const Args& args) {
    size_t dot = returned.find('.');
    if (dot == std::string::npos) return returned;
    std::string param = returned.substr(0, dot);
    for (const auto& [name, value] : args)
      if (name == param && value.kind() == Arg::Kind::Resource)
        return value.resource() + returned.substr(dot);
    return returned;
  }

  void add_gradients(const KernelResult& r, const Args& args) {
    size_t c = 0;
    for (size_t v = 0; v < r.names.size(); ++v) {
      int n = r.types[v].components();
      std::string base = gradient_name(r.names[v], args);
      for (int k = 0; k < n; ++k, ++c) {
        std::string name = n == 1 ? base : base + "[" + std::to_string(k) + "]";
        auto it = std::find_if(report.value_gradients.begin(), report.value_gradients.end(),
                               [&](const auto& g) { return g.first == name; });
        if (it == report.value_gradients.end()) {
          report.value_gradients.emplace_back(name, r.values[c]);
        } else {
          it->second += r.values[c];
        }
      }
    }
  }

  void adjoint(size_t i) {
    try {
      add_gradients(program.launch(recorded[i].kernel + ".grad", recorded[i].args),
                    recorded[i].args);
    } catch (const Error& e) {
      throw Error(e.place(), where(i) + ": " + e.message(), e.kind());
    }
  }

  void advance(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) program.launch(recorded[i].kernel, recorded[i].args);
    report.launches_recomputed += to - from;
  }

  // Reverses launches [a, b): the state is the one before launch a, which `at_a` holds;
  // `spare` more copies fit the budget.
  void reverse(size_t a, size_t b, const Copy& at_a, size_t spare) {
    bool state_at_a = true;
    while (b > a) {
      if (!state_at_a) restore(at_a);
      state_at_a = true;
      if (b - a == 1) {
        adjoint(a);
        return;
      }
      if (spare == 0) {  // no copy to spare: recompute from a for each launch, last first
        for (size_t i = b; i-- > a;) {
          if (!state_at_a) restore(at_a);
          state_at_a = true;
          advance(a, i);
          adjoint(i);
          state_at_a = i == a;
        }
        return;
      }
      size_t c = a + revolve_split(b - a, spare);
      advance(a, c);
      Copy mid = take_copy();
      reverse(c, b, mid, spare - 1);
      release(mid);
      state_at_a = false;
      b = c;
    }
  }

  void fill(const std::string& name, double value) {
    ArrayView v = program.array(name);
    if (value != 0 && v.dtype != Scalar::F32 && v.dtype != Scalar::F64)
      throw Error(Place{"", "", -1, name}, "tape: '" + name + "' is not a float array");
    std::vector<uint8_t> bytes(v.bytes, 0);
    size_t n = v.bytes / static_cast<size_t>(size_of(v.dtype));
    for (size_t k = 0; k < n && value != 0; ++k) {
      if (v.dtype == Scalar::F32) {
        auto f = static_cast<float>(value);
        std::memcpy(bytes.data() + k * sizeof f, &f, sizeof f);
      } else {
        std::memcpy(bytes.data() + k * sizeof value, &value, sizeof value);
      }
    }
    program.write_array(name, bytes.data(), bytes.size());
  }

  const TapeReport& backward() {
    auto t0 = Clock::now();
    double compiled = compile_ms(program);
    report.launches = recorded.size();
    report.state = state;
    report.state_bytes = state_bytes();
    report.checkpoints = checkpoints.size();
    report.value_gradients.clear();
    report.launches_recomputed = 0;
    {
      ArrayView loss = program.array(options.loss);
      double sum = 0;
      for (size_t k = 0; k < loss.bytes / static_cast<size_t>(size_of(loss.dtype)); ++k)
        sum += loss.scalar(k);
      report.loss = sum;
    }
    if (options.clear_gradients)
      for (const std::string& n : program.resource_names())
        if (ends_with(n, ".grad") && is_array(n)) fill(n, 0);
    fill(options.loss + ".grad", 1);
    size_t full = std::max<size_t>(report.state_bytes, 1);
    for (size_t j = checkpoints.size(); j-- > 0;) {
      size_t a = checkpoints[j].at;
      size_t b = j + 1 < checkpoints.size() ? checkpoints[j + 1].at : recorded.size();
      if (j + 1 < checkpoints.size()) release(checkpoints[j + 1].copy);
      size_t spare = std::numeric_limits<size_t>::max();
      if (options.memory_budget != 0) {
        size_t used = held_bytes + base_bytes;
        spare = used >= options.memory_budget ? 0 : (options.memory_budget - used) / full;
      }
      if (b - a == 1 && j > 0) {  // a copy before this very launch: its adjoint recomputes
        restore(checkpoints[j].copy, &recorded[a].reads);  // only from what the launch reads
        adjoint(a);
        continue;
      }
      restore(checkpoints[j].copy);
      reverse(a, b, checkpoints[j].copy, spare);
    }
    for (Checkpoint& c : checkpoints)
      if (c.copy.bytes || !c.copy.data.empty()) release(c.copy);
    checkpoints.clear();
    recorded.clear();
    state.clear();
    base.clear();
    base_bytes = 0;
    held_copies = 0;
    held_bytes = 0;
    double compiling = compile_ms(program) - compiled;
    report.compile_ms += compiling;
    report.backward_ms = ms_since(t0) - compiling;
    return report;
  }
};

Tape::Tape(Program& program, TapeOptions options)
    : impl_(std::make_unique<Impl>(program, std::move(options))) {}

Tape::~Tape() = default;

KernelResult Tape::launch(const std::string& kernel, const Args& args) {
  return impl_->record(kernel, args);
}

std::vector<LaunchReturns> Tape::run_pipeline(const std::string& name, const Args& args) {
  std::vector<LaunchReturns> returned;
  std::vector<std::pair<std::string, Args>> launches = impl_->program.pipeline_launches(name, args);
  for (size_t i = 0; i < launches.size(); ++i) {
    KernelResult r = impl_->record(launches[i].first, launches[i].second);
    if (!r.names.empty()) returned.push_back({i, launches[i].first, std::move(r)});
  }
  return returned;
}

const TapeReport& Tape::backward() { return impl_->backward(); }

const TapeReport& Tape::report() const { return impl_->report; }

double TapeReport::value_gradient(const std::string& name) const {
  for (const auto& [n, g] : value_gradients)
    if (n == name) return g;
  std::string have;
  for (const auto& [n, g] : value_gradients) have += (have.empty() ? "" : ", ") + n;
  throw Error(Place{"", "", -1, name},
              "tape: no value parameter '" + name + "' among the recorded launches" +
                  (have.empty() ? std::string(" (they take none)") : " (they take " + have + ")"));
}

std::string TapeReport::to_string() const {
  std::string names;
  for (const std::string& n : state) names += (names.empty() ? "" : ", ") + n;
  char times[200];
  std::snprintf(times, sizeof times,
                "forward %.2f ms, backward %.2f ms (%.2fx the forward; compiling %.1f ms apart)",
                forward_ms, backward_ms, forward_ms > 0 ? backward_ms / forward_ms : 0.0,
                compile_ms);
  auto count = [](size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string every =
      stride == 1 ? "before every launch" : "every " + std::to_string(stride) + " launches";
  return "tape: " + count(launches, "launch", "launches") + "; state " + kib(state_bytes) + " (" +
         names + "); checkpoints " + every + ", " + std::to_string(checkpoints) +
         " kept; at most " + count(peak_copies, "copy", "copies") + " held (" + kib(peak_bytes) +
         "); " + count(launches_recomputed, "launch", "launches") + " recomputed; " + times;
}

}  // namespace loom
