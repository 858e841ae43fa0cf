#include "runtime/cpu/elf_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "runtime/cpu/gdb_jit.h"
#include "runtime/cpu/unwind_frames.h"

namespace loom::cpu {

namespace {

constexpr uint64_t kPage = 4096;
// More than any kernel needs, and small enough that everything in the image (code, GOT, call
// stubs, data) is within reach of a 32-bit PC-relative field.
constexpr uint64_t kMaxImageBytes = uint64_t{1} << 30;
constexpr uint64_t kStubBytes = 8;
constexpr uint64_t kPopulateBytes = uint64_t{256} * 1024;  // jmp *disp32(%rip), two int3
// How far an address a relocation computes may lie from what it refers to: a PC-relative
// addend includes the distance from the field to the end of its instruction (-4, -5, -8 for
// an immediate after it), and x86 instructions are at most 15 bytes.
constexpr int64_t kAddendSlack = 16;
// The zero-length entry that ends an .eh_frame for libgcc; objects leave it to the linker.
constexpr uint64_t kEhFrameTerminatorBytes = 4;

// Where a loaded section goes. The GOT is a constant (written before protection), the call
// stubs are code.
enum Region : int { kCode, kConstants, kData, kRegions, kNotLoaded = kRegions };

bool fits(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}
bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
// `a` a power of two at most kPage, `v` at most kMaxImageBytes.
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }
bool fits_signed32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

template <typename T>
T read(std::span<const uint8_t> bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Names taken from the object, safe to print whatever bytes they hold.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 200)) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  if (s.size() > 200) out += "...";
  return out;
}

// The relocation types LLVM emits for PIC small-code-model x86-64 objects, plus the GOT-base
// ones of the other code models. `width` is the bytes written; 0 for unsupported types.
struct RelocationType {
  const char* name = nullptr;
  uint32_t width = 0;
  bool got = false;  // needs a GOT slot for its symbol
};

RelocationType relocation_type(uint32_t type) {
  switch (type) {
    case R_X86_64_NONE: return {"R_X86_64_NONE", 0};
    case R_X86_64_64: return {"R_X86_64_64", 8};
    case R_X86_64_PC32: return {"R_X86_64_PC32", 4};
    case R_X86_64_PLT32: return {"R_X86_64_PLT32", 4};
    case R_X86_64_GOTPCREL: return {"R_X86_64_GOTPCREL", 4, true};
    case R_X86_64_32: return {"R_X86_64_32", 4};
    case R_X86_64_32S: return {"R_X86_64_32S", 4};
    case R_X86_64_PC64: return {"R_X86_64_PC64", 8};
    case R_X86_64_GOTOFF64: return {"R_X86_64_GOTOFF64", 8};
    case R_X86_64_GOTPC32: return {"R_X86_64_GOTPC32", 4};
    case R_X86_64_GOTPCRELX: return {"R_X86_64_GOTPCRELX", 4, true};
    case R_X86_64_REX_GOTPCRELX: return {"R_X86_64_REX_GOTPCRELX", 4, true};
    default: return {};
  }
}

// The libm functions LLVM's kernels call, by their double names (the float form adds 'f'):
// the ones compiler/codegen_llvm calls itself, those its intrinsics lower to, and those LLVM's
// library-call simplification may substitute (exp2, exp10, ldexp, sincos, ...).
constexpr std::string_view kMathFunctions[] = {
    "acos",      "acosh", "asin",      "asinh", "atan",  "atan2", "atanh",  "cbrt",   "ceil",
    "copysign",  "cos",   "cosh",      "exp",   "exp10", "exp2",  "expm1",  "fabs",   "floor",
    "fma",       "fmax",  "fmin",      "fmod",  "frexp", "hypot", "ldexp",  "lgamma", "llrint",
    "llround",   "log",   "log10",     "log1p", "log2",  "logb",  "lrint",  "lround", "modf",
    "nearbyint", "pow",   "remainder", "rint",  "round", "sin",   "sincos", "sinh",   "sqrt",
    "tan",       "tanh",  "tgamma",    "trunc"};

// The compiler-rt / libgcc helpers LLVM lowers some operations to on x86-64.
constexpr std::string_view kCompilerHelpers[] = {"__powisf2", "__powidf2", "__divti3", "__udivti3",
                                                 "__modti3",  "__umodti3", "__muloti4"};

constexpr std::string_view kMemoryFunctions[] = {"memcpy", "memmove", "memset"};

bool is_math_function(std::string_view name) {
  std::string_view double_name = name.ends_with('f') ? name.substr(0, name.size() - 1) : name;
  return std::any_of(std::begin(kMathFunctions), std::end(kMathFunctions),
                     [&](std::string_view f) { return name == f || double_name == f; });
}

