// Writes the modules the C ABI tests load: for each arch, one module per test document
// (templates, argpacks, ndarray and texture parameters, a debug module whose launches fail
// their bounds checks), built with the C++ AOT API. The tests themselves use only loom.h.
//
//   make_test_modules SOURCE_DIR OUT_DIR
#include <cstdio>
#include <functional>
#include <string>

#include "engine_plugin/include/loom/aot_module.h"
#include "engine_plugin/include/loom/program.h"
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
      // 0-d fields: ndim 0 through the C ABI.
      write(src, out, arch, "tests/e2e/docs/zero_d_fields.loom.json", "zero_d", false,
            [](loom::AotModule& m) { m.add_document(); });
      for (const char* sample : {"cloth", "julia", "heat"})
        write(src, out, arch, std::string("assets/graphs/") + sample + ".loom.json", sample, false,
              [](loom::AotModule& m) { m.add_document(); });
    }
  } catch (const loom::Error& e) {
    std::fprintf(stderr, "make_test_modules: %s\n", e.what());
    return 1;
  }
  return 0;
}
