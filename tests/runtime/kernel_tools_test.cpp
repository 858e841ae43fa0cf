// Loaded CPU kernels are visible to tools: their unwind tables are registered with libgcc
// while they are loaded (C++ exceptions and backtrace() cross kernel frames), tables the
// unwinder would misread are refused, and every loaded image is listed for debuggers through
// GDB's JIT interface; real gdb stops in a kernel by name and shows its callers.
#include <gtest/gtest.h>

#include <elf.h>
#include <execinfo.h>
#include <unistd.h>
#include <unwind.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "compiler/codegen_llvm/cpu_codegen.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/cpu/elf_loader.h"
#include "runtime/cpu/gdb_jit.h"
#include "tests/runtime/assemble.h"
#include "tests/runtime/counting_kernel.h"

// libgcc's lookup of the FDE covering `pc`, over registered tables and loaded ELF files
// (unwind-dw2-fde.h; no public header declares it).
struct dwarf_eh_bases {
  void* tbase;
  void* dbase;
  void* func;
};
extern "C" const void* _Unwind_Find_FDE(void* pc, dwarf_eh_bases* bases);

using namespace loom;

namespace {

// The layout GDB reads (gdb manual, "JIT Declarations"): the header must keep it.
static_assert(offsetof(jit_code_entry, symfile_addr) == 16 && sizeof(jit_code_entry) == 32);
static_assert(offsetof(jit_descriptor, relevant_entry) == 8 &&
              offsetof(jit_descriptor, first_entry) == 16);

const codegen::CompiledCpuKernel& counting_object() {
  static const codegen::CompiledCpuKernel compiled =
      codegen::compile_kernel_to_object(*test::counting_kernel());
  return compiled;
}

// A well-formed object's section headers, by name.
std::optional<Elf64_Shdr> section(const std::vector<uint8_t>& object, const std::string& name) {
  Elf64_Ehdr h;
  std::memcpy(&h, object.data(), sizeof h);
  Elf64_Shdr names;
  std::memcpy(&names, object.data() + h.e_shoff + h.e_shstrndx * sizeof(Elf64_Shdr), sizeof names);
  for (size_t i = 0; i < h.e_shnum; ++i) {
    Elf64_Shdr s;
    std::memcpy(&s, object.data() + h.e_shoff + i * sizeof(Elf64_Shdr), sizeof s);
    if (name == reinterpret_cast<const char*>(object.data() + names.sh_offset + s.sh_name))
      return s;
  }
  return std::nullopt;
}

// Where an ELF object (a debugger's view of a loaded image) says symbol `name` lies: its
// section's sh_addr plus its value; nullopt when its symbol table has no such symbol.
std::optional<uint64_t> symbol_address(const uint8_t* elf, size_t size, const std::string& name) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(elf, ELFMAG, SELFMAG) != 0) return std::nullopt;
  Elf64_Ehdr h;
  std::memcpy(&h, elf, sizeof h);
  auto shdr = [&](size_t i) {
    Elf64_Shdr s;
    std::memcpy(&s, elf + h.e_shoff + i * sizeof(Elf64_Shdr), sizeof s);
    return s;
  };
  for (size_t i = 0; i < h.e_shnum; ++i) {
    Elf64_Shdr table = shdr(i);
    if (table.sh_type != SHT_SYMTAB) continue;
    Elf64_Shdr strings = shdr(table.sh_link);
    for (size_t k = 0; k < table.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, elf + table.sh_offset + k * sizeof(Elf64_Sym), sizeof sym);
      if (name != reinterpret_cast<const char*>(elf + strings.sh_offset + sym.st_name)) continue;
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= h.e_shnum) return std::nullopt;
      return shdr(sym.st_shndx).sh_addr + sym.st_value;
    }
  }
  return std::nullopt;
}

// The objects listed in GDB's JIT descriptor, walked as a debugger walks them.
std::vector<const jit_code_entry*> listed_for_debuggers() {
  cpu::GdbJitLock lock;
  std::vector<const jit_code_entry*> out;
  EXPECT_EQ(__jit_debug_descriptor.version, 1u);
  const jit_code_entry* previous = nullptr;
  for (const jit_code_entry* e = __jit_debug_descriptor.first_entry; e; e = e->next_entry) {
    EXPECT_EQ(e->prev_entry, previous);
    previous = e;
    out.push_back(e);
  }
  return out;
}

// The entries whose object names `symbol` at `address`.
int entries_naming(const std::string& symbol, const void* address) {
  int n = 0;
  for (const jit_code_entry* e : listed_for_debuggers()) {
    auto at =
        symbol_address(reinterpret_cast<const uint8_t*>(e->symfile_addr), e->symfile_size, symbol);
    n += at && *at == reinterpret_cast<uint64_t>(address) ? 1 : 0;
  }
  return n;
}

