// The `loom` command line: run, launch, check, ir, compile, spirv, bench, grad.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "compiler/graph/document_json.h"
#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "engine_plugin/include/loom/tape.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/bounded_message.h"
#include "runtime/common/error.h"
#include "runtime/common/input_file.h"
#include "runtime/render/png.h"
#include "tools/loom/kernel_returns.h"
#include "tools/loom/launch_arguments.h"
#include "tools/loom/png_frames.h"

namespace {

constexpr const char* kUsage = R"(usage: loom COMMAND [options]

commands:
  run DOC      run the document's `init` pipeline, then `step` N times
  launch DOC K run kernel K once with --arg NAME=VALUE arguments; print what it returns
  check DOC    load and validate a document; compile nothing
  ir DOC       print a kernel's IR after lowering or after a pass
  compile DOC  compile every kernel the pipelines launch: into the offline cache, or
               with -o into an AOT module that loads without the compiler
  spirv DOC    print a kernel's SPIR-V disassembly (Vulkan backend)
  bench DOC    time the `step` pipeline
  grad DOC     the gradient of a loss over `init`, `step` N times and `loss`: a tape
  fmt DOC      rewrite a document in the canonical style (--check: only report)
  devices      list the Vulkan devices (for --device)

run `loom COMMAND --help` for the options of one command.
)";

struct CommandHelp {
  const char* name;
  const char* text;
};

