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