const void* fde_function(const void* pc) {
  dwarf_eh_bases bases{};
  // A return address points after its call; any byte inside the function will do.
  if (!_Unwind_Find_FDE(const_cast<void*>(pc), &bases)) return nullptr;
  return bases.func;
}

// A hand-written kernel with call-frame information that calls back into the test through a
// function pointer, with a saved register and a frame a plain stack walk cannot guess.
// EXTRA goes right after .cfi_startproc.
std::string through_kernel_source(const std::string& extra = "") {
  return R"(
    .text
    .globl through_kernel
    .type through_kernel,@function
through_kernel:
    .cfi_startproc
)" + extra +
         R"(
    .cfi_remember_state
    .cfi_restore_state
    pushq %rbx
    .cfi_def_cfa_offset 16
    .cfi_offset %rbx, -16
    subq $32, %rsp
    .cfi_def_cfa_offset 48
    movq %rdi, %rbx
    callq *%rbx
    addq $32, %rsp
    .cfi_def_cfa_offset 16
    popq %rbx
    .cfi_def_cfa_offset 8
    retq
    .cfi_endproc
    .size through_kernel, .-through_kernel
)";
}

using Probe = void (*)();
using ThroughKernel = void (*)(Probe);

// The return addresses backtrace() saw from inside the probe.
std::vector<void*>& probe_frames() {
  static std::vector<void*> frames;
  return frames;
}
void record_backtrace() {
  std::vector<void*>& frames = probe_frames();
  frames.assign(64, nullptr);
  frames.resize(static_cast<size_t>(backtrace(frames.data(), 64)));
}
void throw_from_probe() { throw std::runtime_error("thrown through a kernel"); }

[[gnu::noinline]] void call_through(ThroughKernel kernel, Probe probe) {
  kernel(probe);
  asm volatile("" ::: "memory");  // not a tail call: this frame stays on the stack
}

std::string image_error(const std::vector<uint8_t>& object) {
  Place place;
  place.kernel = "asm";
  try {
    cpu::ElfImage::load(object, place);
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, "asm") << e.what();
    return e.message();
  }
  return "";
}

}  // namespace

TEST(UnwindTables, CodegenKeepsThemForKernelsThatNeverThrow) {
  auto eh_frame = section(counting_object().object, ".eh_frame");
  ASSERT_TRUE(eh_frame) << "the compiled kernel has no .eh_frame";
  EXPECT_GT(eh_frame->sh_size, 0u);
  EXPECT_TRUE(eh_frame->sh_flags & SHF_ALLOC);
}

TEST(UnwindTables, RegisteredWhileTheKernelIsLoaded) {
  const auto& compiled = counting_object();
  cpu::CpuModule module;
  auto kernel = module.load(compiled.abi, compiled.object);
  std::vector<const void*> functions;
  for (const cpu::LoadedTask& t : kernel->tasks) {
    functions.push_back(reinterpret_cast<const void*>(t.entry));
    if (t.extent) functions.push_back(reinterpret_cast<const void*>(t.extent));
  }
  ASSERT_EQ(functions.size(), 3u);  // range task, its extent, serial task
  for (const void* f : functions) {
    EXPECT_EQ(fde_function(f), f);
    EXPECT_EQ(fde_function(static_cast<const uint8_t*>(f) + 1), f);
  }
  kernel.reset();  // the last owner: unmapped, and the table deregistered first
  for (const void* f : functions) EXPECT_EQ(fde_function(f), nullptr);
}

TEST(UnwindTables, ExceptionsAndBacktracesCrossAKernelFrame) {
  auto image = cpu::ElfImage::load(test::assemble_x86_64(through_kernel_source()), Place{});
  auto symbol = image->find("through_kernel");
  ASSERT_TRUE(symbol && symbol->code);
  auto kernel = reinterpret_cast<ThroughKernel>(const_cast<uint8_t*>(symbol->address));
  ASSERT_EQ(fde_function(symbol->address), symbol->address);

  // backtrace() from inside: the kernel's frame, then the caller's, then the test's.
  call_through(kernel, record_backtrace);
  size_t in_kernel = probe_frames().size();
  for (size_t i = 0; i < probe_frames().size(); ++i)
    if (_Unwind_FindEnclosingFunction(probe_frames()[i]) == symbol->address) in_kernel = i;
  ASSERT_LT(in_kernel + 2, probe_frames().size()) << "the walk stops at the kernel's frame";
  EXPECT_EQ(_Unwind_FindEnclosingFunction(probe_frames()[in_kernel + 1]),
            reinterpret_cast<void*>(&call_through));

  // A C++ exception unwinds through it (no handler there: libgcc only restores its frame).
  EXPECT_THROW(call_through(kernel, throw_from_probe), std::runtime_error);
  call_through(kernel, record_backtrace);  // the stack is whole afterwards
  EXPECT_GT(probe_frames().size(), in_kernel + 2);
}