// libmvec's vector forms: _ZGV <isa> <mask> <lanes> <parameters> _ <libm function>, e.g.
// _ZGVdN8v_sinf (AVX2, unmasked, 8 lanes, one vector parameter).
bool is_vector_math_function(std::string_view name) {
  if (!name.starts_with("_ZGV")) return false;
  size_t underscore = name.find('_', 4);
  return underscore != std::string_view::npos && underscore > 4 &&
         is_math_function(name.substr(underscore + 1));
}

}  // namespace

bool kernel_may_import(std::string_view name) {
  auto listed = [&](const auto& list) {
    return std::find(std::begin(list), std::end(list), name) != std::end(list);
  };
  return is_math_function(name) || is_vector_math_function(name) || listed(kMemoryFunctions) ||
         listed(kCompilerHelpers);
}

// Reads, lays out, maps and relocates one object; every check happens before the value it
// checks is used, and the mapping is owned by `image_` from the moment it exists.
class ElfLinker {
 public:
  ElfLinker(std::span<const uint8_t> bytes, const Place& place, const ElfLoadOptions& options)
      : bytes_(bytes), place_(place), options_(options) {}

  std::unique_ptr<ElfImage> link() {
    read_header();
    read_sections();
    read_symbols();
    plan_relocations();
    lay_out();
    map_and_copy();
    fill_got_and_stubs();
    apply_relocations();
    check_unwind_table();
    protect();
    list_symbols();
    register_with_tools();
    return std::move(image_);
  }

 private:
  struct Section {
    Elf64_Shdr h{};
    std::string_view name;
    Region region = kNotLoaded;
    uint64_t offset = 0;  // in the image, when loaded
  };
  struct SymbolState {
    int32_t got = -1;   // GOT slot
    int32_t stub = -1;  // call stub (externals called with PLT32)
    uint64_t common_offset = 0;
    bool resolved = false;
    uint64_t address = 0;
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(place_, "object code " + what);
  }
  [[noreturn]] void corrupt(const std::string& what) const { fail("is corrupt: " + what); }
  [[noreturn]] void unsupported(const std::string& what) const {
    fail("uses what the CPU loader does not support: " + what);
  }

  std::string section_label(uint64_t index) const {
    std::string s = "section " + std::to_string(index);
    if (index < sections_.size() && !sections_[index].name.empty())
      s += " (" + printable(sections_[index].name) + ")";
    return s;
  }
  std::string symbol_label(uint64_t index) const {
    if (index < names_.size() && !names_[index].empty())
      return "'" + printable(names_[index]) + "'";
    if (index < symbols_.size() && ELF64_ST_TYPE(symbols_[index].st_info) == STT_SECTION &&
        symbols_[index].st_shndx < sections_.size())
      return "the start of " + section_label(symbols_[index].st_shndx);
    return "symbol " + std::to_string(index);
  }

  // The NUL-terminated string at `offset` in string table `table`.
  std::string_view string_in(uint64_t table, uint64_t offset, const std::string& whose) const {
    const Elf64_Shdr& t = sections_[table].h;  // in bounds: checked in read_sections
    if (t.sh_type == SHT_NOBITS || offset >= t.sh_size)
      corrupt("the name of " + whose + " (offset " + std::to_string(offset) +
              ") lies outside its string table, " + section_label(table) + " of " +
              std::to_string(t.sh_size) + " bytes");
    const auto* begin = reinterpret_cast<const char*>(bytes_.data() + t.sh_offset);
    const void* end = std::memchr(begin + offset, 0, t.sh_size - offset);
    if (!end)
      corrupt("the name of " + whose + " runs past the end of its string table, " +
              section_label(table));
    return std::string_view(begin + offset, static_cast<const char*>(end) - (begin + offset));
  }

