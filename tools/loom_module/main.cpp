// `loom-module`: loads and runs AOT modules with the runtime alone — no compiler, no LLVM
// (tests/aot checks what it links). What an engine does through loom.h, from a shell.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/aot/loaded_module.h"
#include "runtime/aot/module_device.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"
#include "runtime/common/resource_npy.h"
#include "runtime/host/field.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"

namespace {

constexpr const char* kUsage = R"(usage: loom-module info FILE
       loom-module run FILE [--steps N] [--dump NAME=FILE.npy ...] [--device D] [--threads N]
                            [--cpu-level NAME]

info  prints the module's target, requirements (a CPU module's levels with their features,
      and the level this CPU runs), resources, kernels (with what each reads, writes and
      updates atomically) and pipelines.
run   loads the module on its arch (the CPU, or a Vulkan device: --device picks one by
      index or name), runs pipeline `init` once (when it has one) and `step` N times
      (default 1), and writes resources as NumPy .npy files (C order; a vector element
      adds a last axis of its components, a matrix two: rows, columns). --cpu-level runs
      a CPU module's level NAME instead of the best one this CPU has (as LOOM_CPU_LEVEL).
FILE is a module archive (.loommod) or an unpacked module folder.
)";

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "loom-module: %s\n", message.c_str());
  std::exit(1);
}

// The resource as `loom run --dump` writes it (runtime/common/resource_npy.h).
void dump(loom::aot::LoadedModule& m, const std::string& name, const std::string& path) {
  loom::ResourceBytes r;
  r.name = name;
  auto elem_dims = [](loom::ValueType e) {
    if (e.is_matrix()) return std::vector<int64_t>{e.rows, e.cols};
    if (e.is_vector()) return std::vector<int64_t>{e.rows};
    return std::vector<int64_t>{};
  };
  if (loom::host::Field* f = m.field(name)) {
    r.dtype = f->desc().elem.scalar;
    r.shape = f->desc().shape;
    r.elem_dims = elem_dims(f->desc().elem);
    r.layout = f->desc().layout;
    r.data = f->data(), r.bytes = f->bytes();
  } else if (loom::host::Ndarray* n = m.ndarray(name)) {
    r.dtype = n->dtype();
    r.shape = n->shape();
    for (const loom::aot::NdarrayInfo& info : m.metadata().ndarrays)
      if (info.name == name) r.elem_dims = elem_dims(info.elem);
    r.data = n->data(), r.bytes = n->bytes();
  } else if (loom::host::Texture* t = m.texture(name)) {
    r.dtype = t->format() == loom::TextureFormat::RGBA8 ? loom::Scalar::U8 : loom::Scalar::F32;
    if (t->ndim() == 3) r.shape.push_back(t->depth());
    r.shape.push_back(t->height());
    r.shape.push_back(t->width());
    r.elem_dims = {t->channels()};
    r.data = t->data(), r.bytes = t->bytes();
  } else {
    fail("the module has no field, ndarray or texture '" + name + "'");
  }
  m.device().read_back(r.data);
  loom::write_resource_npy(r, path);
}

// Every level with its features, then the one this CPU runs (or why it runs none).
void print_cpu_levels(const loom::aot::ModuleMetadata& meta, const std::string& path) {
  const auto& levels = meta.needs.cpu_levels;
  std::printf("needs: %s, %zu CPU level(s), fewest features first\n", meta.needs.target.c_str(),
              levels.size());
  for (const loom::aot::CpuLevel& l : levels) {
    std::string features;
    for (const std::string& f : l.features) features += (features.empty() ? "" : " ") + f;
    std::printf("cpu level %s: %zu feature(s): %s\n", l.cpu.c_str(), l.features.size(),
                features.c_str());
  }
  try {
    const char* forced = std::getenv(loom::aot::kCpuLevelVariable);
    size_t pick = loom::aot::select_cpu_level(meta, path);
    std::printf("this CPU runs level %s%s\n", levels[pick].cpu.c_str(),
                forced ? " (forced by LOOM_CPU_LEVEL)" : "");
  } catch (const loom::Error& e) {
    std::printf("this CPU runs no level: %s\n", e.message().c_str());
  }
}

// "  reads: a, job.out; writes: b; atomics: -": what a render graph declares for a pass.
void print_resource_access(const loom::KernelABI& abi) {
  if (!abi.resource_access_known && !abi.resources.empty()) {
    std::printf("  reads, writes: unknown (the module was written before Loom recorded them)\n");
    return;
  }
  std::string reads, writes, atomics;
  auto add = [](std::string& list, const std::string& name) {
    list += (list.empty() ? "" : ", ") + name;
  };
  for (const loom::ResourceAccess& a : abi.resource_access) {
    if (a.access & loom::kResourceRead) add(reads, a.name);
    if (a.access & loom::kResourceWrite) add(writes, a.name);
    if (a.access & loom::kResourceAtomic) add(atomics, a.name);
  }
  auto shown = [](const std::string& list) { return list.empty() ? "-" : list.c_str(); };
  std::printf("  reads: %s; writes: %s; atomics: %s\n", shown(reads), shown(writes),
              shown(atomics));
}

