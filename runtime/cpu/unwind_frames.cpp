#include "runtime/cpu/unwind_frames.h"

#include <cstring>
#include <map>
#include <optional>

// libgcc's registration entry points (unwind-dw2-fde.c); declared by no public header.
extern "C" void __register_frame(void* begin);    // NOLINT(bugprone-reserved-identifier)
extern "C" void __deregister_frame(void* begin);  // NOLINT(bugprone-reserved-identifier)

namespace loom::cpu {

namespace {

// DWARF pointer encodings (DW_EH_PE_*).
constexpr uint8_t kAbsPtr = 0x00, kUData2 = 0x02, kUData4 = 0x03, kUData8 = 0x04, kSData2 = 0x0a,
                  kSData4 = 0x0b, kSData8 = 0x0c, kPcRel = 0x10;
// Columns of libgcc's x86-64 unwinder (DWARF_FRAME_REGISTERS): rax..r15 and the return address.
constexpr uint64_t kRegisterColumns = 17;

// Reads one entry's bytes, never past its end; every read reports whether it fitted.
class Cursor {
 public:
  Cursor(const uint8_t* begin, const uint8_t* end) : at_(begin), end_(end) {}
  const uint8_t* at() const { return at_; }
  size_t left() const { return static_cast<size_t>(end_ - at_); }