  void read_header() {
    const uint64_t size = bytes_.size();
    if (size >= SELFMAG && std::memcmp(bytes_.data(), ELFMAG, SELFMAG) != 0)
      fail("is not an ELF object (no ELF magic)");
    if (size < sizeof(Elf64_Ehdr))
      corrupt("truncated to " + std::to_string(size) +
              " bytes, shorter than the 64-byte ELF header");
    header_ = read<Elf64_Ehdr>(bytes_, 0);
    const unsigned char* id = header_.e_ident;
    if (id[EI_CLASS] != ELFCLASS64)
      fail("is not a 64-bit ELF object (class " + std::to_string(id[EI_CLASS]) + ")");
    if (id[EI_DATA] != ELFDATA2LSB)
      fail("is not little-endian (data encoding " + std::to_string(id[EI_DATA]) + ")");
    if (id[EI_VERSION] != EV_CURRENT)
      corrupt("unknown ELF version " + std::to_string(id[EI_VERSION]));
    if (header_.e_type != ET_REL)
      fail("is not a relocatable object (ELF type " + std::to_string(header_.e_type) + ")");
    if (header_.e_machine != EM_X86_64)
      fail("is not for x86-64 (ELF machine " + std::to_string(header_.e_machine) + ")");
    if (header_.e_shoff == 0) corrupt("there is no section header table");
    if (header_.e_shnum == 0) unsupported("extended section numbering (65280 sections or more)");
    if (header_.e_shentsize != sizeof(Elf64_Shdr))
      corrupt("section headers are " + std::to_string(header_.e_shentsize) + " bytes, not 64");
    uint64_t table = uint64_t{header_.e_shnum} * sizeof(Elf64_Shdr);
    if (!fits(header_.e_shoff, table, size))
      corrupt("the section header table extends past the end (offset " +
              std::to_string(header_.e_shoff) + " + " + std::to_string(header_.e_shnum) +
              " x 64 > " + std::to_string(size) + " bytes)");
    if (header_.e_shstrndx == SHN_XINDEX) unsupported("extended section numbering");
    if (header_.e_shstrndx >= header_.e_shnum)
      corrupt("the section name table is section " + std::to_string(header_.e_shstrndx) +
              ", past the last of " + std::to_string(header_.e_shnum));
  }

  void read_sections() {
    const uint64_t count = header_.e_shnum;
    sections_.resize(count);
    for (uint64_t i = 0; i < count; ++i)
      sections_[i].h = read<Elf64_Shdr>(bytes_, header_.e_shoff + i * sizeof(Elf64_Shdr));
    // The name table first, so that messages about the other sections can name them.
    if (uint64_t names = header_.e_shstrndx; names != SHN_UNDEF) {
      check_bounds(names);
      if (sections_[names].h.sh_type != SHT_STRTAB)
        corrupt("the section name table, " + section_label(names) + ", is not a string table");
      for (uint64_t i = 1; i < count; ++i)
        sections_[i].name = string_in(names, sections_[i].h.sh_name, section_label(i));
    }
    for (uint64_t i = 1; i < count; ++i) check_bounds(i);
    for (uint64_t i = 1; i < count; ++i) classify(i);
  }

  void check_bounds(uint64_t i) const {
    const Elf64_Shdr& h = sections_[i].h;
    if (h.sh_type != SHT_NOBITS && h.sh_type != SHT_NULL &&
        !fits(h.sh_offset, h.sh_size, bytes_.size()))
      corrupt(section_label(i) + " extends past the end (offset " + std::to_string(h.sh_offset) +
              " + " + std::to_string(h.sh_size) + " > " + std::to_string(bytes_.size()) +
              " bytes)");
    if (h.sh_addralign > 1 && !power_of_two(h.sh_addralign))
      corrupt(section_label(i) + " has alignment " + std::to_string(h.sh_addralign) +
              ", not a power of two");
  }

  void classify(uint64_t i) {
    Section& s = sections_[i];
    const Elf64_Shdr& h = s.h;
    if (h.sh_type == SHT_SYMTAB) {
      if (symtab_ != 0)
        corrupt("two symbol tables, " + section_label(symtab_) + " and " + section_label(i));
      symtab_ = i;
      return;
    }
    if (h.sh_type == SHT_SYMTAB_SHNDX)
      unsupported("extended symbol section indices (" + section_label(i) + ")");
    if (!(h.sh_flags & SHF_ALLOC)) return;  // debug info, notes, string tables, relocations
    if (h.sh_flags & SHF_TLS) unsupported("thread-local storage (" + section_label(i) + ")");
    if (h.sh_type == SHT_NOTE) return;
    // The unwind table is loaded with the constants (relocations write it, then it is only
    // read) and registered once checked, for debuggers, profilers and backtrace().
    bool unwind_table = h.sh_type == SHT_X86_64_UNWIND || s.name == ".eh_frame";
    if (unwind_table && eh_frame_ != 0)
      unsupported("two unwind tables, " + section_label(eh_frame_) + " and " + section_label(i));
    if (unwind_table && h.sh_type == SHT_NOBITS)
      corrupt("the unwind table, " + section_label(i) + ", has no contents");
    if (unwind_table) eh_frame_ = i;
    if (h.sh_type == SHT_INIT_ARRAY || h.sh_type == SHT_FINI_ARRAY ||
        h.sh_type == SHT_PREINIT_ARRAY)
      unsupported("static constructors or destructors (" + section_label(i) + ")");
    if (h.sh_type != SHT_PROGBITS && h.sh_type != SHT_NOBITS && !unwind_table)
      unsupported("loaded " + section_label(i) + " of type " + hex(h.sh_type));
    if ((h.sh_flags & SHF_EXECINSTR) && (h.sh_flags & SHF_WRITE))
      unsupported("writable code (" + section_label(i) + ")");
    if (h.sh_addralign > kPage)
      unsupported(section_label(i) + " aligned to " + std::to_string(h.sh_addralign) +
                  " bytes, more than a page");
    if (h.sh_size > kMaxImageBytes)
      unsupported(section_label(i) + " of " + std::to_string(h.sh_size) +
                  " bytes (a kernel's object may need 1 GiB)");
    if (unwind_table) {
      s.region = kConstants;
    } else if (h.sh_flags & SHF_EXECINSTR) {
      s.region = kCode;
    } else if (!(h.sh_flags & SHF_WRITE) || s.name.starts_with(".data.rel.ro")) {
      s.region = kConstants;  // .data.rel.ro is written by relocations only, then read-only
    } else {
      s.region = kData;
    }
  }

