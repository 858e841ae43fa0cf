// Runs the `loom` command line (or any other) as a user would, for tests: exit code and
// everything it printed (stdout and stderr together). LOOM_CLI is the binary's path (a
// compile definition).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace loom::test {

struct CliRun {
  int code;
  std::string out;
};

// Any command line, through the shell.
inline CliRun run_command(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  CliRun r{-1, ""};
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

#ifdef LOOM_CLI
inline CliRun run_loom(const std::string& args) {
  return run_command(std::string(LOOM_CLI) + " " + args);
}
#endif

}  // namespace loom::test
