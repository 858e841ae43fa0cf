// The CPU runtime's ELF loader: real kernels of the sample graphs, every relocation type it
// implements (assembled exactly), section protections, unmapping, CPU feature checks, and
// corrupt objects of every kind, each a loom::Error naming the kernel, never a crash.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen_llvm/cpu_codegen.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/inst.h"
#include "engine_plugin/include/loom/program.h"
#include "runtime/common/abi_serialize.h"
#include "runtime/common/error.h"
#include "runtime/cpu/cpu_module.h"
#include "runtime/cpu/elf_loader.h"
#include "runtime/cpu/host_cpu.h"
#include "tests/runtime/assemble.h"
#include "tests/runtime/counting_kernel.h"

using namespace loom;
namespace fs = std::filesystem;

namespace {

// The kernels of every sample graph, compiled for this CPU through a Program's offline cache
// (as an AOT module would hold them), in a stable order.
const std::vector<KernelRecord>& sample_records() {
  static const std::vector<KernelRecord> records = [] {
    fs::path dir = fs::temp_directory_path() / ("loom_elf_samples_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    for (const char* name : {"heat", "life", "julia", "nbody", "cloth", "mpm88"}) {
      for (bool debug : {false, true}) {
        ProgramOptions o;
        o.backend = Backend::Cpu;
        o.cache_dir = dir.string();
        o.debug = debug;  // bounds checks: calls to the error reporter, more constants
        Program p(o);
        p.load_file(std::string(LOOM_SOURCE_DIR) + "/assets/graphs/" + name + ".loom.json");
        p.prepare_pipelines(true);
      }
    }
    std::vector<KernelRecord> out;
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
      out.push_back(deserialize_kernel_record(bytes, entry.path().string()));
    }
    fs::remove_all(dir);
    std::sort(out.begin(), out.end(), [](const KernelRecord& a, const KernelRecord& b) {
      return std::tie(a.abi.name, a.code) < std::tie(b.abi.name, b.code);
    });
    return out;
  }();
  return records;
}

// The record with the most relocations: the richest object to corrupt.
const KernelRecord& rich_record();

// Reads an object's section headers, symbols and relocations, for tests that inspect or
// patch objects; assumes a well-formed object.
struct ObjectView {
  explicit ObjectView(const std::vector<uint8_t>& bytes) : bytes(bytes) {
    std::memcpy(&header, bytes.data(), sizeof header);
    sections.resize(header.e_shnum);
    for (size_t i = 0; i < sections.size(); ++i)
      std::memcpy(&sections[i], bytes.data() + header.e_shoff + i * sizeof(Elf64_Shdr),
                  sizeof(Elf64_Shdr));
  }
  std::string name(size_t i) const {
    const Elf64_Shdr& names = sections[header.e_shstrndx];
    return reinterpret_cast<const char*>(bytes.data() + names.sh_offset + sections[i].sh_name);
  }
  size_t find(const std::string& section) const {
    for (size_t i = 0; i < sections.size(); ++i)
      if (name(i) == section) return i;
    return 0;
  }
  size_t index_of_type(uint32_t type) const {
    for (size_t i = 0; i < sections.size(); ++i)
      if (sections[i].sh_type == type) return i;
    return 0;
  }
  // File offset of relocation `k` of every RELA section, with its type.
  std::vector<std::pair<size_t, uint32_t>> relocations() const {
    std::vector<std::pair<size_t, uint32_t>> out;
    for (const Elf64_Shdr& s : sections) {
      if (s.sh_type != SHT_RELA) continue;
      for (size_t off = s.sh_offset; off < s.sh_offset + s.sh_size; off += sizeof(Elf64_Rela)) {
        Elf64_Rela r;
        std::memcpy(&r, bytes.data() + off, sizeof r);
        out.push_back({off, static_cast<uint32_t>(ELF64_R_TYPE(r.r_info))});
      }
    }
    return out;
  }
  size_t section_header_offset(size_t i) const { return header.e_shoff + i * sizeof(Elf64_Shdr); }

  const std::vector<uint8_t>& bytes;
  Elf64_Ehdr header{};
  std::vector<Elf64_Shdr> sections;
};

const KernelRecord& rich_record() {
  static const KernelRecord* best = [] {
    const KernelRecord* b = &sample_records().front();
    for (const KernelRecord& r : sample_records())
      if (ObjectView(r.code).relocations().size() > ObjectView(b->code).relocations().size())
        b = &r;
    return b;
  }();
  return *best;
}