  void read_symbols() {
    if (symtab_ == 0) corrupt("there is no symbol table");
    const Elf64_Shdr& h = sections_[symtab_].h;
    if (h.sh_entsize != sizeof(Elf64_Sym) || h.sh_size % sizeof(Elf64_Sym) != 0)
      corrupt("the symbol table, " + section_label(symtab_) + ", has entries of " +
              std::to_string(h.sh_entsize) + " bytes in " + std::to_string(h.sh_size) +
              " (expected 24)");
    if (h.sh_link == 0 || h.sh_link >= sections_.size() ||
        sections_[h.sh_link].h.sh_type != SHT_STRTAB)
      corrupt("the symbol table's string table, section " + std::to_string(h.sh_link) +
              ", is not a string table");
    const uint64_t count = h.sh_size / sizeof(Elf64_Sym);
    symbols_.resize(count);
    names_.resize(count);
    state_.assign(count, SymbolState{});
    for (uint64_t i = 0; i < count; ++i) {
      Elf64_Sym& sym = symbols_[i];
      sym = read<Elf64_Sym>(bytes_, h.sh_offset + i * sizeof(Elf64_Sym));
      names_[i] = string_in(h.sh_link, sym.st_name, "symbol " + std::to_string(i));
      uint16_t shndx = sym.st_shndx;
      if (shndx == SHN_UNDEF || shndx == SHN_ABS) continue;
      if (shndx == SHN_COMMON) {
        if (!power_of_two(sym.st_value) || sym.st_value > kPage)
          unsupported("common symbol " + symbol_label(i) + " aligned to " +
                      std::to_string(sym.st_value) + " bytes");
        if (sym.st_size > kMaxImageBytes)
          unsupported("common symbol " + symbol_label(i) + " of " + std::to_string(sym.st_size) +
                      " bytes");
        continue;
      }
      if (shndx == SHN_XINDEX)
        unsupported("extended symbol section indices (" + symbol_label(i) + ")");
      if (shndx >= SHN_LORESERVE)
        corrupt("symbol " + symbol_label(i) + " has the reserved section index " + hex(shndx));
      if (shndx >= sections_.size())
        corrupt("symbol " + symbol_label(i) + " is in section " + std::to_string(shndx) +
                ", past the last of " + std::to_string(sections_.size()));
      const Elf64_Shdr& in = sections_[shndx].h;
      if (!fits(sym.st_value, sym.st_size, in.sh_size))
        corrupt("symbol " + symbol_label(i) + " (offset " + std::to_string(sym.st_value) + " + " +
                std::to_string(sym.st_size) + " bytes) lies outside " + section_label(shndx) +
                " of " + std::to_string(in.sh_size) + " bytes");
    }
  }