constexpr CommandHelp kHelp[] = {
    {"run", R"(usage: loom run DOC [--steps N] [--backend cpu|vulkan|auto] [--device D]
                [--load NAME=FILE.npy ...] [--dump NAME=FILE.npy ...] [--stats] [--debug]
                [--no-fast-math] [--no-privatize] [--threads N] [--cache-dir DIR]
                [--no-cache] [--png NAME=PATTERN [--every K]] [--returns]

Runs pipeline `init` once, then pipeline `step` N times (default 1), then writes the
requested fields/ndarrays as NumPy .npy files and prints a summary of every resource and
what kernels returned: for each launch (pipeline, #position, kernel) whose kernel returns
values, those of its last run, by name (r0, r1; struct members as r1.a).
  --steps N          number of `step` runs
  --returns          also print what every launch returns as it runs ("step 3 #1 sum: r0 = 6")
  --load NAME=FILE   fill a field/ndarray from a .npy file after `init`
  --dump NAME=FILE   write a field/ndarray/texture to a .npy file at the end
  --stats            print compile and launch statistics
  --debug            compile bounds checks and assertions into kernels
  --no-fast-math     strict IEEE float math (default: fast math, see docs/nodes.md)
  --no-privatize     CPU: keep a parallel loop's atomic adds into a field as atomics (default:
                     per-thread copies of the field, added into it after the loop)
  --backend B        cpu (default), vulkan, or auto (Vulkan when a device exists, else CPU)
  --device D         Vulkan device: an index or part of its name (default: the best one)
  --validate         Vulkan validation layer on; any message is an error
  --workgroup-size N Vulkan: invocations per workgroup of parallel tasks that set none
                     (default: the device's, a multiple of its subgroup size)
  --spirv-opt        Vulkan: run SPIRV-Tools' optimizer on every shader
  --png NAME=PATTERN write a 2-d field/ndarray (colour-mapped) or texture as PNG frames;
                     PATTERN may hold a printf step number ("frames/heat_%04d.png")
  --every K          with --png: a frame every K steps (default: only after the last)
  --threads N        worker threads (default: all hardware threads)
  --cache-dir DIR    offline cache folder;  --no-cache: no offline cache
  --ad-stack N       entries of the per-thread stack a K.grad launch keeps for each value a
                     serial loop overwrites (default 256; docs/autodiff.md)
)"},
    {"launch",
     R"(usage: loom launch DOC KERNEL [--arg NAME=VALUE ...] [--init] [--load NAME=FILE.npy ...]
                   [--dump NAME=FILE.npy ...] [--backend cpu|vulkan|auto] [--device D]
                   [--validate] [--debug] [--no-fast-math] [--no-privatize] [--threads N]
                   [--cache-dir DIR] [--no-cache] [--stats]

Launches kernel KERNEL once with arguments from the command line and prints what it returns
(each value by name: r0, r1; struct members as r1.a), then a summary of the fields and
ndarrays. No pipeline runs unless --init asks for `init`.
  --arg NAME=VALUE   a parameter's value, read by its declared type: 3, -2, 2.5, true;
                     a vector 1,2,3 or "[1, 2, 3]"; a matrix column-major 1,2,3,4 or as its
                     columns "[[1, 2], [3, 4]]"; one number fills every component.
                     ndarray, texture and argpack parameters take a resource's name (by
                     default the one named like the parameter); PARAM.MEMBER=VALUE sets a
                     member of the argpack PARAM is bound to; template parameters take a
                     field's name or a constant
  --init             run the document's `init` pipeline before the launch
  --load NAME=FILE   fill a field/ndarray from a .npy file before the launch
  --dump NAME=FILE   write a field/ndarray/texture to a .npy file after it
  other options as for `loom run`
)"},
    {"check", R"(usage: loom check DOC [--debug] [--no-fast-math]

Loads and validates the document: JSON, node types, links, cycles, types, pipeline
bindings. Every kernel a pipeline launches is lowered and optimised, but not compiled.
Fields, ndarrays and textures are checked but get no memory: a document declaring more
than this machine holds can be checked. Prints "ok" or one error naming the place and
exits non-zero. Likely mistakes of code
ported from Taichi (docs/porting-from-taichi.md) are printed as "warning: ..." lines naming
kernel and node; they do not change the exit status.
  --debug            check the kernels as debug builds compile them (with assertions)
  --no-fast-math     optimise as for strict IEEE float math
)"},
    {"ir", R"(usage: loom ir DOC --kernel K [--after PASS] [--template NAME=VALUE ...]
               [--debug] [--no-fast-math] [--no-privatize] [--threads N]

Prints the IR of kernel K after lowering (--after lower) or after a pass of the pipeline
(default: the final IR). Template parameters take a field name or a number.
  --list-passes      print the pass names usable with --after
  --debug            as compiled for debugging (bounds checks, assertions)
  --no-fast-math     as compiled for strict IEEE float math
  --no-privatize     as compiled with atomic adds kept as atomics (privatize_scatter)
  --threads N        as compiled for N threads (default: all hardware threads): the
                     per-thread copies privatize_scatter gives a field
)"},
    {"compile",
     R"(usage: loom compile DOC [-o FILE [--arch cpu|vulkan] [--folder] [--cpu LEVEL[,LEVEL...]]
                    [--vulkan-version 1.0|1.1|1.2] [--kernel K ...]]
                    [--stats] [--cache-dir DIR] [--debug] [--no-fast-math] [--no-privatize]
                    [--backend B] [--device D]

Compiles every (kernel, template arguments) pair the document's pipelines launch.
Without -o, stores them in the offline cache and prints the compile statistics.
With -o, writes an AOT module: the document's fields, ndarrays, textures, argpacks and
pipelines with every instantiation they launch, compiled for --arch (default cpu). A
runtime without the compiler loads it (loom.h, runtime/aot). The same document and options
give byte-identical files.
  -o, --output FILE  the module archive to write (conventionally NAME.loommod)
  --kernel K         also put kernel K in the module, though no pipeline launches it
                     (repeatable; for an engine to launch with loom_launch). By default a
                     module holds the kernels its pipelines launch, and no others. A kernel
                     with template parameters or ndarrays of open type needs a pipeline
                     launch to fix them. K.grad / K.dual: K's adjoint or tangent kernel
                     (and K), a twin for every float ndarray parameter (docs/autodiff.md)
  --arch A           cpu (native object code) or vulkan (SPIR-V)
  --folder           write FILE as an unpacked folder (metadata.json and the blobs)
  --cpu LEVELS       cpu: the CPU levels the code is for, comma-separated LLVM CPU names
                     (x86-64-v2, x86-64-v3, x86-64-v4, skylake, znver3) or `host` (this
                     machine's CPU and all its features). Kernels are compiled once per
                     level; a loader runs the level with the most features its CPU has
                     (LOOM_CPU_LEVEL=NAME forces one). Default: x86-64-v2, the portable
                     x86-64 baseline; on other architectures, this machine's CPU
  --vulkan-version V vulkan: the oldest Vulkan the module loads on, 1.1 (SPIR-V 1.3, the
                     default: engines often create 1.1 devices), 1.2 (SPIR-V 1.5) or 1.0
                     (SPIR-V 1.0, for engines' 1.0 devices; kernels needing 8/16-bit
                     storage, shaderInt8 or 64-bit/float atomics are refused by name)
  --workgroup-size N vulkan: invocations per workgroup of parallel tasks (default 128)
  --debug            compile bounds checks and assertions into kernels
  --no-fast-math     strict IEEE float math (a separate cache entry)
  --no-privatize     cpu: atomic adds kept as atomics (a separate cache entry)
)"},
    {"spirv", R"(usage: loom spirv DOC --kernel K [--template NAME=VALUE ...] [--device D] [--debug]

Prints the SPIR-V disassembly of every task of kernel K, compiled for the Vulkan device
(--device picks one) or, when no device exists, for a device with every optional feature.
Every module has passed the SPIRV-Tools validator.
)"},
    {"fmt", R"(usage: loom fmt DOC [--check]

Rewrites the document in Loom's canonical style (what the editor saves), upgrading an older
format version. With --check, changes nothing and exits 1 when the file is not canonical.
)"},
    {"devices", R"(usage: loom devices

Lists the Vulkan devices this machine has, with the index --device takes.
)"},
    {"bench",
     R"(usage: loom bench DOC [--steps N] [--threads N] [--backend B] [--device D] [--no-fast-math]
                  [--no-privatize]

Runs `init`, then times N runs of `step` (default 100) and prints the mean time per step.
  --no-fast-math     strict IEEE float math
  --no-privatize     CPU: atomic adds kept as atomics (to measure what privatization gains)
)"},
    {"grad",
     R"(usage: loom grad DOC --loss NAME --wrt NAME [--wrt NAME ...] [--steps N]
                 [--memory-budget BYTES] [--arg NAME=VALUE ...] [--dump NAME=FILE.npy ...]
                 [--backend cpu|vulkan|auto] [other options as for `loom run`]

Records on a tape pipeline `init` (if the document has one), then `step` N times (default 1),
then `loss` (if it has one), then runs the adjoints of the recorded launches in reverse order
(docs/autodiff.md) and prints the loss, the gradient of the loss with respect to each --wrt,
and what the tape kept and took.
  --loss NAME        a float field or ndarray declared "needs_grad" (its elements are summed)
  --wrt NAME         a field or ndarray declared "needs_grad" (prints the norm and the largest
                     component of NAME.grad), a float value parameter of the launches
                     (prints d loss / d NAME, summed over every launch that takes it), an
                     argpack's float member (world.drag) or a whole argpack (world: each
                     float member), summed over every launch that passes the argpack
  --steps N          runs of `step` recorded
  --memory-budget B  bytes of state copies the tape may hold (suffix K, M or G: 64M); without
                     it, a copy before every launch and nothing recomputed; with it, a copy
                     every K launches and the rest recomputed (binomial checkpointing)
  --arg NAME=VALUE   the value of parameter NAME in every launch that takes it
  --dump NAME=FILE   write a field/ndarray after the backward sweep (NAME.grad: a gradient)
)"},
};

