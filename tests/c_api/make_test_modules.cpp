// Writes the modules the C ABI tests load: for each arch, one module per test document
// (templates, argpacks, ndarray and texture parameters, debug modules whose launches fail
// their bounds checks or the access rule across loops), built with the C++ AOT API, and
// modules whose SPIR-V is hostile. The tests themselves use only loom.h.
//
//   make_test_modules SOURCE_DIR OUT_DIR
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/aot/module.h"
#include "runtime/aot/module_files.h"
#include "runtime/common/error.h"

namespace {

void write(const std::string& src, const std::string& out, loom::Backend arch,
           const std::string& doc, const std::string& name, bool debug,
           const std::function<void(loom::AotModule&)>& add) {
  loom::ProgramOptions po;
  po.backend = loom::Backend::Cpu;
  po.offline_cache = false;
  po.debug = debug;
  loom::Program program(po);
  program.load_file(src + "/" + doc);
  loom::AotOptions ao;
  ao.arch = arch;
  loom::AotModule m(program, ao);
  add(m);
  m.save(out + (arch == loom::Backend::Vulkan ? "/vulkan" : "/cpu"), name);
}

// heat with its pipeline's diffusion constant k = 0.3 instead of 0.2, as OUT/ARCH/NAME.loommod:
// the same kernels and layout, only a value in the metadata differs, spelled in as many
// characters, so the archive has heat's size. Hot reload tests rewrite one with the other.
void write_heat_k(const std::string& src, const std::string& out, loom::Backend arch,
                  const std::string& name) {
  std::ifstream in(src + "/assets/graphs/heat.loom.json", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int replaced = 0;
  for (size_t at = text.find("\"k\": 0.2"); at != std::string::npos;
       at = text.find("\"k\": 0.2", at), ++replaced)
    text.replace(at, 8, "\"k\": 0.3");
  if (replaced == 0) throw loom::Error("heat.loom.json has no \"k\": 0.2 any more");
  // Written as a module named heat in a folder of its own, then moved to NAME.loommod: the
  // module's name is part of its metadata.
  namespace fs = std::filesystem;
  std::string work = out + "/" + name;
  fs::create_directories(work);
  std::ofstream(work + "/heat.loom.json", std::ios::binary | std::ios::trunc) << text;
  write(work, work, arch, "heat.loom.json", "heat", false,
        [](loom::AotModule& m) { m.add_document(); });
  const char* dir = arch == loom::Backend::Vulkan ? "/vulkan/" : "/cpu/";
  fs::rename(work + dir + "heat.loommod", out + dir + name + ".loommod");
  fs::remove_all(work);
}

// heat's Vulkan module with the SPIR-V of diffuse's task made hostile by `edit` (the archive's
// hashes are right: only the shader is bad), as OUT/vulkan/NAME.loommod.
void write_hostile(const std::string& src, const std::string& out, const std::string& name,
                   const std::function<void(std::vector<uint32_t>&)>& edit) {
  loom::ProgramOptions po;
  po.backend = loom::Backend::Cpu;
  po.offline_cache = false;
  loom::Program program(po);
  program.load_file(src + "/assets/graphs/heat.loom.json");
  loom::AotOptions ao;
  ao.arch = loom::Backend::Vulkan;
  loom::AotModule m(program, ao);
  m.add_document();
  loom::aot::Module module = m.module();
  std::vector<uint8_t>& blob = module.blobs.at(module.meta.kernels.at(1).spirv_blobs.at(0));
  std::vector<uint32_t> words(blob.size() / 4);
  std::memcpy(words.data(), blob.data(), words.size() * 4);
  edit(words);
  blob.assign(reinterpret_cast<const uint8_t*>(words.data()),
              reinterpret_cast<const uint8_t*>(words.data() + words.size()));
  loom::aot::finalize_module(module);
  loom::aot::save_module_archive(module, out + "/vulkan/" + name + ".loommod");
}

// The word index of the module's OpEntryPoint.
size_t entry_point(const std::vector<uint32_t>& words) {
  for (size_t at = 5; at < words.size() && (words[at] >> 16) != 0; at += words[at] >> 16)
    if ((words[at] & 0xffff) == 15) return at;
  throw loom::Error("the kernel's SPIR-V has no entry point");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_test_modules SOURCE_DIR OUT_DIR\n");
    return 2;
  }
  std::string src = argv[1], out = argv[2];
  try {
    for (loom::Backend arch : {loom::Backend::Cpu, loom::Backend::Vulkan}) {
      write(src, out, arch, "tests/e2e/docs/taichi_args.loom.json", "args", false,
            [](loom::AotModule& m) { m.add_document(); });
      write(src, out, arch, "tests/e2e/docs/taichi_templates.loom.json", "templates", false,
            [](loom::AotModule& m) {
              m.add_kernel_template("inc")
                  .instantiate({{"a", "x"}, {"b", 1}})
                  .instantiate({{"a", "y"}, {"b", 2}});
            });
      write(src, out, arch, "tests/e2e/docs/taichi_argpacks.loom.json", "argpacks", false,
            [](loom::AotModule& m) {
              m.add_kernel("abc_select", {{"p", "abc"}});
              m.add_kernel("struct_sum", {{"pack", "ws"}});
              m.add_kernel("nested_sum", {{"x", "outer"}});
              m.add_document();
            });
      write(src, out, arch, "tests/e2e/docs/resources_in_packs.loom.json", "packs", false,
            [](loom::AotModule& m) {
              m.add_kernel("fill", {{"job", "job"}});
              m.add_kernel("paint", {{"job", "job"}, {"img", "img"}});
              m.add_kernel("probe", {{"img", "img"}, {"u", 0.5}});
              m.add_document();
            });
      write(src, out, arch, "tests/e2e/docs/open_ndarray.loom.json", "open", false,
            [](loom::AotModule& m) {
              m.add_kernel("iota", {{"arr", "ints"}});
              m.add_kernel("iota", {{"arr", "floats"}});
              m.add_document();
            });
      write(src, out, arch, "tests/e2e/docs/out_of_bounds.loom.json", "bounds", true,
            [](loom::AotModule& m) {
              m.add_kernel("shift", {{"arr", "arr"}});
            });
      // Packs with two ndarray members a kernel indexes together and a texture member; the
      // debug build bounds-checks them.
      for (bool debug : {false, true})
        write(src, out, arch, "tests/c_api/docs/handles.loom.json",
              debug ? "handles_debug" : "handles", debug, [](loom::AotModule& m) {
                m.add_kernel("copy", {{"p", "pair"}});
                m.add_kernel("paint", {{"p", "pair"}});
                m.add_document();
              });
      // A tangent kernel with an argpack twin p.dual, given by the example arguments
      // (`loom compile --kernel K.dual` gives none).
      write(src, out, arch, "tests/c_api/docs/argpack_tangent.loom.json", "argpack_tangent", false,
            [](loom::AotModule& m) {
              m.add_kernel(
                  "warp.dual",
                  {{"p", "params"}, {"x", "xs"}, {"y", "ys"}, {"s", 0.6}, {"p.dual", "direction"}});
              m.add_document();
            });
      // Adjoints with a twin per float ndarray an argpack holds (b.pos.grad, b.inner.w.grad,
      // b.lens.c.grad): energy.grad and advance.grad, which its backward pipeline launches.
      write(src, out, arch, "tests/e2e/docs/argpack_ndarray_adjoint.loom.json", "argpack_gradient",
            false, [](loom::AotModule& m) { m.add_document(); });
      // Debug adjoints that check the access rule across loops with shadows the module binds
      // itself (y.written, p.y.written): the document's pipelines' K and K.grad.
      write(src, out, arch, "tests/e2e/docs/autodiff_access_across_loops.loom.json",
            "access_rule_debug", true, [](loom::AotModule& m) { m.add_document(); });
      // 0-d fields: ndim 0 through the C ABI.
      write(src, out, arch, "tests/e2e/docs/zero_d_fields.loom.json", "zero_d", false,
            [](loom::AotModule& m) { m.add_document(); });
      for (const char* sample : {"cloth", "julia", "heat"})
        write(src, out, arch, std::string("assets/graphs/") + sample + ".loom.json", sample, false,
              [](loom::AotModule& m) { m.add_document(); });
      // heat rebuilt: with bounds checks (other code, the same results) and with another k.
      write(src, out, arch, "assets/graphs/heat.loom.json", "heat_debug", true,
            [](loom::AotModule& m) { m.add_document(); });
      write_heat_k(src, out, arch, "heat_k");
    }
    // Hostile SPIR-V in heat's Vulkan module (issue 17): valid SPIR-V whose entry point is
    // not "main" (it crashed lavapipe, and the host with it), and a shader cut inside its
    // entry point instruction.
    write_hostile(src, out, "hostile_entry_point", [](std::vector<uint32_t>& words) {
      words.at(entry_point(words) + 3) = 0x6e69616f;  // "main" -> "oain"
    });
    write_hostile(src, out, "hostile_truncated",
                  [](std::vector<uint32_t>& words) { words.resize(entry_point(words) + 2); });
  } catch (const loom::Error& e) {
    std::fprintf(stderr, "make_test_modules: %s\n", e.what());
    return 1;
  }
  return 0;
}