// libgcc reads a registered table lazily and aborts on what it cannot decode, so the loader
// refuses such a table with an error naming the object's unwind section.
TEST(UnwindTables, RefusesTablesTheUnwinderWouldMisread) {
  EXPECT_EQ(image_error(test::assemble_x86_64(through_kernel_source())), "");
  struct Case {
    const char* extra;
    const char* expected;
  };
  const Case cases[] = {
      {".cfi_escape 0x0b", "restore_state without a remembered state"},
      {".cfi_escape 0x3f", "unknown call-frame instruction 63"},
      {".cfi_escape 0x0f, 0x02, 0x77, 0x08", "a DWARF expression"},
      {".cfi_escape 0x0c, 0x20, 0x08", "names register 32, which the unwinder does not have"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.extra);
    std::string error = image_error(test::assemble_x86_64(through_kernel_source(c.extra)));
    EXPECT_NE(error.find("the unwind table, section"), std::string::npos) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
  }

  // The FDE (after the CIE) covering more than the kernel's code, or naming no CIE.
  std::vector<uint8_t> good = test::assemble_x86_64(through_kernel_source());
  auto eh_frame = section(good, ".eh_frame");
  ASSERT_TRUE(eh_frame);
  uint32_t cie_length = 0;
  std::memcpy(&cie_length, good.data() + eh_frame->sh_offset, 4);
  const size_t fde = eh_frame->sh_offset + 4 + cie_length;
  std::vector<uint8_t> wide = good;
  const uint32_t range = 0x7fffffff;
  std::memcpy(wide.data() + fde + 12, &range, 4);  // after length, CIE pointer, pc_begin
  EXPECT_NE(image_error(wide).find("describes code outside the kernel's"), std::string::npos)
      << image_error(wide);
  std::vector<uint8_t> orphan = good;
  const uint32_t far_back = 0x1000;
  std::memcpy(orphan.data() + fde + 4, &far_back, 4);
  EXPECT_NE(image_error(orphan).find("names no CIE"), std::string::npos) << image_error(orphan);
}

// Whatever a corrupt table holds, what the loader accepts libgcc can parse: looking an
// address up makes libgcc read every registered table it has not read yet, and it aborts the
// process on an encoding or entry it cannot decode.
TEST(UnwindTables, CorruptTablesNeverReachTheUnwinder) {
  const std::vector<uint8_t> good = test::assemble_x86_64(through_kernel_source());
  auto eh_frame = section(good, ".eh_frame");
  ASSERT_TRUE(eh_frame);
  std::mt19937 random(1234);
  int loaded = 0, refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> object = good;
    int changes = 1 + static_cast<int>(random() % 3);
    for (int c = 0; c < changes; ++c) {
      size_t at = eh_frame->sh_offset + random() % eh_frame->sh_size;
      object[at] = static_cast<uint8_t>(random());
    }
    std::unique_ptr<cpu::ElfImage> image;
    try {
      image = cpu::ElfImage::load(object, Place{});
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the unwind table"), std::string::npos) << e.what();
      ++refused;
      continue;
    }
    ++loaded;
    fde_function(image->find("through_kernel")->address);
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(refused, 0);
}