[[noreturn]] void fail(const std::string& message) {
  // Usage errors quote what was typed (an option, a path): within the bounds errors keep.
  std::fprintf(stderr, "loom: %s\n", loom::bounded_message(message).c_str());
  std::exit(1);
}

struct Options {
  std::string command;
  std::string doc;
  std::string kernel;  // launch: the kernel to launch
  std::map<std::string, std::vector<std::string>> values;
  std::map<std::string, bool> flags;

  bool flag(const std::string& f) const { return flags.count(f) > 0; }
  std::string value(const std::string& k, const std::string& fallback = "") const {
    auto it = values.find(k);
    return it == values.end() ? fallback : it->second.back();
  }
  std::vector<std::string> all(const std::string& k) const {
    auto it = values.find(k);
    return it == values.end() ? std::vector<std::string>{} : it->second;
  }
};

const std::map<std::string, std::vector<std::string>> kValueOptions = {
    {"run",
     {"--steps", "--backend", "--device", "--workgroup-size", "--load", "--dump", "--threads",
      "--cache-dir", "--png", "--every", "--ad-stack"}},
    {"launch",
     {"--arg", "--load", "--dump", "--backend", "--device", "--workgroup-size", "--threads",
      "--cache-dir", "--ad-stack"}},
    {"check", {}},
    {"ir", {"--kernel", "--after", "--template", "--threads"}},
    {"compile",
     {"--cache-dir", "--backend", "--device", "--workgroup-size", "--output", "--arch", "--cpu",
      "--vulkan-version", "--kernel"}},
    {"spirv", {"--kernel", "--template", "--device"}},
    {"bench", {"--steps", "--threads", "--backend", "--device", "--workgroup-size", "--cache-dir"}},
    {"fmt", {}},
    {"devices", {}},
    {"grad",
     {"--loss", "--wrt", "--steps", "--memory-budget", "--arg", "--dump", "--backend", "--device",
      "--workgroup-size", "--threads", "--cache-dir", "--ad-stack"}},
};
const std::map<std::string, std::vector<std::string>> kFlagOptions = {
    {"run",
     {"--stats", "--debug", "--no-cache", "--validate", "--spirv-opt", "--no-fast-math",
      "--no-privatize", "--returns"}},
    {"launch",
     {"--init", "--stats", "--debug", "--no-cache", "--validate", "--spirv-opt", "--no-fast-math",
      "--no-privatize"}},
    {"check", {"--debug", "--no-fast-math"}},
    {"ir", {"--list-passes", "--debug", "--no-fast-math", "--no-privatize"}},
    {"compile",
     {"--stats", "--debug", "--no-cache", "--validate", "--spirv-opt", "--no-fast-math",
      "--no-privatize", "--folder"}},
    {"spirv", {"--debug"}},
    {"bench", {"--no-cache", "--validate", "--spirv-opt", "--no-fast-math", "--no-privatize"}},
    {"fmt", {"--check"}},
    {"devices", {}},
    {"grad",
     {"--debug", "--no-cache", "--validate", "--no-fast-math", "--no-privatize", "--stats"}},
};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, stdout);
    std::exit(argc < 2 ? 2 : 0);
  }
  o.command = argv[1];
  if (!kValueOptions.count(o.command))
    fail("unknown command '" + o.command + "' (see loom --help)");
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o") a = "--output";
    if (a == "--help" || a == "-h") {
      for (const auto& h : kHelp)
        if (o.command == h.name) std::fputs(h.text, stdout);
      std::exit(0);
    }
    if (a.rfind("--", 0) == 0) {
      if (contains(kFlagOptions.at(o.command), a)) {
        o.flags[a] = true;
      } else if (contains(kValueOptions.at(o.command), a)) {
        if (i + 1 >= argc) fail(a + " needs a value");
        o.values[a].push_back(argv[++i]);
      } else {
        fail("unknown option '" + a + "' for 'loom " + o.command + "'");
      }
      continue;
    }
    if (o.command == "launch" && !o.doc.empty() && o.kernel.empty()) {
      o.kernel = a;
      continue;
    }
    if (!o.doc.empty()) {
      // `v=1` without --arg is a common slip: name the option it belongs to.
      bool looks_like_arg = a.find('=') != std::string::npos &&
                            contains(kValueOptions.at(o.command), std::string("--arg"));
      fail("unexpected argument '" + a + "'" +
           (looks_like_arg ? " (arguments are given as --arg " + a + ")" : ""));
    }
    o.doc = a;
  }
  if (o.doc.empty() && o.command != "devices" && !(o.command == "ir" && o.flag("--list-passes")))
    fail("'loom " + o.command + "' needs a document (see loom " + o.command + " --help)");
  return o;
}