  bool skip(uint64_t bytes) {
    if (bytes > left()) return false;
    at_ += bytes;
    return true;
  }
  bool byte(uint8_t* out) {
    if (left() < 1) return false;
    *out = *at_++;
    return true;
  }
  bool uleb(uint64_t* out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = 0;
      if (!byte(&b)) return false;
      value |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) {
        *out = value;
        return true;
      }
    }
    return false;  // longer than 64 bits
  }
  bool sleb(int64_t* out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = 0;
      if (!byte(&b)) return false;
      value |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) {
        if (shift + 7 < 64 && (b & 0x40)) value |= ~uint64_t{0} << (shift + 7);
        *out = static_cast<int64_t>(value);
        return true;
      }
    }
    return false;
  }
  // A pointer in `encoding` (already checked by pointer_size); PC-relative ones are read
  // against the address of the field, as libgcc reads them.
  bool pointer(uint8_t encoding, uint64_t* out) {
    const uint8_t* field = at_;
    uint64_t size = pointer_size(encoding);
    if (size == 0 || left() < size) return false;
    uint64_t value = 0;
    switch (encoding & 0x0f) {
      case kUData2: value = read<uint16_t>(); break;
      case kSData2: value = static_cast<uint64_t>(int64_t{read<int16_t>()}); break;
      case kUData4: value = read<uint32_t>(); break;
      case kSData4: value = static_cast<uint64_t>(int64_t{read<int32_t>()}); break;
      default: value = read<uint64_t>(); break;  // kAbsPtr, kUData8, kSData8
    }
    if (encoding & kPcRel) value += reinterpret_cast<uintptr_t>(field);
    *out = value;
    return true;
  }

  // Bytes of a pointer in `encoding`; 0 for an encoding libgcc cannot decode here (it would
  // abort) or that needs bases a registered table does not have (text-, data-, function-
  // relative, aligned, indirect).
  static uint64_t pointer_size(uint8_t encoding) {
    if (encoding & ~uint8_t{kPcRel | 0x0f}) return 0;
    switch (encoding & 0x0f) {
      case kAbsPtr:
      case kUData8:
      case kSData8: return 8;
      case kUData4:
      case kSData4: return 4;
      case kUData2:
      case kSData2: return 2;
      default: return 0;
    }
  }

 private:
  template <typename T>
  T read() {
    T v;
    std::memcpy(&v, at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  const uint8_t* at_;
  const uint8_t* end_;
};

struct Cie {
  uint8_t pointer_encoding = kAbsPtr;
  bool has_augmentation_data = false;  // 'z': FDEs carry an augmentation length
  int64_t state_depth = 0;             // remembered states its initial instructions leave
};

// Checks call-frame instructions as libgcc's execute_cfa_program runs them: every opcode
// known, operands inside the entry, registers among the unwinder's columns, and never a
// restore_state without a remembered state (libgcc would follow a null pointer). `depth`:
// the states remembered before these instructions; on return, after them.
std::string check_instructions(Cursor c, uint8_t pointer_encoding, int64_t* depth) {
  std::optional<uint64_t> bad_register;
  auto reg = [&](uint64_t r) {
    if (r >= kRegisterColumns) bad_register = r;
    return r < kRegisterColumns;
  };
  while (c.left() > 0) {
    uint8_t op = 0;
    c.byte(&op);
    uint64_t a = 0, b = 0;
    int64_t s = 0;
    bool ok = true;
    switch (op & 0xc0) {
      case 0x40: continue;                                  // advance_loc
      case 0x80: ok = reg(op & 0x3f) && c.uleb(&a); break;  // offset
      case 0xc0: ok = reg(op & 0x3f); break;                // restore
      default:
        switch (op) {
          case 0x00: break;                                                     // nop
          case 0x01: ok = c.pointer(pointer_encoding, &a); break;               // set_loc
          case 0x02: ok = c.skip(1); break;                                     // advance_loc1
          case 0x03: ok = c.skip(2); break;                                     // advance_loc2
          case 0x04: ok = c.skip(4); break;                                     // advance_loc4
          case 0x05: ok = c.uleb(&a) && reg(a) && c.uleb(&b); break;            // offset_extended
          case 0x06:                                                            // restore_extended
          case 0x07:                                                            // undefined
          case 0x08:                                                            // same_value
          case 0x0d: ok = c.uleb(&a) && reg(a); break;                          // def_cfa_register
          case 0x09: ok = c.uleb(&a) && reg(a) && c.uleb(&b) && reg(b); break;  // register
          case 0x0a: ++*depth; break;                                           // remember_state
          case 0x0b:                                                            // restore_state
            if (--*depth < 0) return "restore_state without a remembered state";
            break;
          case 0x0c:                                                  // def_cfa
          case 0x14: ok = c.uleb(&a) && reg(a) && c.uleb(&b); break;  // val_offset
          case 0x0e:                                                  // def_cfa_offset
          case 0x2e: ok = c.uleb(&a); break;                          // GNU_args_size
          case 0x11:                                                  // offset_extended_sf
          case 0x12:                                                  // def_cfa_sf
          case 0x15: ok = c.uleb(&a) && reg(a) && c.sleb(&s); break;  // val_offset_sf
          case 0x13: ok = c.sleb(&s); break;                          // def_cfa_offset_sf
          case 0x2f: ok = c.uleb(&a) && reg(a) && c.uleb(&b); break;  // GNU_negative_offset_ext.
          case 0x0f:
          case 0x10:
          case 0x16:
            return "a DWARF expression in its call-frame instructions (opcode " +
                   std::to_string(op) + "), which the loader does not accept";
          default: return "unknown call-frame instruction " + std::to_string(op);
        }
    }
    if (bad_register)
      return "call-frame instruction " + std::to_string(op) + " names register " +
             std::to_string(*bad_register) + ", which the unwinder does not have (x86-64 has 0-16)";
    if (!ok)
      return "call-frame instruction " + std::to_string(op) + " runs past the end of its entry";
  }
  return "";
}

// A CIE's fields after its id, as libgcc's extract_cie_info reads them.
std::string read_cie(Cursor c, Cie* cie) {
  uint8_t version = 0;
  if (!c.byte(&version)) return "truncated";
  if (version != 1 && version != 3) return "version " + std::to_string(version) + ", not 1 or 3";
  const void* nul = std::memchr(c.at(), 0, c.left());
  if (!nul) return "its augmentation string runs past its end";
  std::string augmentation(reinterpret_cast<const char*>(c.at()),
                           static_cast<const uint8_t*>(nul) - c.at());
  c.skip(augmentation.size() + 1);
  uint64_t code_align = 0, return_column = 0;
  int64_t data_align = 0;
  uint8_t ra_byte = 0;
  if (!c.uleb(&code_align) || !c.sleb(&data_align)) return "truncated alignment factors";
  if (version == 1 ? !c.byte(&ra_byte) : !c.uleb(&return_column))
    return "truncated return address column";
  if (version == 1) return_column = ra_byte;
  if (return_column >= kRegisterColumns)
    return "return address column " + std::to_string(return_column) +
           ", which the unwinder does not have (x86-64 has 0-16)";
  if (!augmentation.empty()) {
    if (augmentation[0] != 'z') return "augmentation '" + augmentation + "' without 'z'";
    uint64_t length = 0;
    if (!c.uleb(&length) || length > c.left()) return "truncated augmentation data";
    Cursor data(c.at(), c.at() + length);
    c.skip(length);
    cie->has_augmentation_data = true;
    for (char a : augmentation.substr(1)) {
      if (a == 'S') continue;  // a signal frame: no data
      if (a != 'R')
        return "augmentation '" + augmentation +
               "': kernels have no personality routine or language-specific data";
      if (!data.byte(&cie->pointer_encoding) || Cursor::pointer_size(cie->pointer_encoding) == 0)
        return "pointer encoding " + std::to_string(cie->pointer_encoding) +
               ", which the unwinder cannot read here";
    }
  }
  std::string problem = check_instructions(c, cie->pointer_encoding, &cie->state_depth);
  return problem.empty() ? "" : "initial instructions: " + problem;
}

// An FDE's fields after its CIE pointer: the function it covers, then its instructions.
std::string read_fde(Cursor c, const Cie& cie, uintptr_t code_begin, uintptr_t code_end) {
  uint64_t begin = 0, range = 0;
  if (!c.pointer(cie.pointer_encoding, &begin) || !c.pointer(cie.pointer_encoding & 0x0f, &range))
    return "truncated function address";
  if (begin < code_begin || begin > code_end || range > code_end - begin)
    return "describes code outside the kernel's (" + std::to_string(range) + " bytes at offset " +
           std::to_string(static_cast<int64_t>(begin - code_begin)) + " from its code)";
  if (cie.has_augmentation_data) {
    uint64_t length = 0;
    if (!c.uleb(&length) || !c.skip(length)) return "truncated augmentation data";
  }
  int64_t depth = cie.state_depth;
  return check_instructions(c, cie.pointer_encoding, &depth);
}

}  // namespace

