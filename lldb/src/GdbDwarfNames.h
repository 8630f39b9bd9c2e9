// GDB's name of a function LLDB 16 cannot see.
//
// LLDB 16 makes no Function of a GCC function whose code is split into a hot and a cold part
// (DW_AT_ranges with the cold part in .text.unlikely): at -O2 that is every function with an
// exception path, the runtime's autograd fallback among them. GDB names such a function from its
// DWARF, so the plugin reads the compile unit's DIEs itself: the subprogram whose address ranges
// hold the address, named the way GDB names it (dwarf2_physname: the demangled linkage name, or
// the scope, name and parameter types in GDB's spelling). An address no subprogram covers (an
// identical-code-folding thunk) has no DWARF name: GDB names it by its ELF symbol.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "DwarfCursor.h"

namespace dscope::lldb_plugin {

struct DwarfSections {
  std::vector<uint8_t> info, abbrev, str, line_str, rnglists, ranges, aranges, addr;
};

// The sections, each from bytes(".debug_info") and so on (a module's, an ELF file's).
template <class BytesOf>
DwarfSections dwarfSections(BytesOf&& bytes) {
  DwarfSections s;
  s.info = bytes(".debug_info");
  s.abbrev = bytes(".debug_abbrev");
  s.str = bytes(".debug_str");
  s.line_str = bytes(".debug_line_str");
  s.rnglists = bytes(".debug_rnglists");
  s.ranges = bytes(".debug_ranges");
  s.aranges = bytes(".debug_aranges");
  s.addr = bytes(".debug_addr");
  return s;
}

// The compile units' address ranges as GDB knows them, sorted: .debug_aranges, plus the unit
// DIE's own ranges for every unit .debug_aranges leaves out (clang emits none; a module mixing
// GCC and clang objects, as libdscope_cuda in the clang preset, has some).
std::vector<dwarf::Arange> compileUnitRanges(const DwarfSections& s);

class GdbDwarfNames {
 public:
  explicit GdbDwarfNames(DwarfSections sections);
  ~GdbDwarfNames();

  enum class Found { Name, NoFunction, Unknown };
  struct Answer {
    Found found = Found::Unknown;  // Unknown: DWARF the reader does not follow (use the ELF symbol)
    std::string name;              // with Found::Name
  };
  // The function (a subprogram, not an inlined copy) whose code holds the file address.
  Answer functionAt(uint64_t file_address) const;
  const std::vector<dwarf::Arange>& unitRanges() const { return unit_ranges_; }

  struct Unit;

 private:
  const Unit* unitAt(uint64_t unit_offset) const;

  DwarfSections s_;
  std::vector<dwarf::Arange> unit_ranges_;
  mutable std::mutex mutex_;
  mutable std::map<uint64_t, std::unique_ptr<Unit>> units_;
};

}  // namespace dscope::lldb_plugin