template <typename T>
void put(std::vector<uint8_t>& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// The loom::Error message a load throws ("" when it loads); the Error must name the kernel.
std::string load_error(cpu::CpuModule& module, const KernelABI& abi,
                       const std::vector<uint8_t>& object) {
  try {
    module.load(abi, object);
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, abi.name) << e.what();
    EXPECT_FALSE(e.message().empty());
    return e.message();
  }
  return "";
}

std::string image_error(const std::vector<uint8_t>& object,
                        const cpu::ElfLoadOptions& options = {}) {
  Place place;
  place.kernel = "asm";
  try {
    cpu::ElfImage::load(object, place, options);
  } catch (const Error& e) {
    EXPECT_EQ(e.place().kernel, "asm") << e.what();
    return e.message();
  }
  return "";
}

// "r-xp" style permissions of the mapping holding `p`, "" when unmapped.
std::string protection_of(const void* p) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  auto at = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) == 3 && at >= lo && at < hi)
      return perms;
  }
  return "";
}

// One of each relocation type the loader implements, with functions to check each result.
constexpr const char* kRelocations = R"(
    .text
    .globl call_strlen              # R_X86_64_PLT32 to an external function
    .type call_strlen,@function
call_strlen:
    jmp strlen@PLT
    .size call_strlen, .-call_strlen

    .globl call_strlen_via_got      # R_X86_64_GOTPCRELX
    .type call_strlen_via_got,@function
call_strlen_via_got:
    jmp *strlen@GOTPCREL(%rip)
    .size call_strlen_via_got, .-call_strlen_via_got

    .globl environ_via_got          # R_X86_64_REX_GOTPCRELX to external data
    .type environ_via_got,@function
environ_via_got:
    movq environ@GOTPCREL(%rip), %rax
    movq (%rax), %rax
    ret
    .size environ_via_got, .-environ_via_got

    .globl bump                     # R_X86_64_PC32 into .bss
    .type bump,@function
bump:
    incq counter(%rip)
    movq counter(%rip), %rax
    ret
    .size bump, .-bump

    .globl counter_address
    .type counter_address,@function
counter_address:
    leaq counter(%rip), %rax
    ret
    .size counter_address, .-counter_address

    .globl counter_via_gotoff       # R_X86_64_GOTPC32 and R_X86_64_GOTOFF64
    .type counter_via_gotoff,@function
counter_via_gotoff:
    leaq _GLOBAL_OFFSET_TABLE_(%rip), %rcx
    movabsq $counter@GOTOFF, %rax
    addq %rcx, %rax
    ret
    .size counter_via_gotoff, .-counter_via_gotoff

    .globl weak_plus_5              # R_X86_64_32 against a missing weak symbol
    .type weak_plus_5,@function
weak_plus_5:
    movl $missing_weak+5, %eax
    ret
    .size weak_plus_5, .-weak_plus_5

    .globl weak_minus_7             # R_X86_64_32S
    .type weak_minus_7,@function
weak_minus_7:
    movq $missing_weak-7, %rax
    ret
    .size weak_minus_7, .-weak_minus_7

    .globl common_address           # a COMMON symbol
    .type common_address,@function
common_address:
    leaq shared_buffer(%rip), %rax
    ret
    .size common_address, .-common_address

    .globl call_other               # a call into another code section
    .type call_other,@function
call_other:
    call other_section_fn
    addq $1, %rax
    ret
    .size call_other, .-call_other

    .section .text.other,"ax",@progbits
    .globl other_section_fn
    .type other_section_fn,@function
other_section_fn:
    movq $41, %rax
    ret
    .size other_section_fn, .-other_section_fn

    .section .rodata,"a",@progbits
    .p2align 3
    .globl answer
    .type answer,@object
answer:
    .quad 42
    .size answer, 8
    .globl strlen_got_word          # R_X86_64_GOTPCREL in data
    .type strlen_got_word,@object
strlen_got_word:
    .long strlen@GOTPCREL
    .size strlen_got_word, 4

    .section .rodata.str1.1,"aMS",@progbits,1
.Lfirst:
    .asciz "x must be positive"
.Lsecond:
    .asciz "second message"

    .section .data.rel.ro,"aw",@progbits
    .p2align 3
    .globl pointers
    .type pointers,@object
pointers:
    .quad strlen                    # R_X86_64_64, external
    .quad other_section_fn + 1      # R_X86_64_64, local with addend
    .quad answer - .                # R_X86_64_PC64
    .size pointers, 24
    .globl loom_assert_messages
    .type loom_assert_messages,@object