TEST(GdbJit, ListsEachLoadedImageAtItsAddresses) {
  const auto& compiled = counting_object();
  const std::string entry_symbol = compiled.abi.tasks.at(0).symbol;
  const size_t before = listed_for_debuggers().size();
  cpu::CpuModule module;
  auto first = module.load(compiled.abi, compiled.object);
  {
    cpu::GdbJitLock lock;
    EXPECT_EQ(__jit_debug_descriptor.action_flag, static_cast<uint32_t>(JIT_REGISTER_FN));
    EXPECT_EQ(__jit_debug_descriptor.relevant_entry, __jit_debug_descriptor.first_entry);
  }
  auto second = module.load(compiled.abi, compiled.object);
  EXPECT_EQ(listed_for_debuggers().size(), before + 2);
  auto* first_entry = reinterpret_cast<const void*>(first->tasks[0].entry);
  auto* second_entry = reinterpret_cast<const void*>(second->tasks[0].entry);
  ASSERT_NE(first_entry, second_entry);
  EXPECT_EQ(entries_naming(entry_symbol, first_entry), 1);
  EXPECT_EQ(entries_naming(entry_symbol, second_entry), 1);

  // Each listed object is the kernel's, with its loaded sections at their loaded addresses.
  int listed_kernels = 0;
  for (const jit_code_entry* e : listed_for_debuggers()) {
    std::vector<uint8_t> listed(e->symfile_addr, e->symfile_addr + e->symfile_size);
    auto at = symbol_address(listed.data(), listed.size(), entry_symbol);
    if (!at) continue;
    ++listed_kernels;
    EXPECT_EQ(listed.size(), compiled.object.size());
    EXPECT_TRUE(*at == reinterpret_cast<uint64_t>(first_entry) ||
                *at == reinterpret_cast<uint64_t>(second_entry));
    auto text = section(listed, ".text");
    auto eh_frame = section(listed, ".eh_frame");
    ASSERT_TRUE(text && eh_frame);
    EXPECT_LE(text->sh_addr, *at);
    EXPECT_NE(eh_frame->sh_addr, 0u);
    EXPECT_EQ(section(listed, ".symtab")->sh_addr, 0u);  // not loaded: left as it was
  }
  EXPECT_EQ(listed_kernels, 2);

  first.reset();
  EXPECT_EQ(listed_for_debuggers().size(), before + 1);
  EXPECT_EQ(entries_naming(entry_symbol, first_entry), 0);
  EXPECT_EQ(entries_naming(entry_symbol, second_entry), 1);
  {
    cpu::GdbJitLock lock;
    EXPECT_EQ(__jit_debug_descriptor.relevant_entry, nullptr);
    EXPECT_EQ(__jit_debug_descriptor.action_flag, static_cast<uint32_t>(JIT_NOACTION));
  }
  second.reset();
  EXPECT_EQ(listed_for_debuggers().size(), before);
}

TEST(GdbJit, ConcurrentLoadsAndUnloadsKeepTheListWhole) {
  const auto& compiled = counting_object();
  const size_t before = listed_for_debuggers().size();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      cpu::CpuModule module;
      for (int i = 0; i < 50; ++i) {
        auto a = module.load(compiled.abi, compiled.object);
        auto b = module.load(compiled.abi, compiled.object);
        if (!a || !b) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(listed_for_debuggers().size(), before);
}

// Real gdb: a pending breakpoint on the kernel's symbol resolves when the image is listed,
// stops there, and the backtrace shows the kernel and the program's frames below it.
TEST(GdbJit, GdbStopsInAKernelByNameAndShowsItsCallers) {
  const char* gdb = "/usr/bin/gdb";
  if (access(gdb, X_OK) != 0) GTEST_SKIP() << gdb << " is not installed";
  const auto& compiled = counting_object();
  const std::string symbol = compiled.abi.tasks.at(0).symbol;
  namespace fs = std::filesystem;
  fs::path record = fs::temp_directory_path() / ("loom_gdb_record_" + std::to_string(getpid()));
  {
    std::vector<uint8_t> bytes = serialize_kernel_record({compiled.abi, compiled.object});
    std::ofstream out(record, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  std::string command = std::string("timeout 120 ") + gdb +
                        " -nx -batch -iex 'set debuginfod enabled off'"
                        " -ex 'set breakpoint pending on' -ex 'break " +
                        symbol + "' -ex run -ex bt -ex kill --args " + LOOM_GDB_TARGET + " " +
                        record.string() + " 2>&1";
  std::string output;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buffer[4096];
    size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, p)) > 0) output.append(buffer, n);
    pclose(p);
  }
  fs::remove(record);
  if (output.find("ptrace: Operation not permitted") != std::string::npos)
    GTEST_SKIP() << "gdb may not trace processes here (ptrace refused):\n" << output;
  EXPECT_NE(output.find("Breakpoint 1, "), std::string::npos) << output;
  size_t frame0 = output.find("#0 ");
  ASSERT_NE(frame0, std::string::npos) << output;
  std::string first_line = output.substr(frame0, output.find('\n', frame0) - frame0);
  EXPECT_NE(first_line.find(symbol), std::string::npos) << output;
  size_t caller = output.find("#1 ");
  ASSERT_NE(caller, std::string::npos) << output;
  EXPECT_NE(output.find("run_kernel_under_debugger", caller), std::string::npos) << output;
  EXPECT_NE(output.find(" main ", caller), std::string::npos) << output;
  EXPECT_EQ(output.find("Backtrace stopped"), std::string::npos) << output;
}
