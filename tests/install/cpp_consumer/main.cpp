// A program outside the Loom source tree built against the installed C++ API
// (tests/install/run_install_test.sh): loom_cpp_consumer DOCUMENT FIELD STEPS MODULE_OUT
//
// Loads the graph document on the CPU (compiled in this process: libloom_cpp.so carries the
// compiler), runs its pipeline `init` once and `step` STEPS times, prints FIELD's sum after
// each, checks that a mistake comes back as a loom::Error this program can catch, and saves
// the document as an AOT module at MODULE_OUT for the C consumer to run. Exits 1 on a failure.
#include <loom/aot_module.h>
#include <loom/program.h>
#include <loom/tape.h>  // installed beside program.h; includes only <loom/...> names

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

double sum_of(loom::Program& program, const std::string& field) {
  loom::ArrayView view = program.array(field);
  double sum = 0;
  for (size_t e = 0; e < view.elements(); ++e)
    for (int c = 0; c < view.components; ++c) sum += view.component(e, c);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: loom_cpp_consumer DOCUMENT FIELD STEPS MODULE_OUT\n");
    return 2;
  }
  const std::string field = argv[2];
  const int steps = std::atoi(argv[3]);
  try {
    loom::ProgramOptions options;
    options.backend = loom::Backend::Cpu;
    loom::Program program(options);
    program.load_file(argv[1]);
    std::printf("backend %s\n", loom::backend_name(program.backend()));
    for (const std::string& name : program.resource_names())
      std::printf("resource %s\n", name.c_str());

    loom::ArrayView view = program.array(field);
    std::printf("field %s: %zu elements of %s\n", field.c_str(), view.elements(),
                std::string(loom::scalar_name(view.dtype)).c_str());
    program.run_pipeline("init");
    double before = sum_of(program, field);
    std::printf("after init: sum %.6f\n", before);
    for (int i = 0; i < steps; ++i) program.run_pipeline("step");
    double after = sum_of(program, field);
    std::printf("after %d steps: sum %.6f\n", steps, after);
    if (!std::isfinite(before) || !std::isfinite(after) || before == 0) {
      std::fprintf(stderr, "loom_cpp_consumer: %s holds no finite, non-zero values\n",
                   field.c_str());
      return 1;
    }

    // An exception thrown inside libloom_cpp.so is caught here as the type program.h names.
    try {
      program.launch("no_such_kernel");
      std::fprintf(stderr, "loom_cpp_consumer: launching an unknown kernel did not throw\n");
      return 1;
    } catch (const loom::Error& e) {
      std::printf("caught loom::Error: %s\n", e.what());
    }

    loom::AotOptions aot;
    aot.arch = loom::Backend::Cpu;
    loom::AotModule module(program, aot);
    module.add_document();
    std::string out = argv[4];
    std::string folder = out.substr(0, out.rfind('/'));
    std::string name = out.substr(out.rfind('/') + 1);
    name = name.substr(0, name.rfind(".loommod"));
    std::printf("saved %s\n", module.save(folder, name).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loom_cpp_consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