loom_assert_messages:
    .quad .Lfirst
    .quad .Lsecond
    .quad 0
    .size loom_assert_messages, 24

    .data
    .p2align 3
    .globl data_word
    .type data_word,@object
data_word:
    .quad 7
    .size data_word, 8

    .bss
    .p2align 3
counter:
    .zero 8

    .comm shared_buffer, 64, 32
    .weak missing_weak
    .globl abs_value                # SHN_ABS
    .set abs_value, 0x1234
)";

// Hand-written objects call the C library (strlen, environ), which kernels may not import.
cpu::ElfLoadOptions any_import(bool always_use_stubs = false) {
  cpu::ElfLoadOptions options;
  options.always_use_stubs = always_use_stubs;
  options.may_import = [](std::string_view) { return true; };
  return options;
}

const std::vector<uint8_t>& relocation_object() {
  static const std::vector<uint8_t> object = test::assemble_x86_64(kRelocations);
  return object;
}

template <typename F>
F function(const cpu::ElfImage& image, const char* name) {
  auto symbol = image.find(name);
  EXPECT_TRUE(symbol && symbol->code) << name;
  return symbol ? reinterpret_cast<F>(reinterpret_cast<uintptr_t>(symbol->address)) : nullptr;
}

const uint8_t* data(const cpu::ElfImage& image, const char* name) {
  auto symbol = image.find(name);
  EXPECT_TRUE(symbol && symbol->data) << name;
  return symbol ? symbol->address : nullptr;
}

template <typename T>
T read_at(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::vector<std::string> split_features(std::string_view text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) out.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

}  // namespace

TEST(ElfLoader, LoadsEveryKernelOfTheSampleGraphs) {
  const std::vector<KernelRecord>& records = sample_records();
  ASSERT_GE(records.size(), 20u);
  cpu::CpuModule module;
  std::map<std::string, int> relocations;
  for (const KernelRecord& r : records) {
    auto kernel = module.load(r.abi, r.code);
    ASSERT_EQ(kernel->tasks.size(), r.abi.tasks.size()) << r.abi.name;
    for (const cpu::LoadedTask& t : kernel->tasks) {
      EXPECT_NE(t.entry, nullptr);
      EXPECT_EQ(t.extent != nullptr, t.kind != 0);
      EXPECT_EQ(protection_of(reinterpret_cast<const void*>(t.entry)), "r-xp") << r.abi.name;
    }
    for (auto [offset, type] : ObjectView(r.code).relocations())
      ++relocations[std::to_string(type)];
  }
  std::string seen;
  for (const auto& [type, count] : relocations) seen += " " + type + "x" + std::to_string(count);
  std::printf("relocation types (number x count) in %zu sample kernels:%s\n", records.size(),
              seen.c_str());

  // Load time per kernel, loading and unloading every record.
  const int rounds = 20;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < rounds; ++i)
    for (const KernelRecord& r : records) module.load(r.abi, r.code);
  double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      (rounds * static_cast<double>(records.size()));
  std::printf("load + unload: %.1f us per kernel\n", us);
  RecordProperty("load_us_per_kernel", std::to_string(us));
}