int info(const loom::aot::Module& m, const std::string& path) {
  const loom::aot::ModuleMetadata& meta = m.meta;
  std::printf("%s: module '%s', format %d, %s, by %s\n", path.c_str(), meta.name.c_str(),
              meta.format_version, loom::aot::arch_name(meta.arch), meta.producer.c_str());
  if (meta.arch == loom::aot::Arch::Vulkan)
    std::printf("needs: %s; workgroups of %u; %u bytes of push constants\n",
                meta.needs.vulkan_features
                    ? loom::describe_requirements(meta.needs.vulkan_features).c_str()
                    : "no optional feature",
                meta.needs.workgroup_size, meta.needs.push_constant_bytes);
  else
    print_cpu_levels(meta, path);
  for (const auto& f : meta.fields)
    std::printf("field %s: %s\n", f.name.c_str(), loom::value_type_name(f.elem).c_str());
  for (const auto& n : meta.ndarrays)
    std::printf("ndarray %s: %s\n", n.name.c_str(), loom::value_type_name(n.elem).c_str());
  for (const auto& t : meta.textures)
    std::printf("texture %s: %s\n", t.name.c_str(), loom::texture_format_name(t.format));
  for (const auto& a : meta.argpacks) std::printf("argpack %s\n", a.name.c_str());
  for (const auto& k : meta.kernels) {
    std::printf("kernel %s: %zu parameter(s), %zu task(s)\n", k.name.c_str(), k.abi.params.size(),
                k.abi.tasks.size());
    if (k.derived.mode != loom::aot::Derivation::Mode::None) {
      std::string twins;
      for (const loom::aot::Derivation::Twin& t : k.derived.twins)
        twins += (twins.empty() ? "" : ", ") + k.abi.params.at(static_cast<size_t>(t.param)).name;
      std::printf("  %s of %s; twins: %s\n",
                  k.derived.mode == loom::aot::Derivation::Mode::Adjoint ? "adjoint" : "tangent",
                  k.derived.of.c_str(), twins.empty() ? "-" : twins.c_str());
    }
    print_resource_access(k.abi);
  }
  for (const auto& p : meta.pipelines)
    std::printf("pipeline %s: %zu launch(es)\n", p.name.c_str(), p.launches.size());
  uint64_t bytes = 0;
  for (const auto& b : meta.blobs) bytes += b.size;
  std::printf("%zu blob(s), %llu bytes\n", meta.blobs.size(),
              static_cast<unsigned long long>(bytes));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 3 ? stderr : stdout);
    return argc < 3 ? 2 : 0;
  }
  std::string command = argv[1], path = argv[2];
  int steps = 1, threads = 0;
  std::string device;
  loom::aot::LoadOptions load;
  std::vector<std::pair<std::string, std::string>> dumps;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--steps")
      steps = std::atoi(value().c_str());
    else if (a == "--threads")
      threads = std::atoi(value().c_str());
    else if (a == "--device")
      device = value();
    else if (a == "--cpu-level")
      load.cpu_level = value();
    else if (a == "--dump") {
      std::string d = value();
      auto eq = d.find('=');
      if (eq == std::string::npos || eq == 0) fail("--dump expects NAME=FILE.npy, got '" + d + "'");
      dumps.emplace_back(d.substr(0, eq), d.substr(eq + 1));
    } else
      fail("unknown option '" + a + "'");
  }
  try {
    loom::aot::Module module = loom::aot::read_module_path(path);
    if (command == "info") return info(module, path);
    if (command != "run") fail("unknown command '" + command + "' (see loom-module --help)");
    std::unique_ptr<loom::Device> dev;
    if (module.meta.arch == loom::aot::Arch::Cpu) {
      dev = loom::make_cpu_device(threads);
    } else {
      loom::VulkanDeviceOptions vo;
      vo.select = device;
      dev = loom::make_vulkan_device(vo);
    }
    loom::aot::LoadedModule m(std::move(module), *dev, path, load);
    if (m.has_pipeline("init")) m.run_pipeline("init");
    for (int s = 0; s < steps && m.has_pipeline("step"); ++s) m.run_pipeline("step");
    dev->synchronize();
    for (const auto& [name, file] : dumps) dump(m, name, file);
    std::string level =
        m.cpu_level() < 0
            ? ""
            : " (CPU level " +
                  m.metadata().needs.cpu_levels[static_cast<size_t>(m.cpu_level())].cpu + ")";
    std::printf("ran %s on %s%s: init + %d step(s)\n", path.c_str(), dev->name().c_str(),
                level.c_str(), steps);
  } catch (const loom::InternalError& e) {
    fail(std::string(e.what()) + " (a bug in Loom, please report it)");
  } catch (const loom::Error& e) {
    fail(e.what());
  } catch (const std::exception& e) {
    fail(std::string("internal error: ") + e.what());
  }
  return 0;
}
