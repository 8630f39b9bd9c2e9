// Reading DWARF sections byte by byte, for the two readers that make LLDB name functions and
// source lines as GDB does (GdbLines.cpp, GdbDwarfNames.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace dscope::lldb_plugin::dwarf {

// A bounded little-endian reader: reading past the end sets ok = false and yields zeros.
struct Cursor {
  const uint8_t* begin;  // seek() offsets count from here
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;
  bool has(uint64_t n) {
    if (static_cast<uint64_t>(end - p) < n) ok = false;
    return ok;
  }
  uint64_t fixed(int n) {
    if (!has(n)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    p += n;
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(fixed(1)); }
  uint64_t uleb() {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (!has(1)) return 0;
      uint8_t b = *p++;
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  }
  int64_t sleb() {
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    do {
      if (!has(1)) return 0;
      b = *p++;
      if (shift < 64) v |= static_cast<int64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= -(static_cast<int64_t>(1) << shift);
    return v;
  }
  std::string cstr() {
    const void* nul = std::memchr(p, 0, end - p);
    if (!nul) {
      ok = false;
      return "";
    }
    std::string s(reinterpret_cast<const char*>(p), static_cast<const uint8_t*>(nul) - p);
    p = static_cast<const uint8_t*>(nul) + 1;
    return s;
  }
  void skip(uint64_t n) {
    if (has(n)) p += n;
  }
  void seek(uint64_t offset) {
    if (offset > static_cast<uint64_t>(end - begin)) {
      ok = false;
      return;
    }
    p = begin + offset;
  }
};

inline std::string stringAt(const std::vector<uint8_t>& section, uint64_t offset) {
  if (offset >= section.size()) return "";
  const char* s = reinterpret_cast<const char*>(section.data()) + offset;
  return std::string(s, strnlen(s, section.size() - offset));
}

// An attribute value decoded by its form (DWARF 5 section 7.5.6), for the unit it is read in.
struct FormUnit {
  int version = 5, offset_size = 4, address_size = 8;
  uint64_t offset = 0;  // the unit's .debug_info offset: ref1..ref_udata count from it
  const std::vector<uint8_t>* str = nullptr;       // .debug_str (strp)
  const std::vector<uint8_t>* line_str = nullptr;  // .debug_line_str (line_strp)
};
struct FormValue {
  enum class Kind {
    Number,        // data1..data8, udata, sdata
    Text,          // string, strp, line_strp
    StringIndex,   // strx, strx1..4
    OtherIndex,    // addrx, addrx1..4, loclistx, rnglistx
    Address,       // addr
    Ref,           // ref1..ref_udata: u is the .debug_info offset
    RefAddr,       // ref_addr: u is the .debug_info offset, maybe in another unit
    AltRef,        // GNU_ref_alt: in the supplementary file
    Flag,          // flag, flag_present
    SecOffset,     // sec_offset
    Constant,      // implicit_const
    Bytes,         // block, block1..4, data16: skipped
    Skipped,       // exprloc, ref_sig8, ref_sup4/8, strp_sup, GNU_strp_alt
    Unsupported,   // anything else: the reader cannot even size it
  };
  Kind kind = Kind::Unsupported;
  uint64_t u = 0;
  std::string text;
};

// Reads one value of `form` (DW_FORM_indirect already resolved by the caller).
inline FormValue readForm(Cursor& c, uint64_t form, const FormUnit& unit, int64_t implicit_const = 0) {
  using K = FormValue::Kind;
  FormValue v;
  auto set = [&](K kind, uint64_t u = 0) {
    v.kind = kind;
    v.u = u;
  };
  auto text = [&](const std::vector<uint8_t>* section) {
    const uint64_t offset = c.fixed(unit.offset_size);
    v.kind = K::Text;
    v.text = section ? stringAt(*section, offset) : "";
  };
  switch (form) {
    case 0x01: set(K::Address, c.fixed(unit.address_size)); break;                           // addr
    case 0x03: c.skip(c.fixed(2)); set(K::Bytes); break;                                     // block2
    case 0x04: c.skip(c.fixed(4)); set(K::Bytes); break;                                     // block4
    case 0x05: set(K::Number, c.fixed(2)); break;                                            // data2
    case 0x06: set(K::Number, c.fixed(4)); break;                                            // data4
    case 0x07: set(K::Number, c.fixed(8)); break;                                            // data8
    case 0x08: v.kind = K::Text; v.text = c.cstr(); break;                                   // string
    case 0x09: c.skip(c.uleb()); set(K::Bytes); break;                                       // block
    case 0x0a: c.skip(c.fixed(1)); set(K::Bytes); break;                                     // block1
    case 0x0b: set(K::Number, c.fixed(1)); break;                                            // data1
    case 0x0c: set(K::Flag, c.fixed(1)); break;                                              // flag
    case 0x0d: set(K::Number, static_cast<uint64_t>(c.sleb())); break;                       // sdata
    case 0x0e: text(unit.str); break;                                                        // strp
    case 0x0f: set(K::Number, c.uleb()); break;                                              // udata
    case 0x10: set(K::RefAddr, c.fixed(unit.version <= 2 ? unit.address_size : unit.offset_size)); break;  // ref_addr
    case 0x11: set(K::Ref, unit.offset + c.fixed(1)); break;                                 // ref1
    case 0x12: set(K::Ref, unit.offset + c.fixed(2)); break;                                 // ref2
    case 0x13: set(K::Ref, unit.offset + c.fixed(4)); break;                                 // ref4
    case 0x14: set(K::Ref, unit.offset + c.fixed(8)); break;                                 // ref8
    case 0x15: set(K::Ref, unit.offset + c.uleb()); break;                                   // ref_udata
    case 0x17: set(K::SecOffset, c.fixed(unit.offset_size)); break;                          // sec_offset
    case 0x18: c.skip(c.uleb()); set(K::Skipped); break;                                     // exprloc
    case 0x19: set(K::Flag, 1); break;                                                       // flag_present
    case 0x1a: set(K::StringIndex, c.uleb()); break;                                         // strx
    case 0x1b: case 0x22: case 0x23: set(K::OtherIndex, c.uleb()); break;                    // addrx, loclistx, rnglistx
    case 0x1c: c.skip(4); set(K::Skipped); break;                                            // ref_sup4
    case 0x1d: case 0x1f21: c.skip(unit.offset_size); set(K::Skipped); break;                // strp_sup, GNU_strp_alt
    case 0x1e: c.skip(16); set(K::Bytes); break;                                             // data16
    case 0x1f: text(unit.line_str); break;                                                   // line_strp
    case 0x20: c.skip(8); set(K::Skipped); break;                                            // ref_sig8
    case 0x21: set(K::Constant, static_cast<uint64_t>(implicit_const)); break;               // implicit_const
    case 0x24: c.skip(8); set(K::Skipped); break;                                            // ref_sup8
    case 0x25: set(K::StringIndex, c.fixed(1)); break;                                       // strx1
    case 0x26: set(K::StringIndex, c.fixed(2)); break;                                       // strx2
    case 0x27: set(K::StringIndex, c.fixed(3)); break;                                       // strx3
    case 0x28: set(K::StringIndex, c.fixed(4)); break;                                       // strx4
    case 0x29: set(K::OtherIndex, c.fixed(1)); break;                                        // addrx1
    case 0x2a: set(K::OtherIndex, c.fixed(2)); break;                                        // addrx2
    case 0x2b: set(K::OtherIndex, c.fixed(3)); break;                                        // addrx3
    case 0x2c: set(K::OtherIndex, c.fixed(4)); break;                                        // addrx4
    case 0x1f20: c.skip(unit.offset_size); set(K::AltRef); break;                            // GNU_ref_alt
    default: break;                                                                          // Unsupported
  }
  return v;
}

// One entry of .debug_aranges: the compile unit at unit_offset holds [low, high).
struct Arange {
  uint64_t low, high, unit_offset;
  bool operator<(const Arange& o) const {
    return low != o.low ? low < o.low : high != o.high ? high < o.high : unit_offset < o.unit_offset;
  }
};

// Every entry of a .debug_aranges section, sorted by address: per unit, (address, length) pairs
// after a header padded to twice the address size, ended by (0, 0). A malformed unit ends the read.
inline std::vector<Arange> readAranges(const std::vector<uint8_t>& section) {
  std::vector<Arange> out;
  Cursor c{section.data(), section.data(), section.data() + section.size()};
  while (c.ok && c.p < c.end) {
    const uint8_t* unit_start = c.p;
    uint64_t length = c.fixed(4);
    int offset_size = 4;
    if (length == 0xffffffff) {
      offset_size = 8;
      length = c.fixed(8);
    }
    if (!c.has(length)) break;
    Cursor unit{c.begin, c.p, c.p + length};
    c.p += length;
    unit.fixed(2);  // version
    const uint64_t unit_offset = unit.fixed(offset_size);
    const int address_size = unit.u8();
    unit.u8();  // segment selector size
    if (address_size != 8 && address_size != 4) continue;
    const uint64_t header = static_cast<uint64_t>(unit.p - unit_start), align = 2 * address_size;
    unit.skip((align - header % align) % align);
    while (unit.ok && unit.p < unit.end) {
      const uint64_t start = unit.fixed(address_size), size = unit.fixed(address_size);
      if (start == 0 && size == 0) break;
      if (size) out.push_back({start, start + size, unit_offset});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The entry whose range holds pc, or null. Ranges are sorted by their start; a bounded look back
// covers ranges that overlap.
inline const Arange* arangeAt(const std::vector<Arange>& aranges, uint64_t pc) {
  auto it = std::upper_bound(aranges.begin(), aranges.end(), pc, [](uint64_t a, const Arange& r) { return a < r.low; });
  for (int back = 0; it != aranges.begin() && back < 64; ++back) {
    --it;
    if (pc >= it->low && pc < it->high) return &*it;
  }
  return nullptr;
}

}  // namespace dscope::lldb_plugin::dwarf