TEST(ElfLoader, AppliesEveryRelocationTypeDirectlyAndThroughStubs) {
  const std::vector<uint8_t>& object = relocation_object();
  std::set<uint32_t> types;
  for (auto [offset, type] : ObjectView(object).relocations()) types.insert(type);
  for (uint32_t t : {R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32, R_X86_64_GOTPCREL, R_X86_64_32,
                     R_X86_64_32S, R_X86_64_PC64, R_X86_64_GOTOFF64, R_X86_64_GOTPC32,
                     R_X86_64_GOTPCRELX, R_X86_64_REX_GOTPCRELX})
    EXPECT_TRUE(types.count(t)) << "the test object lacks relocation type " << t;

  auto* strlen_address = reinterpret_cast<const uint8_t*>(dlsym(RTLD_DEFAULT, "strlen"));
  for (bool stubs : {false, true}) {
    SCOPED_TRACE(stubs ? "through stubs" : "direct");
    auto image = cpu::ElfImage::load(object, Place{}, any_import(stubs));
    EXPECT_EQ(function<size_t (*)(const char*)>(*image, "call_strlen")("hello"), 5u);
    EXPECT_EQ(function<size_t (*)(const char*)>(*image, "call_strlen_via_got")("hello, world"),
              12u);
    EXPECT_EQ(function<char** (*)()>(*image, "environ_via_got")(), environ);
    auto counter = function<int64_t* (*)()>(*image, "counter_address")();
    EXPECT_EQ(function<int64_t* (*)()>(*image, "counter_via_gotoff")(), counter);
    EXPECT_EQ(*counter, 0);
    EXPECT_EQ(function<int64_t (*)()>(*image, "bump")(), 1);
    EXPECT_EQ(function<int64_t (*)()>(*image, "bump")(), 2);
    EXPECT_EQ(function<uint32_t (*)()>(*image, "weak_plus_5")(), 5u);
    EXPECT_EQ(function<int64_t (*)()>(*image, "weak_minus_7")(), -7);
    EXPECT_EQ(function<int64_t (*)()>(*image, "call_other")(), 42);

    auto common = image->find("shared_buffer");
    ASSERT_TRUE(common && common->data);
    EXPECT_EQ(common->size, 64u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(common->address) % 32, 0u);
    EXPECT_EQ(function<const uint8_t* (*)()>(*image, "common_address")(), common->address);
    auto absolute = image->find("abs_value");
    ASSERT_TRUE(absolute);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(absolute->address), 0x1234u);
    EXPECT_FALSE(absolute->code || absolute->data);
    EXPECT_FALSE(image->find("counter"));  // local symbols are not found
    EXPECT_EQ(read_at<int64_t>(data(*image, "answer")), 42);
    EXPECT_EQ(read_at<int64_t>(data(*image, "data_word")), 7);

    const uint8_t* pointers = data(*image, "pointers");
    EXPECT_EQ(read_at<const uint8_t*>(pointers), strlen_address);
    EXPECT_EQ(read_at<const uint8_t*>(pointers + 8), image->find("other_section_fn")->address + 1);
    EXPECT_EQ(pointers + 16 + read_at<int64_t>(pointers + 16), data(*image, "answer"));
    // GOTPCREL in data: the word is the distance to strlen's GOT slot.
    const uint8_t* word = data(*image, "strlen_got_word");
    EXPECT_EQ(read_at<const uint8_t*>(word + read_at<int32_t>(word)), strlen_address);
  }
}

TEST(ElfLoader, ProtectsCodeConstantsAndData) {
  auto image = cpu::ElfImage::load(relocation_object(), Place{}, any_import());
  EXPECT_EQ(protection_of(image->find("call_strlen")->address), "r-xp");
  EXPECT_EQ(protection_of(image->find("other_section_fn")->address), "r-xp");
  EXPECT_EQ(protection_of(image->find("answer")->address), "r--p");
  EXPECT_EQ(protection_of(image->find("pointers")->address),
            "r--p");  // .data.rel.ro after relocation
  EXPECT_EQ(protection_of(image->find("data_word")->address), "rw-p");
  EXPECT_EQ(protection_of(image->find("shared_buffer")->address), "rw-p");
  const uint8_t* word = image->find("strlen_got_word")->address;
  EXPECT_EQ(protection_of(word + read_at<int32_t>(word)), "r--p");  // the GOT
}

TEST(CpuModule, ReadsAssertionMessagesAndUnmapsWithTheLastKernel) {
  cpu::CpuModule module(any_import());
  KernelABI abi;
  abi.name = "asm";
  auto first = module.load(abi, relocation_object());
  EXPECT_EQ(first->assert_messages,
            (std::vector<std::string>{"x must be positive", "second message"}));
  auto image = std::static_pointer_cast<cpu::ElfImage>(first->code);
  const void* code = image->find("call_strlen")->address;
  image.reset();
  auto second = std::make_shared<cpu::LoadedCpuKernel>(*first);  // shares the code
  EXPECT_EQ(protection_of(code), "r-xp");
  first.reset();
  EXPECT_EQ(protection_of(code), "r-xp");
  second.reset();
  EXPECT_EQ(protection_of(code), "");
}

TEST(ElfLoader, NamesAMissingExternalSymbol) {
  auto object = test::assemble_x86_64(R"(
    .text
    .globl f
f:
    jmp loom_no_such_function_anywhere@PLT
  )");
  std::string message = image_error(object, any_import());
  EXPECT_NE(message.find("'loom_no_such_function_anywhere'"), std::string::npos) << message;
  EXPECT_NE(message.find("does not define"), std::string::npos) << message;
}

TEST(ElfLoader, RefusesAValueThatOverflowsItsField) {
  auto object = test::assemble_x86_64(R"(
    .text
    .globl f
f:
    movl $counter, %eax
    ret
    .bss
counter:
    .zero 8
  )");
  std::string message = image_error(object);
  EXPECT_NE(message.find("R_X86_64_32 "), std::string::npos) << message;
  EXPECT_NE(message.find("does not fit in 32 bits"), std::string::npos) << message;
}

