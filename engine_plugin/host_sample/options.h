// The sample's command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace host_sample {

// --replace-at FRAME:MODULE=PATH: before frame FRAME, PATH is copied over the module's file
// (an edit while playing, for testing hot reload without a window or a person).
struct Replacement {
  uint64_t frame = 0;
  std::string module;
  std::string path;
};

struct Options {
  bool headless = false;
  uint64_t frames = 0;  // 0: until the window closes (windowed), 120 (headless)
  uint64_t every = 1;   // write frames every, every-th, ... (numbered from 1)
  std::string png;      // printf pattern of the frame number, e.g. out_%04d.png; empty: none
  uint32_t width = 640;
  uint32_t height = 360;
  std::string modules;  // folder with cloth.loommod, mpm88.loommod, julia.loommod
  std::string assets;   // the repository's assets/ (meshes)
  std::vector<Replacement> replacements;
  bool validation = false;
  bool modules_given = false;
};

// Parses argv; prints usage and exits on --help or an error (status 0 or 2).
Options parse_options(int argc, char** argv);

}  // namespace host_sample
