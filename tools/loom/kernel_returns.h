// What kernels return, as `loom run` and `loom launch` print it: values in the document's
// literal style (`3`, `2.5`, `true`, vectors `[1, 2, 3]`, matrices as lists of columns), so a
// printed value can be given back as a launch argument.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/program.h"

namespace loom::cli {

// Return value `index` of `r` (one name of r.names) in literal style.
std::string format_return_value(const KernelResult& r, size_t index);
// Every return value as "r0 = 3, r1.a = [1.5, 2.5]"; "" when the kernel returns nothing.
std::string format_returns(const KernelResult& r);

// What the launches of a document's pipelines returned, for `loom run`: read from
// Program::last_returns after each run_pipeline.
class ReturnLog {
 public:
  // `every_launch`: print each result as it arrives (`--returns`), else only keep the last.
  explicit ReturnLog(bool every_launch) : every_(every_launch) {}

  // After a run of pipeline `name`; `run` numbers the runs of `step` (0 for `init`) in
  // printed lines.
  void add(const Program& program, const std::string& name, int run);
  // "returns of the last run of each launch:" and one line per launch that returned values;
  // nothing when no launch did.
  void print_last(std::FILE* out) const;

 private:
  struct Last {
    std::string pipeline;
    LaunchReturns returns;
  };
  bool every_;
  std::vector<Last> last_;  // in the order launches first returned
};

}  // namespace loom::cli