  // Validates every relocation that applies to a loaded section and gives GOT slots and call
  // stubs to the symbols that need them, before anything is mapped.
  void plan_relocations() {
    for (uint64_t r = 1; r < sections_.size(); ++r) {
      const Elf64_Shdr& h = sections_[r].h;
      if (h.sh_type != SHT_RELA && h.sh_type != SHT_REL) continue;
      if (h.sh_info == 0 || h.sh_info >= sections_.size())
        corrupt(section_label(r) + " relocates section " + std::to_string(h.sh_info) +
                ", which does not exist");
      const Section& target = sections_[h.sh_info];
      if (target.region == kNotLoaded) continue;  // .rela.eh_frame, .rela.debug_*
      if (h.sh_type == SHT_REL)
        unsupported("REL relocations without addends (" + section_label(r) + ")");
      if (h.sh_link != symtab_)
        corrupt(section_label(r) + " uses section " + std::to_string(h.sh_link) +
                " as its symbol table, not " + section_label(symtab_));
      if (h.sh_entsize != sizeof(Elf64_Rela) || h.sh_size % sizeof(Elf64_Rela) != 0)
        corrupt(section_label(r) + " has entries of " + std::to_string(h.sh_entsize) +
                " bytes in " + std::to_string(h.sh_size) + " (expected 24)");
      if (target.h.sh_type == SHT_NOBITS)
        corrupt(section_label(r) + " relocates " + section_label(h.sh_info) +
                ", which has no contents");
      relocation_sections_.push_back(r);
      const uint64_t count = h.sh_size / sizeof(Elf64_Rela);
      for (uint64_t k = 0; k < count; ++k) {
        auto rela = read<Elf64_Rela>(bytes_, h.sh_offset + k * sizeof(Elf64_Rela));
        uint64_t sym = ELF64_R_SYM(rela.r_info);
        uint32_t type = ELF64_R_TYPE(rela.r_info);
        auto where = [&] { return "relocation " + std::to_string(k) + " in " + section_label(r); };
        RelocationType t = relocation_type(type);
        if (!t.name)
          unsupported("relocation type " + std::to_string(type) + " at offset " +
                      hex(rela.r_offset) + " in " + section_label(r));
        if (sym >= symbols_.size())
          corrupt(where() + " refers to symbol " + std::to_string(sym) + ", past the last of " +
                  std::to_string(symbols_.size()));
        if (!fits(rela.r_offset, t.width, target.h.sh_size))
          corrupt(where() + " writes " + std::to_string(t.width) + " bytes at offset " +
                  std::to_string(rela.r_offset) + ", past the end of " + section_label(h.sh_info) +
                  " (" + std::to_string(target.h.sh_size) + " bytes)");
        check_target(sym, where);
        SymbolState& s = state_[sym];
        bool external = sym != 0 && symbols_[sym].st_shndx == SHN_UNDEF;
        if (type == R_X86_64_PLT32 && external && s.stub < 0)
          s.stub = static_cast<int32_t>(stubs_++);
        if ((t.got || s.stub >= 0) && s.got < 0) s.got = static_cast<int32_t>(got_slots_++);
      }
    }
  }

  // A symbol a relocation refers to must have an address once loaded.
  template <typename Where>
  void check_target(uint64_t sym, const Where& where) const {
    if (sym == 0) return;
    const Elf64_Sym& s = symbols_[sym];
    uint8_t type = ELF64_ST_TYPE(s.st_info);
    if (type == STT_TLS) unsupported("thread-local symbol " + symbol_label(sym));
    if (type == STT_GNU_IFUNC) unsupported("indirect function " + symbol_label(sym));
    if (s.st_shndx == SHN_UNDEF && ELF64_ST_BIND(s.st_info) == STB_LOCAL)
      corrupt(where() + " refers to " + symbol_label(sym) + ", local and undefined");
    if (s.st_shndx != SHN_UNDEF && s.st_shndx < SHN_LORESERVE &&
        sections_[s.st_shndx].region == kNotLoaded)
      unsupported(where() + " refers to " + symbol_label(sym) + " in " + section_label(s.st_shndx) +
                  ", which is not loaded");
  }

  void lay_out() {
    uint64_t cursor = 0;
    auto grow = [&](uint64_t bytes) {
      cursor += bytes;  // both below 2^31: no overflow
      if (cursor > kMaxImageBytes) unsupported("more than 1 GiB of code and data");
    };
    for (int region = 0; region < kRegions; ++region) {
      cursor = align_up(cursor, kPage);
      region_begin_[region] = cursor;
      for (Section& s : sections_) {
        if (s.region != region) continue;
        cursor = align_up(cursor, std::max<uint64_t>(s.h.sh_addralign, 1));
        s.offset = cursor;
        grow(s.h.sh_size);
        if (eh_frame_ != 0 && &s == &sections_[eh_frame_]) grow(kEhFrameTerminatorBytes);
      }
      if (region == kCode) {
        stub_offset_ = cursor = align_up(cursor, 8);
        grow(stubs_ * kStubBytes);
      } else if (region == kConstants) {
        got_offset_ = cursor = align_up(cursor, 8);
        grow(uint64_t{got_slots_} * 8);
      } else {
        for (uint64_t i = 1; i < symbols_.size(); ++i) {
          if (symbols_[i].st_shndx != SHN_COMMON) continue;
          state_[i].common_offset = cursor = align_up(cursor, symbols_[i].st_value);
          grow(symbols_[i].st_size);
        }
      }
      region_end_[region] = cursor;
    }
    image_bytes_ = std::max(align_up(cursor, kPage), kPage);
  }

