// A tape: the gradient of a loss with respect to everything a run of launches read, over
// whole pipelines run many steps (Taichi's ti.ad.Tape, Warp's wp.Tape), within a memory
// budget. Launches run as they are recorded; backward() seeds the loss's adjoint with 1 and
// runs the adjoint of every recorded launch in reverse order, each on the state its launch
// saw: the state (the fields and ndarrays the launches write) is copied at checkpoints, and
// what lies between two checkpoints is recomputed from the earlier one. Unlike Taichi's tape,
// a simulation may update its state in place (x = x + v dt): every adjoint sees the values
// its launch read, not those the run ended with.
//
//   loom::Tape tape(program, {.loss = "loss", .memory_budget = 64 << 20});
//   tape.run_pipeline("init");
//   for (int s = 0; s < 1000; ++s) tape.run_pipeline("step");
//   tape.run_pipeline("loss");
//   const loom::TapeReport& r = tape.backward();  // v0.grad now holds d loss / d v0
//
// Checkpoints: while recording, a copy of the state is kept before every K-th launch, K = 1
// at first and doubled (every other copy dropped) whenever the copies would pass the budget;
// backward() reverses the last stretch first, splitting each stretch between two checkpoints
// by binomial checkpointing (Griewank's revolve schedule) with the copies the budget still
// allows, so the launches recomputed grow like N log N, not N^2. No budget: a copy before
// every launch, nothing recomputed.
//
// The host must not change the state between recorded launches (a launch is recomputed from
// a copy, so host writes in between would be lost), nor the argpacks they pass (set_argpack:
// their adjoints run with the values the packs hold then), and a recorded launch must not write an
// adjoint (`NAME.grad`) or launch one (`K.grad`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <loom/program.h>

namespace loom {

struct TapeOptions {
  // A float field or ndarray declared needs_grad: backward() sets every element of its
  // adjoint to 1 (d loss / d loss), so a field holding several values differentiates their sum.
  std::string loss;
  // Bytes of state copies the tape may hold at once (checkpoints and the copies backward()
  // makes between them); 0: no limit. Must hold at least one copy of the state.
  size_t memory_budget = 0;
  // backward() first zeroes every adjoint (`NAME.grad`) of the program, as Taichi's tape does;
  // false: gradients add to what the adjoints hold.
  bool clear_gradients = true;
};

// What a tape did (backward() returns it; also Tape::report()).
struct TapeReport {
  size_t launches = 0;             // recorded
  std::vector<std::string> state;  // the fields and ndarrays the launches write
  size_t state_bytes = 0;          // one copy of them
  size_t stride = 1;               // K: a checkpoint before every K-th recorded launch
  size_t checkpoints = 0;          // kept when recording ended
  size_t peak_copies = 0;          // copies of the state held at once, at most
  size_t peak_bytes = 0;           // their bytes
  size_t launches_recomputed = 0;  // forward launches run again during backward()
  double loss = 0;                 // the sum of the loss's elements when recording ended
  double forward_ms = 0;           // recording: the launches and the checkpoints
  double backward_ms = 0;          // the adjoints, the recomputation, restoring copies
  double compile_ms = 0;           // compiling kernels and their adjoints (not in the above)
  // d loss / d P for every float value parameter P of the recorded launches, summed over the
  // launches that take it (the gradient with respect to the value a pipeline argument gives
  // them all), in order of first appearance; vector parameters have one entry per component,
  // "P[0]", "P[1]"... Likewise for every float value member of the argpacks the launches
  // pass, named by the argpack and the member's path ("world.wind[1]", "world.drag"), summed
  // over every launch that passes that argpack. (A member of a nested pack bound to another
  // argpack is named through the outer pack, "world.inner.drag", not by the bound pack.)
  std::vector<std::pair<std::string, double>> value_gradients;
  std::string to_string() const;                         // what `loom grad` prints about the tape
  double value_gradient(const std::string& name) const;  // throws loom::Error if absent
};

class Tape {
 public:
  // The program must outlive the tape. Throws loom::Error if `loss` is not a float field or
  // ndarray with an adjoint.
  Tape(Program& program, TapeOptions options);
  ~Tape();
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  // Runs the launch (or every launch of the pipeline, as Program::run_pipeline does) now and
  // records it. Throws loom::Error naming the launch if it launches a derived kernel (K.grad,
  // K.dual) or writes an adjoint, or if the budget cannot hold one copy of the state.
  // run_pipeline returns what the pipeline's launches returned, as Program::last_returns
  // gives it after Program::run_pipeline (the launches that return something, in order).
  KernelResult launch(const std::string& kernel, const Args& args = {});
  std::vector<LaunchReturns> run_pipeline(const std::string& name, const Args& args = {});

  // Seeds the loss's adjoint and runs the adjoints of the recorded launches in reverse order.
  // Afterwards the adjoints hold the gradients, the state is as the first recorded launch
  // found it, and the tape is empty (record again for another step).
  const TapeReport& backward();
  const TapeReport& report() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom
