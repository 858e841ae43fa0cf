// CPU object code (from the offline cache or an AOT module): map, relocate and link an
// ELF64 object, then look its symbols up. Nothing is executed.
#include <span>

#include "runtime/common/error.h"
#include "runtime/cpu/elf_loader.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  try {
    auto image = cpu::ElfImage::load(std::span<const uint8_t>(data, size), Place{"fuzz.o"});
    image->find("main");
    if (auto symbol = image->find("loom_kernel_main")) image->string_at(symbol->address);
  } catch (const Error&) {
  }
  return 0;
}