  void map_and_copy() {
    // Small images are touched whole anyway: one populating call beats a page fault per page.
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (image_bytes_ <= kPopulateBytes ? MAP_POPULATE : 0);
    void* p = mmap(nullptr, image_bytes_, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED)
      throw Error(place_, "cannot map " + std::to_string(image_bytes_) +
                              " bytes for the kernel's code: " + std::strerror(errno));
    image_.reset(new ElfImage());
    image_->base_ = base_ = static_cast<uint8_t*>(p);
    image_->size_ = image_bytes_;
    for (const Section& s : sections_)
      if (s.region != kNotLoaded && s.h.sh_type != SHT_NOBITS && s.h.sh_size > 0)
        std::memcpy(base_ + s.offset, bytes_.data() + s.h.sh_offset, s.h.sh_size);
  }

  uint64_t address(uint64_t offset) const { return reinterpret_cast<uint64_t>(base_) + offset; }
  uint64_t got_address(uint64_t sym) const {
    return address(got_offset_ + uint64_t(state_[sym].got) * 8);
  }
  uint64_t stub_address(uint64_t sym) const {
    return address(stub_offset_ + uint64_t(state_[sym].stub) * kStubBytes);
  }

  uint64_t address_of(uint64_t sym) {
    SymbolState& s = state_[sym];
    if (s.resolved) return s.address;
    const Elf64_Sym& e = symbols_[sym];
    if (sym == 0) {
      s.address = 0;
    } else if (e.st_shndx == SHN_UNDEF) {
      s.address = resolve_external(sym);
    } else if (e.st_shndx == SHN_ABS) {
      s.address = e.st_value;
    } else if (e.st_shndx == SHN_COMMON) {
      s.address = address(s.common_offset);
    } else {
      s.address = address(sections_[e.st_shndx].offset + e.st_value);
    }
    s.resolved = true;
    return s.address;
  }

  uint64_t resolve_external(uint64_t sym) const {
    std::string_view name = names_[sym];  // NUL-terminated in the object (read_symbols)
    if (name == "_GLOBAL_OFFSET_TABLE_") return address(got_offset_);
    bool may_import = options_.may_import ? options_.may_import(name) : kernel_may_import(name);
    if (!may_import)
      fail("imports the symbol " + symbol_label(sym) +
           ", which a kernel may not call (kernels import only the math library, its vector " +
           "forms and memcpy, memmove, memset)");
    if (void* p = dlsym(RTLD_DEFAULT, name.data())) return reinterpret_cast<uint64_t>(p);
    if (ELF64_ST_BIND(symbols_[sym].st_info) == STB_WEAK) return 0;
    throw Error(place_, "object code needs the symbol " + symbol_label(sym) +
                            ", which the process does not define");
  }

  void fill_got_and_stubs() {
    for (uint64_t i = 0; i < symbols_.size(); ++i) {
      if (state_[i].got < 0) continue;
      uint64_t target = address_of(i);
      std::memcpy(reinterpret_cast<void*>(got_address(i)), &target, 8);
      if (state_[i].stub < 0) continue;
      uint8_t stub[kStubBytes] = {0xff, 0x25, 0, 0, 0, 0, 0xcc, 0xcc};  // jmp *disp32(%rip)
      auto disp = static_cast<int32_t>(got_address(i) - (stub_address(i) + 6));  // within the image
      std::memcpy(stub + 2, &disp, 4);
      std::memcpy(reinterpret_cast<void*>(stub_address(i)), stub, kStubBytes);
    }
  }

  void apply_relocations() {
    for (uint64_t r : relocation_sections_) {
      const Elf64_Shdr& h = sections_[r].h;
      const Section& target = sections_[h.sh_info];
      const uint64_t count = h.sh_size / sizeof(Elf64_Rela);
      for (uint64_t k = 0; k < count; ++k) {
        auto rela = read<Elf64_Rela>(bytes_, h.sh_offset + k * sizeof(Elf64_Rela));
        apply(r, k, rela, target);
      }
    }
  }

