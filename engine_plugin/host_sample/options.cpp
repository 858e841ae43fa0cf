#include "options.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace host_sample {

namespace {

const char* kUsage = R"(usage: loom-host-sample [options]

A minimal engine using Loom through its C ABI (loom.h) alone: a cloth draped by the `cloth`
module, the `mpm88` module's particles and the `julia` module's fractal, drawn with the
engine's own Vulkan device. Module files are hot-reloaded when they change.

  --headless            render offscreen (the default when there is no display)
  --frames N            stop after N frames (headless default 120; windowed: until closed)
  --png PATTERN         write frames as PNGs, PATTERN a printf pattern of the frame number
                        (from 1), e.g. out/frame_%04d.png
  --every K             write every K-th frame (default 1)
  --size WxH            frame size in pixels (default 640x360; windowed: the window's)
  --modules DIR         the compiled modules cloth/mpm88/julia.loommod (default: the build's)
  --assets DIR          the repository's assets/ (default: the source tree's)
  --replace-at F:M=PATH before frame F, copy PATH over module M's file (hot-reload testing;
                        needs --modules: the build's own modules are never overwritten)
  --validation          Vulkan validation layer; any message makes the exit status 3
  --help                this text
)";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "loom-host-sample: %s\n\n%s", message.c_str(), kUsage);
  std::exit(2);
}

uint64_t parse_count(const std::string& option, const char* text) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (!*text || *end || text[0] == '-')
    usage_error(option + " needs a non-negative integer, not '" + text + "'");
  return v;
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  o.modules = LOOM_HOST_SAMPLE_MODULE_DIR;
  o.assets = LOOM_HOST_SAMPLE_ASSET_DIR;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--headless") {
      o.headless = true;
    } else if (a == "--frames") {
      o.frames = parse_count(a, value());
    } else if (a == "--every") {
      o.every = parse_count(a, value());
      if (o.every == 0) usage_error("--every must be at least 1");
    } else if (a == "--png") {
      o.png = value();
    } else if (a == "--size") {
      std::string v = value();
      unsigned w = 0, h = 0;
      char tail = 0;
      if (std::sscanf(v.c_str(), "%ux%u%c", &w, &h, &tail) != 2 || w == 0 || h == 0 || w > 8192 ||
          h > 8192)
        usage_error("--size needs WIDTHxHEIGHT, e.g. 640x360, not '" + v + "'");
      o.width = w;
      o.height = h;
    } else if (a == "--modules") {
      o.modules = value();
      o.modules_given = true;
    } else if (a == "--assets") {
      o.assets = value();
    } else if (a == "--replace-at") {
      std::string v = value();
      size_t colon = v.find(':');
      size_t equals = v.find('=', colon == std::string::npos ? 0 : colon);
      if (colon == std::string::npos || equals == std::string::npos || equals == colon + 1 ||
          equals + 1 == v.size())
        usage_error("--replace-at needs FRAME:MODULE=PATH, not '" + v + "'");
      Replacement r;
      r.frame = parse_count("--replace-at", v.substr(0, colon).c_str());
      r.module = v.substr(colon + 1, equals - colon - 1);
      r.path = v.substr(equals + 1);
      o.replacements.push_back(r);
    } else if (a == "--validation") {
      o.validation = true;
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  if (!o.replacements.empty() && !o.modules_given)
    usage_error("--replace-at overwrites module files: give --modules DIR holding copies of them");
  if (!o.png.empty() && o.png.find('%') == std::string::npos)
    usage_error("--png needs a pattern with the frame number, e.g. out_%04d.png");
  return o;
}

}  // namespace host_sample