EhFrameCheck check_eh_frame(std::span<const uint8_t> table, uintptr_t code_begin,
                            uintptr_t code_end) {
  EhFrameCheck out;
  std::map<size_t, Cie> cies;  // by offset of their entry
  size_t offset = 0;
  auto fail = [&](const std::string& what) {
    out.problem = "entry at offset " + std::to_string(offset) + ": " + what;
    return out;
  };
  while (offset < table.size()) {
    uint32_t length = 0;
    if (table.size() - offset < 4) return fail("truncated length");
    std::memcpy(&length, table.data() + offset, 4);
    if (length == 0) break;  // libgcc stops at a zero-length entry too
    if (length == 0xffffffffu) return fail("a 64-bit length, which the loader does not accept");
    if (length < 4 || length > table.size() - offset - 4)
      return fail("length " + std::to_string(length) + " runs past the end of the table");
    const uint8_t* id_field = table.data() + offset + 4;
    Cursor body(id_field + 4, id_field + length);
    uint32_t id = 0;
    std::memcpy(&id, id_field, 4);
    if (id == 0) {
      Cie cie;
      if (std::string problem = read_cie(body, &cie); !problem.empty())
        return fail("CIE " + problem);
      cies[offset] = cie;
    } else {
      // The CIE pointer counts back from its own field to the CIE's first byte.
      size_t field = offset + 4;
      auto cie = id <= field ? cies.find(field - id) : cies.end();
      if (cie == cies.end()) return fail("FDE whose CIE pointer names no CIE before it");
      if (std::string problem = read_fde(body, cie->second, code_begin, code_end); !problem.empty())
        return fail("FDE " + problem);
      ++out.fdes;
    }
    offset += 4 + size_t{length};
  }
  return out;
}

void register_eh_frame(const uint8_t* table) { __register_frame(const_cast<uint8_t*>(table)); }

void deregister_eh_frame(const uint8_t* table) { __deregister_frame(const_cast<uint8_t*>(table)); }

}  // namespace loom::cpu