  void apply(uint64_t r, uint64_t k, const Elf64_Rela& rela, const Section& target) {
    const uint64_t sym = ELF64_R_SYM(rela.r_info);
    const uint32_t type = ELF64_R_TYPE(rela.r_info);
    uint8_t* at = base_ + target.offset + rela.r_offset;
    const uint64_t p = reinterpret_cast<uint64_t>(at);
    const uint64_t a = static_cast<uint64_t>(rela.r_addend);
    const uint64_t got = address(got_offset_);
    check_computed_address(r, k, rela);
    auto put64 = [&](uint64_t v) { std::memcpy(at, &v, 8); };
    auto put32 = [&](uint64_t v, bool is_signed) {
      bool ok = is_signed ? fits_signed32(static_cast<int64_t>(v)) : v <= UINT32_MAX;
      if (!ok)
        fail("cannot be loaded here: " + std::string(relocation_type(type).name) + " (relocation " +
             std::to_string(k) + " in " + section_label(r) + ") against " + symbol_label(sym) +
             " needs " + hex(v) + ", which does not fit in 32 bits");
      auto v32 = static_cast<uint32_t>(v);
      std::memcpy(at, &v32, 4);
    };
    switch (type) {
      case R_X86_64_NONE: return;
      case R_X86_64_64: return put64(address_of(sym) + a);
      case R_X86_64_PC32: return put32(address_of(sym) + a - p, true);
      case R_X86_64_PLT32: {
        uint64_t v = address_of(sym) + a - p;
        if (state_[sym].stub >= 0 &&
            (options_.always_use_stubs || !fits_signed32(static_cast<int64_t>(v))))
          v = stub_address(sym) + a - p;
        return put32(v, true);
      }
      case R_X86_64_GOTPCREL:
      case R_X86_64_GOTPCRELX:
      case R_X86_64_REX_GOTPCRELX: return put32(got_address(sym) + a - p, true);
      case R_X86_64_32: return put32(address_of(sym) + a, false);
      case R_X86_64_32S: return put32(address_of(sym) + a, true);
      case R_X86_64_PC64: return put64(address_of(sym) + a - p);
      case R_X86_64_GOTOFF64: return put64(address_of(sym) + a - got);
      case R_X86_64_GOTPC32: return put32(got + a - p, true);
      default:
        throw InternalError(place_, "relocation type " + std::to_string(type) +
                                        " passed plan_relocations but has no case in apply");
    }
  }

  // Whether a symbol lies in the image (the GOT's own name included), once mapped.
  bool in_image(uint64_t sym) const {
    if (sym == 0) return false;
    const Elf64_Sym& e = symbols_[sym];
    if (e.st_shndx == SHN_UNDEF) return names_[sym] == "_GLOBAL_OFFSET_TABLE_";
    return e.st_shndx != SHN_ABS;  // a loaded section (check_target) or COMMON
  }

  // The address a relocation computes before subtracting P or the GOT (S + A, or the GOT
  // slot + A) must lie in the image when S does, and next to S when S is outside (an external
  // function, an absolute or missing weak symbol): a corrupt addend would otherwise make the
  // code read or jump wherever it says.
  void check_computed_address(uint64_t r, uint64_t k, const Elf64_Rela& rela) {
    const uint64_t sym = ELF64_R_SYM(rela.r_info);
    const uint32_t type = ELF64_R_TYPE(rela.r_info);
    if (type == R_X86_64_NONE) return;
    auto where = [&] {
      return "relocation " + std::to_string(k) + " in " + section_label(r) + ", " +
             relocation_type(type).name + " against " + symbol_label(sym);
    };
    bool via_got = relocation_type(type).got || type == R_X86_64_GOTPC32;
    if (!via_got && !in_image(sym)) {
      if (rela.r_addend < -kAddendSlack || rela.r_addend > kAddendSlack)
        corrupt(where() + ", has addend " + std::to_string(rela.r_addend) +
                ", which points away from it");
      return;
    }
    uint64_t base = type == R_X86_64_GOTPC32 ? address(got_offset_)
                    : via_got                ? got_address(sym)
                                             : address_of(sym);
    // `base` lies in the image, so its offset is below 1 GiB; the addend may be anything.
    int64_t offset = static_cast<int64_t>(base - address(0));
    int64_t computed = 0;
    if (__builtin_add_overflow(offset, rela.r_addend, &computed) || computed < -kAddendSlack ||
        computed > static_cast<int64_t>(image_bytes_) + kAddendSlack)
      corrupt(where() + " with addend " + std::to_string(rela.r_addend) +
              ", points outside the kernel's image (offset " + std::to_string(computed) + " of " +
              std::to_string(image_bytes_) + " bytes)");
  }

  // The relocated unwind table, checked before libgcc may read it (register_with_tools).
  void check_unwind_table() {
    if (eh_frame_ == 0) return;
    const Section& s = sections_[eh_frame_];
    EhFrameCheck check = check_eh_frame(std::span<const uint8_t>(base_ + s.offset, s.h.sh_size),
                                        address(region_begin_[kCode]), address(region_end_[kCode]));
    if (!check.problem.empty())
      corrupt("the unwind table, " + section_label(eh_frame_) + ", " + check.problem);
    eh_frame_fdes_ = check.fdes;
  }