TEST(ElfLoader, RefusesUnsupportedRelocationsAndSections) {
  std::string message = image_error(test::assemble_x86_64(R"(
    .text
    .globl f
f:
    movq some_tls@GOTTPOFF(%rip), %rax
    ret
  )"));
  EXPECT_NE(message.find("relocation type 22 at offset 0x3 in section"), std::string::npos)
      << message;
  EXPECT_NE(message.find("(.rela.text)"), std::string::npos) << message;

  message = image_error(test::assemble_x86_64(R"(
    .section .tbss,"awT",@nobits
    .globl tls
tls:
    .zero 4
  )"));
  EXPECT_NE(message.find("thread-local storage"), std::string::npos) << message;

  message = image_error(test::assemble_x86_64(R"(
    .section .init_array,"aw",@init_array
    .quad 0
  )"));
  EXPECT_NE(message.find("static constructors"), std::string::npos) << message;

  // A kernel's own relocation patched to a type the loader does not implement.
  const KernelRecord& r = rich_record();
  std::vector<uint8_t> object = r.code;
  ObjectView view(object);
  auto relocations = view.relocations();
  ASSERT_FALSE(relocations.empty());
  Elf64_Rela rela;
  std::memcpy(&rela, object.data() + relocations[0].first, sizeof rela);
  put<uint64_t>(object, relocations[0].first + offsetof(Elf64_Rela, r_info),
                ELF64_R_INFO(ELF64_R_SYM(rela.r_info), 37));
  cpu::CpuModule module;
  message = load_error(module, r.abi, object);
  EXPECT_NE(message.find("relocation type 37 at offset"), std::string::npos) << message;
  EXPECT_NE(message.find("(.rela.text)"), std::string::npos) << message;
}

TEST(ElfLoader, RejectsCorruptHeadersWithMessagesSayingWhatIsWrong) {
  const KernelRecord& r = rich_record();
  cpu::CpuModule module;
  ASSERT_EQ(load_error(module, r.abi, r.code), "");
  ObjectView view(r.code);
  const size_t text = view.find(".text"), symtab = view.index_of_type(SHT_SYMTAB),
               rela = view.index_of_type(SHT_RELA);
  ASSERT_NE(text, 0u);
  ASSERT_NE(symtab, 0u);
  ASSERT_NE(rela, 0u);
  auto corrupted = [&](const std::function<void(std::vector<uint8_t>&)>& change) {
    std::vector<uint8_t> object = r.code;
    change(object);
    return load_error(module, r.abi, object);
  };
  auto expect = [](const std::string& message, const std::string& part) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "'" << message << "' lacks '" << part << "'";
  };
  expect(corrupted([](auto& o) { o[0] = 0; }), "is not an ELF object");
  expect(corrupted([](auto& o) { o[EI_CLASS] = ELFCLASS32; }),
         "is not a 64-bit ELF object (class 1)");
  expect(corrupted([](auto& o) { o[EI_DATA] = ELFDATA2MSB; }), "is not little-endian");
  expect(corrupted([](auto& o) { put<uint16_t>(o, offsetof(Elf64_Ehdr, e_type), ET_DYN); }),
         "is not a relocatable object (ELF type 3)");
  expect(corrupted([](auto& o) { put<uint16_t>(o, offsetof(Elf64_Ehdr, e_machine), EM_AARCH64); }),
         "is not for x86-64 (ELF machine 183)");
  expect(
      corrupted([](auto& o) { put<uint64_t>(o, offsetof(Elf64_Ehdr, e_shoff), o.size() - 100); }),
      "the section header table extends past the end");
  expect(corrupted([](auto& o) { put<uint16_t>(o, offsetof(Elf64_Ehdr, e_shentsize), 40); }),
         "section headers are 40 bytes");
  expect(corrupted([](auto& o) { put<uint16_t>(o, offsetof(Elf64_Ehdr, e_shstrndx), 999); }),
         "the section name table is section 999, past the last");
  size_t text_header = view.section_header_offset(text);
  expect(corrupted([&](auto& o) {
           put<uint64_t>(o, text_header + offsetof(Elf64_Shdr, sh_size), 1u << 20);
         }),
         "object code is corrupt: section " + std::to_string(text) +
             " (.text) extends past the end (offset " +
             std::to_string(view.sections[text].sh_offset) + " + 1048576 > " +
             std::to_string(r.code.size()) + " bytes)");
  expect(corrupted([&](auto& o) {
           put<uint64_t>(o, text_header + offsetof(Elf64_Shdr, sh_addralign), 3);
         }),
         "(.text) has alignment 3, not a power of two");
  expect(corrupted([&](auto& o) {
           put<uint64_t>(o, text_header + offsetof(Elf64_Shdr, sh_addralign), 1u << 16);
         }),
         "aligned to 65536 bytes, more than a page");
  expect(corrupted([&](auto& o) {
           put<uint32_t>(o, text_header + offsetof(Elf64_Shdr, sh_name), 1u << 30);
         }),
         "lies outside its string table");
  size_t symtab_header = view.section_header_offset(symtab);
  expect(corrupted(
             [&](auto& o) { put<uint32_t>(o, symtab_header + offsetof(Elf64_Shdr, sh_link), 0); }),
         "is not a string table");
  expect(corrupted([&](auto& o) {
           put<uint64_t>(o, symtab_header + offsetof(Elf64_Shdr, sh_entsize), 16);
         }),
         "has entries of 16 bytes");
  const size_t last_symbol =
      view.sections[symtab].sh_offset + view.sections[symtab].sh_size - sizeof(Elf64_Sym);
  expect(corrupted(
             [&](auto& o) { put<uint16_t>(o, last_symbol + offsetof(Elf64_Sym, st_shndx), 200); }),
         "is in section 200, past the last");
  expect(corrupted([&](auto& o) {
           put<uint64_t>(o, last_symbol + offsetof(Elf64_Sym, st_value), 1u << 24);
         }),
         "lies outside section");
  expect(corrupted([&](auto& o) {
           put<uint32_t>(o, last_symbol + offsetof(Elf64_Sym, st_name), 1u << 30);
         }),
         "lies outside its string table");
  size_t rela_header = view.section_header_offset(rela);
  expect(corrupted(
             [&](auto& o) { put<uint32_t>(o, rela_header + offsetof(Elf64_Shdr, sh_info), 99); }),
         "relocates section 99, which does not exist");
  expect(
      corrupted([&](auto& o) { put<uint32_t>(o, rela_header + offsetof(Elf64_Shdr, sh_link), 0); }),
      "as its symbol table");
  const size_t first_rela = view.sections[rela].sh_offset;
  expect(corrupted([&](auto& o) {
           put<uint64_t>(o, first_rela + offsetof(Elf64_Rela, r_info),
                         ELF64_R_INFO(99999, R_X86_64_PC32));
         }),
         "refers to symbol 99999, past the last");
  expect(corrupted([&](auto& o) {
           put<uint64_t>(o, first_rela + offsetof(Elf64_Rela, r_offset), 1u << 20);
         }),
         "writes 4 bytes at offset 1048576, past the end of section " + std::to_string(text) +
             " (.text)");
}

TEST(ElfLoader, RejectsEveryTruncation) {
  cpu::CpuModule module;
  for (const KernelRecord* r : {&rich_record(), &sample_records().front()}) {
    for (size_t length = 0; length < r->code.size(); ++length) {
      std::vector<uint8_t> object(r->code.begin(),
                                  r->code.begin() + static_cast<std::ptrdiff_t>(length));
      std::string message = load_error(module, r->abi, object);
      ASSERT_FALSE(message.empty()) << "truncated to " << length << " bytes, it still loads";
      ASSERT_EQ(message.find("object code "), 0u) << message;
    }
  }
  // The empty object says so.
  EXPECT_NE(load_error(module, rich_record().abi, {}).find("truncated to 0 bytes"),
            std::string::npos);
}

// Every byte of the headers and tables changed in several ways: each load succeeds or is a
// loom::Error naming the kernel.
TEST(ElfLoader, SurvivesEveryChangedHeaderByte) {
  cpu::CpuModule module;
  const KernelRecord& r = rich_record();
  ObjectView view(r.code);
  std::vector<std::pair<size_t, size_t>> ranges = {
      {0, sizeof(Elf64_Ehdr)}, {view.header.e_shoff, view.sections.size() * sizeof(Elf64_Shdr)}};
  for (const Elf64_Shdr& s : view.sections)
    if (s.sh_type == SHT_SYMTAB || s.sh_type == SHT_RELA)
      ranges.push_back({s.sh_offset, s.sh_size});
  int refused = 0, loaded = 0;
  for (auto [begin, size] : ranges) {
    for (size_t at = begin; at < begin + size; ++at) {
      for (int change = 0; change < 5; ++change) {
        std::vector<uint8_t> object = r.code;
        uint8_t& b = object[at];
        b = change == 0   ? b ^ 0xff
            : change == 1 ? b ^ 0x01
            : change == 2 ? b ^ 0x80
            : change == 3 ? 0
                          : 0xff;
        if (object[at] == r.code[at]) continue;
        (load_error(module, r.abi, object).empty() ? loaded : refused)++;
      }
    }
  }
  std::printf("changed header bytes: %d refused, %d loaded\n", refused, loaded);
  EXPECT_GT(refused, 1000);
}

TEST(ElfLoader, SurvivesRandomCorruption) {
  cpu::CpuModule module(any_import());
  std::mt19937_64 random(12345);
  KernelABI asm_abi;
  asm_abi.name = "asm";
  std::vector<std::pair<const KernelABI*, const std::vector<uint8_t>*>> originals = {
      {&rich_record().abi, &rich_record().code}, {&asm_abi, &relocation_object()}};
  int refused = 0, loaded = 0;
  for (int round = 0; round < 6000; ++round) {
    auto [abi, original] = originals[static_cast<size_t>(round) % originals.size()];
    std::vector<uint8_t> object = *original;
    int changes = 1 + static_cast<int>(random() % 4);
    for (int c = 0; c < changes; ++c) {
      size_t at = random() % object.size();
      object[at] = random() % 3 == 0 ? static_cast<uint8_t>(random())
                                     : object[at] ^ static_cast<uint8_t>(1u << (random() % 8));
    }
    if (random() % 8 == 0) object.resize(random() % object.size());
    (load_error(module, *abi, object).empty() ? loaded : refused)++;
  }
  std::printf("random corruption: %d refused, %d loaded\n", refused, loaded);
  EXPECT_GT(refused, 500);
}

TEST(CpuModule, CodegenRecordsTheFeaturesItCompiledFor) {
  // Host code: every feature is one the runtime knows and this CPU has.
  const KernelRecord& r = sample_records().front();
  auto image = cpu::ElfImage::load(r.code, Place{});
  auto symbol = image->find("loom_cpu_features");
  ASSERT_TRUE(symbol && symbol->data);
  std::vector<std::string> host_code = split_features(*image->string_at(symbol->address));
  ASSERT_FALSE(host_code.empty());
  for (const std::string& f : host_code) EXPECT_EQ(f[0], '+') << f;
  EXPECT_TRUE(std::count(host_code.begin(), host_code.end(), "+sse2"));
  EXPECT_TRUE(cpu::missing_cpu_features(host_code).empty());

  // A baseline CPU: its features only, no AVX.
  auto k = test::counting_kernel();
  codegen::CpuCodegenOptions portable;
  portable.cpu = "x86-64-v2";
  auto compiled = codegen::compile_kernel_to_object(*k, portable);
  image = cpu::ElfImage::load(compiled.object, Place{});
  symbol = image->find("loom_cpu_features");
  ASSERT_TRUE(symbol && symbol->data);
  std::vector<std::string> v2 = split_features(*image->string_at(symbol->address));
  std::set<std::string> allowed = {"+64bit", "+cmov", "+crc32",  "+cx16",   "+cx8",
                                   "+fxsr",  "+mmx",  "+popcnt", "+sahf",   "+sse",
                                   "+sse2",  "+sse3", "+sse4.1", "+sse4.2", "+ssse3"};
  for (const std::string& f : v2) EXPECT_TRUE(allowed.count(f)) << f;
  EXPECT_TRUE(std::count(v2.begin(), v2.end(), "+sse4.2"));
  cpu::CpuModule module;
  EXPECT_EQ(load_error(module, compiled.abi, compiled.object), "");
}

TEST(CpuModule, RefusesCodeForFeaturesThisCpuLacks) {
  cpu::CpuModule module;
  KernelABI abi;
  abi.name = "needs_features";
  std::string message = load_error(module, abi, test::assemble_x86_64(R"(
    .section .rodata,"a",@progbits
    .globl loom_cpu_features
loom_cpu_features:
    .asciz "+sse2,+loom-imaginary,-avx,+zz-unknown"
  )"));
  EXPECT_NE(
      message.find(
          "the kernel was compiled for CPU features this CPU lacks: loom-imaginary, zz-unknown"),
      std::string::npos)
      << message;

  // A compiled kernel whose record is changed to name a feature nobody has.
  const KernelRecord& r = sample_records().front();
  std::vector<uint8_t> object = r.code;
  const std::string first = "+64bit,";
  auto at = std::search(object.begin(), object.end(), first.begin(), first.end());
  ASSERT_NE(at, object.end());
  std::memcpy(&*at, "+zz999,", first.size());
  message = load_error(module, r.abi, object);
  EXPECT_NE(message.find("lacks: zz999 "), std::string::npos) << message;
}

// A relocation whose addend leads outside the image: loaded, the code would read or jump to
// whatever lies there. Each is refused, naming the relocation and its section.
TEST(ElfLoader, RefusesARelocationThatPointsOutsideTheImage) {
  auto expect_outside = [](const std::string& message, const std::string& section) {
    EXPECT_NE(message.find("object code is corrupt: relocation 0 in section"), std::string::npos)
        << message;
    EXPECT_NE(message.find("(" + section + ")"), std::string::npos) << message;
    EXPECT_NE(message.find("outside the kernel's image"), std::string::npos) << message;
  };
  // 256 MiB past a local data word (PC32 against the .data section symbol).
  expect_outside(image_error(test::assemble_x86_64(R"(
    .text
    .globl f
f:
    movq table+0x10000000(%rip), %rax
    ret
    .data
table:
    .quad 1
  )")),
                 ".rela.text");
  // Before the image (R_X86_64_64 in data).
  expect_outside(image_error(test::assemble_x86_64(R"(
    .data
    .globl p
p:
    .quad p - 0x40000000
  )")),
                 ".rela.data");
  // Through a GOT slot.
  expect_outside(image_error(test::assemble_x86_64(R"(
    .text
    .globl f
f:
    movq sinf@GOTPCREL+0x100000(%rip), %rax
    ret
  )")),
                 ".rela.text");
  // An external function with an addend: a jump into the middle of some other code.
  std::string message = image_error(test::assemble_x86_64(R"(
    .text
    .globl f
f:
    jmp sinf+0x1000
  )"));
  EXPECT_NE(message.find("against 'sinf', has addend 4092"), std::string::npos) << message;

  // A kernel's own relocation with its addend moved 1 GiB away.
  const KernelRecord& r = rich_record();
  std::vector<uint8_t> object = r.code;
  auto relocations = ObjectView(object).relocations();
  ASSERT_FALSE(relocations.empty());
  const size_t addend = relocations[0].first + offsetof(Elf64_Rela, r_addend);
  Elf64_Rela rela;
  std::memcpy(&rela, object.data() + relocations[0].first, sizeof rela);
  put<int64_t>(object, addend, rela.r_addend + (int64_t{1} << 30));
  cpu::CpuModule module;
  message = load_error(module, r.abi, object);
  EXPECT_FALSE(message.empty());
  EXPECT_NE(message.find("relocation 0 in section"), std::string::npos) << message;
}

// Kernels import the math library, its vector forms and memcpy/memmove/memset, nothing else
// of the process: a module cannot call `system`.
TEST(ElfLoader, ResolvesOnlyTheSymbolsKernelsMayImport) {
  for (const char* allowed :
       {"sinf", "cos", "powf", "fmodf", "atan2", "expf", "tanf", "fmaf", "memcpy", "memmove",
        "memset", "_ZGVdN8v_sinf", "_ZGVbN2vv_pow", "_ZGVeN16v_expf"})
    EXPECT_TRUE(cpu::kernel_may_import(allowed)) << allowed;
  for (const char* refused : {"system", "execve", "dlopen", "dlsym", "strlen", "environ",
                              "_ZGVdN8v_system", "_ZGV", "sinfx", "", "mmap", "mprotect"})
    EXPECT_FALSE(cpu::kernel_may_import(refused)) << refused;

  cpu::CpuModule module;
  KernelABI abi;
  abi.name = "shell";
  std::string message = load_error(module, abi, test::assemble_x86_64(R"(
    .text
    .globl f
f:
    jmp system@PLT
  )"));
  EXPECT_NE(message.find("'system'"), std::string::npos) << message;
  EXPECT_NE(message.find("may not call"), std::string::npos) << message;
  // A weak reference is refused as well: resolved, it would be the process's `system`.
  message = load_error(module, abi, test::assemble_x86_64(R"(
    .text
    .weak system
    .globl f
f:
    movq system@GOTPCREL(%rip), %rax
    ret
  )"));
  EXPECT_NE(message.find("'system'"), std::string::npos) << message;
  // The math library is there.
  EXPECT_EQ(load_error(module, abi, test::assemble_x86_64(R"(
    .text
    .globl f
f:
    call sinf@PLT
    call _ZGVdN8v_sinf@PLT
    jmp memcpy@PLT
  )")),
            "");
}
