// Reading DWARF sections byte by byte, for the two readers that make LLDB name functions and
// source lines as GDB does (GdbLines.cpp, GdbDwarfNames.cpp).
#pragma once

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

}  // namespace dscope::lldb_plugin::dwarf