  // Last, when nothing can fail any more: the unwind table goes to libgcc and the object, its
  // sections' addresses filled in, to debuggers (gdb_jit.h); ~ElfImage takes both back.
  void register_with_tools() {
    if (eh_frame_fdes_ > 0) {
      image_->eh_frame_ = base_ + sections_[eh_frame_].offset;
      register_eh_frame(image_->eh_frame_);
    }
    std::vector<uint8_t> symfile(bytes_.begin(), bytes_.end());
    for (uint64_t i = 1; i < sections_.size(); ++i) {
      if (sections_[i].region == kNotLoaded) continue;
      uint64_t at = address(sections_[i].offset);
      std::memcpy(
          symfile.data() + header_.e_shoff + i * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_addr),
          &at, sizeof at);
    }
    image_->debugger_entry_ = std::make_unique<GdbJitEntry>(std::move(symfile));
  }

  void protect() {
    const int modes[kRegions] = {PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE};
    for (int region = 0; region < kRegions; ++region) {
      if (region_end_[region] == region_begin_[region] || modes[region] == (PROT_READ | PROT_WRITE))
        continue;
      uint64_t bytes = align_up(region_end_[region], kPage) - region_begin_[region];
      if (mprotect(base_ + region_begin_[region], bytes, modes[region]) != 0)
        throw Error(place_,
                    "cannot protect the kernel's code: " + std::string(std::strerror(errno)));
    }
  }

  // The global and weak symbols the object defines, for ElfImage::find.
  void list_symbols() {
    for (uint64_t i = 1; i < symbols_.size(); ++i) {
      const Elf64_Sym& e = symbols_[i];
      uint8_t bind = ELF64_ST_BIND(e.st_info);
      if (e.st_shndx == SHN_UNDEF ||
          (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE))
        continue;
      Region region = kNotLoaded;
      if (e.st_shndx == SHN_COMMON) {
        region = kData;
      } else if (e.st_shndx != SHN_ABS) {
        region = sections_[e.st_shndx].region;
        if (region == kNotLoaded) continue;
      }
      ElfImage::Named named;
      named.name = static_cast<uint32_t>(image_->names_.size());
      named.symbol.address = reinterpret_cast<const uint8_t*>(address_of(i));
      named.symbol.size = e.st_size;
      named.symbol.code = region == kCode;
      named.symbol.data = region == kConstants || region == kData;
      image_->names_.append(names_[i]);
      image_->names_.push_back('\0');
      image_->symbols_.push_back(named);
    }
  }

  std::span<const uint8_t> bytes_;
  const Place& place_;
  ElfLoadOptions options_;
  Elf64_Ehdr header_{};
  std::vector<Section> sections_;
  uint64_t symtab_ = 0;
  uint64_t eh_frame_ = 0;  // the unwind table's section, 0 when there is none
  size_t eh_frame_fdes_ = 0;
  std::vector<Elf64_Sym> symbols_;
  std::vector<std::string_view> names_;  // of symbols_, pointing into the object
  std::vector<SymbolState> state_;
  std::vector<uint64_t> relocation_sections_;  // RELA sections that apply to loaded sections
  uint32_t got_slots_ = 0, stubs_ = 0;
  uint64_t got_offset_ = 0, stub_offset_ = 0;
  uint64_t region_begin_[kRegions] = {}, region_end_[kRegions] = {};
  uint64_t image_bytes_ = 0;
  uint8_t* base_ = nullptr;
  std::unique_ptr<ElfImage> image_;  // owns the mapping once it exists, so errors unmap it
};

std::unique_ptr<ElfImage> ElfImage::load(std::span<const uint8_t> object, const Place& place,
                                         const ElfLoadOptions& options) {
  return ElfLinker(object, place, options).link();
}

ElfImage::~ElfImage() {
  // Debuggers and the unwinder let go of the code before it is unmapped.
  debugger_entry_.reset();
  if (eh_frame_) deregister_eh_frame(eh_frame_);
  if (base_) munmap(base_, size_);
}

std::optional<ElfSymbol> ElfImage::find(std::string_view name) const {
  for (const Named& n : symbols_)
    if (std::string_view(names_.c_str() + n.name) == name) return n.symbol;
  return std::nullopt;
}

std::optional<std::string_view> ElfImage::string_at(const void* p) const {
  auto at = reinterpret_cast<uintptr_t>(p), begin = reinterpret_cast<uintptr_t>(base_);
  if (!base_ || at < begin || at >= begin + size_) return std::nullopt;
  auto* c = static_cast<const uint8_t*>(p);
  const void* end = std::memchr(c, 0, begin + size_ - at);
  if (!end) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(c),
                          static_cast<size_t>(static_cast<const uint8_t*>(end) - c));
}

void load_vector_math_library() {
  // Never closed: loaded code may call into it for the rest of the process.
  static const bool loaded = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL) != nullptr;
  (void)loaded;
}

}  // namespace loom::cpu