int to_int(const std::string& option, const std::string& text) {
  try {
    size_t used = 0;
    int v = std::stoi(text, &used);
    if (used != text.size() || v < 0) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    fail(option + " expects a non-negative integer, got '" + text + "'");
  }
}

std::pair<std::string, std::string> split_assignment(const std::string& option,
                                                     const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    fail(option + " expects NAME=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

loom::ProgramOptions program_options(const Options& o) {
  loom::ProgramOptions p;
  std::string backend = o.value("--backend", "cpu");
  if (backend == "cpu")
    p.backend = loom::Backend::Cpu;
  else if (backend == "vulkan")
    p.backend = loom::Backend::Vulkan;
  else if (backend == "auto")
    p.backend = loom::Backend::Auto;
  else
    fail("unknown backend '" + backend + "' (choose cpu, vulkan or auto)");
  p.device = o.value("--device");
  if (o.flag("--validate")) p.validation = true;
  if (o.flag("--spirv-opt")) p.spirv_opt = true;
  if (!o.value("--workgroup-size").empty()) {
    p.workgroup_size = to_int("--workgroup-size", o.value("--workgroup-size"));
    if (p.workgroup_size < 1 || p.workgroup_size > 1024) fail("--workgroup-size takes 1 to 1024");
  }
  p.debug = o.flag("--debug");
  p.fast_math = !o.flag("--no-fast-math");
  p.privatize_scatter = !o.flag("--no-privatize");
  p.offline_cache = !o.flag("--no-cache");
  p.cache_dir = o.value("--cache-dir");
  if (!o.value("--threads").empty()) p.threads = to_int("--threads", o.value("--threads"));
  if (!o.value("--ad-stack").empty()) {
    p.ad_stack_size = to_int("--ad-stack", o.value("--ad-stack"));
    if (p.ad_stack_size < 1) fail("--ad-stack takes a positive number of entries");
  }
  return p;
}

loom::Arg parse_arg(const std::string& text) {
  if (text == "true") return loom::Arg(true);
  if (text == "false") return loom::Arg(false);
  char* end = nullptr;
  long long i = std::strtoll(text.c_str(), &end, 10);
  if (end && *end == '\0' && !text.empty()) return loom::Arg(static_cast<int64_t>(i));
  double d = std::strtod(text.c_str(), &end);
  if (end && *end == '\0' && !text.empty()) return loom::Arg(d);
  return loom::Arg(text);
}

void print_summary(loom::Program& program) {
  for (const std::string& name : program.resource_names()) {
    loom::ArrayView v;
    try {
      v = program.array(name);
    } catch (const loom::Error&) {
      continue;  // textures and argpacks have no array summary
    }
    double lo = 0, hi = 0, sum = 0;
    int64_t n = 0;
    size_t es = static_cast<size_t>(loom::size_of(v.dtype));
    size_t count = es ? v.bytes / es : 0;
    for (size_t i = 0; i < count; ++i) {
      const uint8_t* p = v.data + i * es;
      double x = 0;
      switch (v.dtype) {
        case loom::Scalar::F32: {
          float f;
          std::memcpy(&f, p, 4);
          x = f;
          break;
        }
        case loom::Scalar::F64: {
          std::memcpy(&x, p, 8);
          break;
        }
        case loom::Scalar::I32: {
          int32_t t;
          std::memcpy(&t, p, 4);
          x = t;
          break;
        }
        case loom::Scalar::U32: {
          uint32_t t;
          std::memcpy(&t, p, 4);
          x = t;
          break;
        }
        case loom::Scalar::I64: {
          int64_t t;
          std::memcpy(&t, p, 8);
          x = static_cast<double>(t);
          break;
        }
        case loom::Scalar::U64: {
          uint64_t t;
          std::memcpy(&t, p, 8);
          x = static_cast<double>(t);
          break;
        }
        case loom::Scalar::I16: {
          int16_t t;
          std::memcpy(&t, p, 2);
          x = t;
          break;
        }
        case loom::Scalar::U16: {
          uint16_t t;
          std::memcpy(&t, p, 2);
          x = t;
          break;
        }
        case loom::Scalar::U8:
        case loom::Scalar::Bool: x = *p; break;
        case loom::Scalar::I8: x = static_cast<int8_t>(*p); break;
        default: continue;
      }
      if (n == 0) lo = hi = x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
      ++n;
    }
    std::string shape;
    for (size_t d = 0; d < v.shape.size(); ++d)
      shape += (d ? "x" : "") + std::to_string(v.shape[d]);
    std::printf("  %-16s %-6s [%s]%s  min %.6g  max %.6g  mean %.6g  sum %.9g\n", name.c_str(),
                std::string(loom::scalar_name(v.dtype)).c_str(), shape.c_str(),
                v.components > 1 ? (" x" + std::to_string(v.components)).c_str() : "", lo, hi,
                n ? sum / static_cast<double>(n) : 0.0, sum);
  }
}

// Writes every --png resource for `step`; returns the files written.
std::vector<std::string> write_frames(loom::Program& program, const Options& o, int step) {
  std::vector<std::string> written;
  for (const std::string& spec : o.all("--png")) {
    auto [name, pattern] = split_assignment("--png", spec);
    char path[4096];
    std::snprintf(path, sizeof path, pattern.c_str(), step);
    int w = 0, h = 0;
    std::vector<uint8_t> rgba;
    try {
      rgba = loom::colorize(program.array(name), &w, &h);
    } catch (const loom::Error&) {
      rgba = loom::texture_rgba8(program.texture(name), &w, &h);
    }
    loom::write_png(path, w, h, rgba);
    written.emplace_back(path);
  }
  return written;
}

void print_stats(loom::Program& program) {
  std::printf("device: %s\n", program.device_name().c_str());
  std::fputs(program.stats().to_string().c_str(), stdout);
  if (program.backend() != loom::Backend::Vulkan) return;
  loom::DeviceCounters c = program.device_counters();
  std::printf(
      "  vulkan: %llu dispatches in %llu submissions, %llu barriers, %llu host waits; %llu "
      "pipelines built in %.3f ms\n"
      "  uploads: %llu bytes of arguments, %llu argpack uploads (%llu bytes), %llu bytes of "
      "resources; "
      "%llu bytes read back\n",
      static_cast<unsigned long long>(c.dispatches), static_cast<unsigned long long>(c.submits),
      static_cast<unsigned long long>(c.barriers), static_cast<unsigned long long>(c.waits),
      static_cast<unsigned long long>(c.pipelines), c.pipeline_ms,
      static_cast<unsigned long long>(c.argument_bytes),
      static_cast<unsigned long long>(c.argpack_uploads),
      static_cast<unsigned long long>(c.argpack_bytes),
      static_cast<unsigned long long>(c.resource_bytes_uploaded),
      static_cast<unsigned long long>(c.bytes_downloaded));
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Time spent instantiating kernels so far (lowering, passes, LLVM, cache, loading).
double compile_ms(const loom::Stats& s) {
  return s.ms_lower + s.ms_passes + s.ms_codegen + s.ms_optimize + s.ms_emit + s.ms_cache_read +
         s.ms_load;
}

int cmd_run(const Options& o, bool bench) {
  loom::Program program(program_options(o));
  program.load_file(o.doc);
  int steps = to_int("--steps", o.value("--steps", bench ? "100" : "1"));
  // `run` keeps what kernels return (Program::last_returns); `bench` only times the runs.
  loom::cli::ReturnLog returns(o.flag("--returns"));
  auto run_pipeline = [&](const std::string& name, int run) {
    program.run_pipeline(name);
    if (!bench) returns.add(program, name, run);
  };
  auto t0 = std::chrono::steady_clock::now();
  if (program.has_pipeline("init")) run_pipeline("init", 0);
  double init_ms = ms_since(t0) - compile_ms(program.stats());
  for (const std::string& load : o.all("--load")) {
    auto [name, file] = split_assignment("--load", load);
    program.load_npy(name, file);
  }
  if (!program.has_pipeline("step") && steps > 0)
    fail(o.doc + ": the document has no 'step' pipeline");
  if (bench && steps > 0) program.run_pipeline("step");  // warm: compile outside the timing
  int every = o.value("--every").empty() ? 0 : to_int("--every", o.value("--every"));
  std::vector<std::string> frames;
  double frame_ms = 0;
  double compiled_before_steps = compile_ms(program.stats());
  auto t1 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    run_pipeline("step", s + 1);
    if (every > 0 && (s + 1) % every == 0 && s + 1 < steps) {
      auto tf = std::chrono::steady_clock::now();
      for (auto& f : write_frames(program, o, s + 1)) frames.push_back(f);
      frame_ms += ms_since(tf);
    }
  }
  program.synchronize();  // device work counts for the steps that recorded it
  double step_ms = ms_since(t1) - frame_ms - (compile_ms(program.stats()) - compiled_before_steps);
  for (auto& f : write_frames(program, o, steps)) frames.push_back(f);
  if (!frames.empty())
    std::printf("wrote %zu PNG frame%s (%s ... %s)\n", frames.size(), frames.size() == 1 ? "" : "s",
                frames.front().c_str(), frames.back().c_str());
  for (const std::string& dump : o.all("--dump")) {
    auto [name, file] = split_assignment("--dump", dump);
    program.dump_npy(name, file);
    std::printf("wrote %s -> %s\n", name.c_str(), file.c_str());
  }
  if (bench) {
    std::printf("%s: %d steps, %.4f ms per step\n", o.doc.c_str(), steps,
                steps ? step_ms / steps : 0.0);
    return 0;
  }
  std::printf(
      "%s: compile %.3f ms (%d kernel instantiations), init %.3f ms, %d steps in %.3f ms (%.4f ms "
      "per step)\n",
      o.doc.c_str(), compile_ms(program.stats()), program.stats().instantiations, init_ms, steps,
      step_ms, steps ? step_ms / steps : 0.0);
  print_summary(program);
  returns.print_last(stdout);
  if (o.flag("--stats")) print_stats(program);
  return 0;
}

// `loom launch DOC KERNEL --arg NAME=VALUE ...`: one kernel, once, without a pipeline.
int cmd_launch(const Options& o) {
  loom::Program program(program_options(o));
  program.load_file(o.doc);
  if (o.kernel.empty()) {
    std::string kernels;
    for (const auto& k : program.document().kernels)
      kernels += (kernels.empty() ? "" : ", ") + k.name;
    fail("'loom launch' needs a kernel: loom launch DOC KERNEL (" +
         (kernels.empty() ? "the document has no kernels" : "its kernels: " + kernels) + ")");
  }
  if (o.flag("--init")) {
    if (!program.has_pipeline("init")) fail(o.doc + ": the document has no 'init' pipeline");
    program.run_pipeline("init");
  }
  for (const std::string& load : o.all("--load")) {
    auto [name, file] = split_assignment("--load", load);
    program.load_npy(name, file);
  }
  loom::Args args = loom::cli::launch_arguments(program, o.kernel, o.all("--arg"));
  double compiled_before = compile_ms(program.stats());
  auto t0 = std::chrono::steady_clock::now();
  loom::KernelResult result = program.launch(o.kernel, args);
  program.synchronize();
  double compiled = compile_ms(program.stats()) - compiled_before;
  std::printf("%s: compile %.3f ms, launch %.3f ms\n", o.kernel.c_str(), compiled,
              ms_since(t0) - compiled);
  if (result.names.empty()) std::printf("%s returns nothing\n", o.kernel.c_str());
  for (size_t i = 0; i < result.names.size(); ++i)
    std::printf("  %s (%s) = %s\n", result.names[i].c_str(),
                loom::value_type_name(result.types[i]).c_str(),
                loom::cli::format_return_value(result, i).c_str());
  for (const std::string& dump : o.all("--dump")) {
    auto [name, file] = split_assignment("--dump", dump);
    program.dump_npy(name, file);
    std::printf("wrote %s -> %s\n", name.c_str(), file.c_str());
  }
  print_summary(program);
  if (o.flag("--stats")) print_stats(program);
  return 0;
}

int cmd_ir(const Options& o) {
  if (o.flag("--list-passes")) {
    for (const std::string& pass : loom::Program::pass_names()) std::printf("%s\n", pass.c_str());
    return 0;
  }
  loom::ProgramOptions po;
  po.debug = o.flag("--debug");
  po.fast_math = !o.flag("--no-fast-math");
  po.privatize_scatter = !o.flag("--no-privatize");
  if (!o.value("--threads").empty()) po.threads = to_int("--threads", o.value("--threads"));
  po.offline_cache = false;
  loom::Program program(po);
  program.load_file(o.doc);
  std::string kernel = o.value("--kernel");
  if (kernel.empty()) fail("loom ir needs --kernel K");
  loom::Args targs;
  for (const std::string& t : o.all("--template")) {
    auto [name, value] = split_assignment("--template", t);
    targs.emplace_back(name, parse_arg(value));
  }
  std::fputs(program.ir_text(kernel, o.value("--after"), targs).c_str(), stdout);
  return 0;
}

int cmd_fmt(const Options& o) {
  loom::graph::Document doc = loom::graph::load_document_file(o.doc);
  std::string canonical = loom::graph::save_document(doc);
  std::string current = loom::read_text_file_checked(o.doc, "document");
  if (current == canonical) {
    std::printf("%s: canonical\n", o.doc.c_str());
    return 0;
  }
  if (o.flag("--check")) {
    std::printf("%s: not in canonical style (run loom fmt)\n", o.doc.c_str());
    return 1;
  }
  loom::graph::save_document_file(doc, o.doc);
  std::printf("%s: rewritten\n", o.doc.c_str());
  return 0;
}

int cmd_spirv(const Options& o) {
  loom::ProgramOptions po;
  po.backend =
      loom::enumerate_vulkan_devices().empty() ? loom::Backend::Cpu : loom::Backend::Vulkan;
  po.device = o.value("--device");
  po.debug = o.flag("--debug");
  po.offline_cache = false;
  loom::Program program(po);
  program.load_file(o.doc);
  std::string kernel = o.value("--kernel");
  if (kernel.empty()) fail("loom spirv needs --kernel K");
  loom::Args targs;
  for (const std::string& t : o.all("--template")) {
    auto [name, value] = split_assignment("--template", t);
    targs.emplace_back(name, parse_arg(value));
  }
  std::fputs(program.spirv_text(kernel, targs).c_str(), stdout);
  return 0;
}

// `loom compile DOC -o FILE`: the document as an AOT module.
int cmd_compile_module(const Options& o) {
  std::string arch = o.value("--arch", "cpu");
  if (arch != "cpu" && arch != "vulkan") fail("--arch takes cpu or vulkan, not '" + arch + "'");
  loom::ProgramOptions po = program_options(o);
  po.backend = loom::Backend::Cpu;  // the program only hosts the document; nothing runs
  po.offline_cache = false;
  loom::Program program(po);
  program.load_file(o.doc);
  loom::AotOptions ao;
  ao.arch = arch == "vulkan" ? loom::Backend::Vulkan : loom::Backend::Cpu;
  for (const std::string& list : o.all("--cpu")) {
    size_t begin = 0;
    for (size_t comma; (comma = list.find(',', begin)) != std::string::npos; begin = comma + 1)
      ao.cpu_levels.push_back(list.substr(begin, comma - begin));
    ao.cpu_levels.push_back(list.substr(begin));
    if (std::find(ao.cpu_levels.begin(), ao.cpu_levels.end(), "") != ao.cpu_levels.end())
      fail("--cpu takes LEVEL[,LEVEL...], got '" + list + "'");
  }
  if (!ao.cpu_levels.empty() && arch != "cpu")
    fail("--cpu describes CPU modules, not --arch " + arch);
  if (std::string v = o.value("--vulkan-version"); !v.empty()) {
    if (arch != "vulkan") fail("--vulkan-version describes Vulkan modules, not --arch " + arch);
    if (v != "1.0" && v != "1.1" && v != "1.2")
      fail("--vulkan-version takes 1.0, 1.1 or 1.2, not '" + v + "'");
    ao.vulkan_version = (1u << 22) | (static_cast<uint32_t>(v[2] - '0') << 12);
  }
  if (!o.value("--workgroup-size").empty())
    ao.workgroup_size = to_int("--workgroup-size", o.value("--workgroup-size"));
  loom::AotModule builder(program, ao);
  builder.add_document();
  for (const std::string& kernel : o.all("--kernel")) builder.add_kernel(kernel);
  loom::aot::Module m = builder.module();
  std::string out = o.value("--output");
  m.meta.name = std::filesystem::path(out).stem().string();
  if (o.flag("--folder"))
    loom::aot::save_module_folder(m, out);
  else
    loom::aot::save_module_archive(m, out);
  for (const loom::aot::KernelInfo& k : m.meta.kernels) {
    std::string targs;
    for (const loom::aot::TemplateArgument& t : k.template_args)
      targs += (targs.empty() ? "" : ", ") + t.param + "=" +
               (t.kind == loom::aot::TemplateArgument::Kind::Field ? t.field
                : t.kind == loom::aot::TemplateArgument::Kind::Ndarray
                    ? loom::value_type_name(t.elem) + "/" + std::to_string(t.i) + "d"
                : t.kind == loom::aot::TemplateArgument::Kind::Float ? std::to_string(t.f)
                : t.kind == loom::aot::TemplateArgument::Kind::Bool  ? (t.b ? "true" : "false")
                                                                     : std::to_string(t.i));
    std::printf("kernel %s%s: %zu task(s)\n", k.name.c_str(),
                targs.empty() ? "" : ("(" + targs + ")").c_str(), k.abi.tasks.size());
  }
  uint64_t bytes = 0;
  for (const loom::aot::BlobInfo& b : m.meta.blobs) bytes += b.size;
  std::string target = arch;
  if (arch == "cpu") {
    target += " (";
    for (size_t l = 0; l < m.meta.needs.cpu_levels.size(); ++l)
      target += (l ? ", " : "") + m.meta.needs.cpu_levels[l].cpu;
    target += ")";
  }
  std::printf(
      "wrote %s: %s module, %zu kernel(s), %zu pipeline(s), %zu blob(s), %llu bytes of code\n",
      out.c_str(), target.c_str(), m.meta.kernels.size(), m.meta.pipelines.size(),
      m.meta.blobs.size(), static_cast<unsigned long long>(bytes));
  return 0;
}

int cmd_check_or_compile(const Options& o, bool compile) {
  if (compile && !o.value("--output").empty()) return cmd_compile_module(o);
  if (!o.value("--arch").empty() || o.flag("--folder") || !o.value("--cpu").empty() ||
      !o.value("--vulkan-version").empty() || !o.value("--kernel").empty())
    fail(
        "--arch, --cpu, --vulkan-version, --kernel and --folder describe a module: give its file "
        "with -o "
        "FILE");
  loom::ProgramOptions po = program_options(o);
  if (!compile) po.offline_cache = false;
  // Check runs nothing: resources are checked but get no memory (a 4 GiB field costs nothing).
  if (!compile) po.allocate = false;
  loom::Program program(po);
  program.load_file(o.doc);  // load validates the document
  for (const std::string& line : program.prepare_pipelines(compile))
    std::printf("%s\n", line.c_str());
  if (!compile)
    for (const loom::Program::Warning& w : program.warnings())
      std::printf("warning: %s\n", w.to_string().c_str());
  if (compile && o.flag("--stats")) print_stats(program);
  std::printf("ok\n");
  return 0;
}

// "64M", "512K", "2G", "1000000": bytes.
size_t parse_bytes(const std::string& option, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  double scale = 1;
  std::string unit = end ? std::string(end) : "";
  if (unit == "K" || unit == "k") scale = 1024;
  if (unit == "M" || unit == "m") scale = 1024.0 * 1024;
  if (unit == "G" || unit == "g") scale = 1024.0 * 1024 * 1024;
  bool known = unit.empty() || scale != 1;
  if (text.empty() || end == text.c_str() || !known || !(v > 0) || v * scale > 1e18)
    fail(option + " expects a number of bytes (64M, 512K, 2G, 1000000), got '" + text + "'");
  return static_cast<size_t>(v * scale);
}

// `loom grad DOC --loss L --wrt X ...`: a tape over init, step N times and loss.
int cmd_grad(const Options& o) {
  std::string loss = o.value("--loss");
  if (loss.empty()) fail("'loom grad' needs --loss NAME (a field or ndarray declared needs_grad)");
  std::vector<std::string> wrt = o.all("--wrt");
  if (wrt.empty()) fail("'loom grad' needs at least one --wrt NAME (see loom grad --help)");
  loom::Program program(program_options(o));
  program.load_file(o.doc);
  int steps = to_int("--steps", o.value("--steps", "1"));
  loom::TapeOptions options;
  options.loss = loss;
  if (!o.value("--memory-budget").empty())
    options.memory_budget = parse_bytes("--memory-budget", o.value("--memory-budget"));
  loom::Args args;
  for (const std::string& a : o.all("--arg")) {
    auto [name, value] = split_assignment("--arg", a);
    args.emplace_back(name, parse_arg(value));
  }
  std::vector<std::string> resources = program.resource_names();
  auto is_resource = [&](const std::string& n) {
    return std::find(resources.begin(), resources.end(), n) != resources.end();
  };
  auto is_argpack = [&](const std::string& n) { return program.document().argpack(n) != nullptr; };
  // "world.shape": a struct inside an argpack, every float member under it.
  auto inside_argpack = [&](const std::string& n) {
    size_t dot = n.find('.');
    return dot != std::string::npos && is_argpack(n.substr(0, dot));
  };
  for (const std::string& w : wrt)
    if (is_resource(w) && !is_argpack(w) && !is_resource(w + ".grad"))
      fail(o.doc + ": --wrt " + w + ": '" + w +
           "' has no gradient: declare it \"needs_grad\": true in the document");
  // Each pipeline gets the --arg values its launches take; one that none takes is an error.
  std::vector<std::string> pipelines;
  if (program.has_pipeline("init")) pipelines.push_back("init");
  if (!program.has_pipeline("step") && steps > 0)
    fail(o.doc + ": the document has no 'step' pipeline");
  std::set<std::string> taken;
  auto args_for = [&](const std::string& pipeline) {
    loom::Args subset;
    std::set<std::string> params;
    for (const auto& [kernel, ignored] : program.pipeline_launches(pipeline))
      for (const auto& k : program.document().kernels)
        if (k.name == kernel)
          for (const auto& p : k.params) params.insert(p.name);
    for (const auto& a : args)
      if (params.count(a.first)) {
        subset.push_back(a);
        taken.insert(a.first);
      }
    return subset;
  };
  loom::Tape tape(program, options);
  if (program.has_pipeline("init")) tape.run_pipeline("init", args_for("init"));
  loom::Args step_args = steps > 0 ? args_for("step") : loom::Args{};
  for (int s = 0; s < steps; ++s) tape.run_pipeline("step", step_args);
  bool has_loss = program.has_pipeline("loss");
  if (has_loss) tape.run_pipeline("loss", args_for("loss"));
  for (const auto& a : args)
    if (!taken.count(a.first)) fail("--arg " + a.first + ": no launch of the pipelines takes it");
  const loom::TapeReport& r = tape.backward();
  std::printf("%s: loss %s = %.9g after %s%d step%s%s\n", o.doc.c_str(), loss.c_str(), r.loss,
              program.has_pipeline("init") ? "init, " : "", steps, steps == 1 ? "" : "s",
              has_loss ? ", loss" : "");
  for (const std::string& w : wrt) {
    if (is_resource(w) && !is_argpack(w)) {
      loom::ArrayView g = program.array(w + ".grad");
      size_t n = g.bytes / static_cast<size_t>(loom::size_of(g.dtype));
      double sum2 = 0, largest = 0;
      for (size_t k = 0; k < n; ++k) {
        double v = g.scalar(k);
        sum2 += v * v;
        largest = std::max(largest, std::fabs(v));
      }
      std::printf("  d %s / d %s: norm %.6g, largest |component| %.6g (%s.grad, %zu value%s)\n",
                  loss.c_str(), w.c_str(), std::sqrt(sum2), largest, w.c_str(), n,
                  n == 1 ? "" : "s");
      if (n <= 4)
        for (size_t k = 0; k < n; ++k) std::printf("    [%zu] %.9g\n", k, g.scalar(k));
      continue;
    }
    // A value parameter, an argpack member ("world.drag") or a whole argpack ("world": every
    // float member); vectors by component ("wind[0]").
    bool found = false;
    for (const auto& [name, value] : r.value_gradients)
      if (name == w || name.rfind(w + "[", 0) == 0 ||
          ((is_argpack(w) || inside_argpack(w)) && name.rfind(w + ".", 0) == 0)) {
        std::printf("  d %s / d %s = %.9g\n", loss.c_str(), name.c_str(), value);
        found = true;
      }
    if (!found) {
      std::string have;
      for (const auto& [name, value] : r.value_gradients) have += (have.empty() ? "" : ", ") + name;
      fail(o.doc + ": --wrt " + w +
           (is_argpack(w) ? ": no launch recorded passes argpack '" + w +
                                "' to a kernel, or it has no float value member"
                          : ": neither a resource nor a float value parameter or argpack member "
                            "of the recorded launches") +
           (have.empty() ? std::string() : " (their float values: " + have + ")"));
    }
  }
  std::printf("%s\n", r.to_string().c_str());
  for (const std::string& dump : o.all("--dump")) {
    auto [name, file] = split_assignment("--dump", dump);
    program.dump_npy(name, file);
    std::printf("wrote %s -> %s\n", name.c_str(), file.c_str());
  }
  if (o.flag("--stats")) print_stats(program);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  try {
    if (o.command == "run") return cmd_run(o, false);
    if (o.command == "bench") return cmd_run(o, true);
    if (o.command == "launch") return cmd_launch(o);
    if (o.command == "ir") return cmd_ir(o);
    if (o.command == "check") return cmd_check_or_compile(o, false);
    if (o.command == "compile") return cmd_check_or_compile(o, true);
    if (o.command == "fmt") return cmd_fmt(o);
    if (o.command == "spirv") return cmd_spirv(o);
    if (o.command == "grad") return cmd_grad(o);
    if (o.command == "devices") {
      std::vector<std::string> devices = loom::enumerate_vulkan_devices();
      if (devices.empty())
        std::printf(
            "no Vulkan device (install mesa-vulkan-drivers for lavapipe); use --backend cpu\n");
      for (const std::string& d : devices) std::printf("%s\n", d.c_str());
      return 0;
    }
  } catch (const loom::InternalError& e) {
    fail(std::string(e.what()) + " (a bug in Loom, please report it)");
  } catch (const loom::Error& e) {
    fail(e.what());
  } catch (const std::exception& e) {
    fail(std::string("internal error: ") + e.what());
  }
  return 0;
}
