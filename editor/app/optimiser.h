// The Optimise panel's engine, without UI: gradient descent on float values a document's
// pipelines pass to their kernels (launch arguments), minimising a loss (a float field or
// ndarray declared needs_grad, its elements summed). Each iteration, on a CPU program of its
// own, records `init`, `steps` runs of `step` and `loss` on a loom::Tape (tape.h) with the
// current values as pipeline arguments, runs backward() for d loss / d value, and moves
// every value against its gradient, clamped to its range:
//   - Adam (the default): Adam's moment estimates (beta 0.9, 0.999), each step about
//     `step_size` x (max - min) per value, whatever the gradient's scale;
//   - gradient: value -= step_size x gradient.
// A value is a kernel parameter's name: the tape sums its gradient over every launch that
// takes it, so every launch of those pipelines that takes the parameter gets the one value,
// and one whose launches give it different values cannot be tuned (tunable_values says why).
// Or it is a float member of an argpack the launches pass, "world.drag": set in the pack
// (Program::set_argpack) before each iteration, its gradient summed over every launch that
// passes the pack, and kept in the document's values of that argpack.
//
//   Optimiser opt(doc, settings);   // throws loom::Error for a setting that cannot work
//   opt.start();                    // a worker thread runs the iterations; opt.stop() ends
//   OptimiseProgress p = opt.progress();   // the losses so far, the values now
//   graph::Document kept = opt.tuned(doc); // the document with the values now (Keep)
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "compiler/graph/document.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

namespace loom::editor {

// The pipelines an iteration runs, in order (`step` `steps` times); those the document has.
inline constexpr const char* kOptimisePipelines[] = {"init", "step", "loss"};

// A float value parameter the launches of the optimised pipelines pass, or a float member of
// an argpack they pass: what can be tuned, a component at a time.
struct TunableValue {
  // The kernel parameter, or "ARGPACK.member.path"; a vector's or matrix's component
  // (column-major) as "target[1]", "world.wind[0]", as the tape names the gradients.
  std::string name;
  double value = 0;                   // what the document's launches pass, or its argpack holds
  std::vector<std::string> launches;  // "init 1. fire": where (pipeline, launch, kernel)
  std::string problem;                // why it cannot be tuned; "" when it can
};
// In the order the launches pass them; then argpack members, in layout order.
std::vector<TunableValue> tunable_values(const graph::Document& doc);
// The float fields and ndarrays declared needs_grad ("loss" first when there is one).
std::vector<std::string> loss_candidates(const graph::Document& doc);

struct OptimiseSettings {
  struct Parameter {
    std::string name;  // a TunableValue's
    double start = 0;  // the first iteration's value
    double min = 0, max = 0;
  };
  enum class Method { Adam, Gradient };

  std::string loss;
  std::vector<Parameter> parameters;
  int steps = 40;       // runs of `step` recorded per iteration
  int iterations = 50;  // at most
  double step_size = 0.02;
  Method method = Method::Adam;
  size_t memory_budget = size_t{256} << 20;  // the tape's (TapeOptions::memory_budget)
};

// Where an optimisation is; progress() copies it.
struct OptimiseProgress {
  std::vector<double> losses;     // the loss of each finished iteration (before its update)
  std::vector<double> values;     // per parameter, now (after the last update)
  std::vector<double> gradients;  // per parameter, of the last iteration
  bool running = false;           // the worker thread is iterating
  bool stopped = false;           // stop() ended it before the last iteration
  std::optional<Error> error;     // what ended it (a kernel that cannot be differentiated...)
  int done() const { return static_cast<int>(losses.size()); }
};

class Optimiser {
 public:
  // Loads the document into a CPU program of its own. Throws loom::Error naming what is
  // wrong: a loss that is not a needs_grad float field or ndarray, a parameter that cannot
  // be tuned (named), a range with min > max, steps < 0, iterations < 1, step size <= 0.
  Optimiser(const graph::Document& doc, OptimiseSettings settings);
  ~Optimiser();  // stops the worker and waits for it
  Optimiser(const Optimiser&) = delete;
  Optimiser& operator=(const Optimiser&) = delete;

  // One iteration now, on this thread (not while running()): the loss it measured. Throws
  // loom::Error naming the kernel and node that failed (recorded in progress().error too).
  double iterate();
  // Runs the remaining iterations on a worker thread; progress() and stop() from any thread.
  void start();
  // Ends the run: the iteration under way is cancelled (its update is not made). Returns at
  // once; wait() waits for the worker.
  void stop();
  void wait();
  bool running() const { return progress().running; }
  OptimiseProgress progress() const;
  const OptimiseSettings& settings() const { return settings_; }

  // `doc` with the current values written into every launch of the optimised pipelines that
  // takes them and into the argpacks (6 significant digits): Keep gives this to the document
  // as one undo step.
  graph::Document tuned(const graph::Document& doc) const;

 private:
  void run();
  void update(const std::vector<double>& gradients);

  OptimiseSettings settings_;
  std::unique_ptr<Program> program_;
  std::vector<double> values_, m_, v_;  // Adam's moments
  // By value tuned ("target", "world.wind"): all its components as the document gives them.
  std::map<std::string, std::vector<double>> whole_values_;
  int t_ = 0;
  mutable std::mutex mutex_;
  OptimiseProgress progress_;
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

// Writes `values` (by parameter name) into every launch of the optimised pipelines that
// takes them, and argpack members ("world.drag") into the argpack's values. Values are
// rounded to 6 significant digits.
graph::Document with_tuned_values(const graph::Document& doc,
                                  const std::vector<std::pair<std::string, double>>& values);

}  // namespace loom::editor
