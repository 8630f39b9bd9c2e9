// Source lines as GDB gives them, for LLDB's side of "function at file:line".
//
// Why not LLDB's own line entry: when the DWARF line table has several rows at one address (GCC
// does this at most function entries: the opening line, then the first statement, then a
// non-statement row, all at the entry address), LLDB 16 keeps only the last row, while GDB
// picks the statement row and drops the rows that a change of file at the same address ends.
// So LLDB says "f.cpp:34" where GDB says "f.cpp:35". To print what GDB prints, this reads the
// module's .debug_line itself and applies GDB 13's rules (dwarf2/read.c lnp_state_machine,
// buildsym.c record_line, symtab.c find_pc_sect_line), checked against GDB on every row address
// of the runtime and the samples (tests/e2e/lldb_tests.cmake, lldb_lines_match_gdb).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "DwarfCursor.h"

namespace dscope::lldb_plugin {

struct SourceLine {
  std::string file;  // as GDB's symtab.filename: the file entry joined to its directory entry
  uint32_t line = 0;
};

class GdbLineTable {
 public:
  // The bytes of .debug_line, .debug_line_str and .debug_str (all but the first may be empty),
  // and the compile units' ranges (compileUnitRanges, GdbDwarfNames.h; empty: no such check).
  // Malformed units end the parse; what was read before them is kept.
  static std::shared_ptr<const GdbLineTable> parse(std::vector<uint8_t> line, std::vector<uint8_t> line_str,
                                                   std::vector<uint8_t> str, std::vector<dwarf::Arange> unit_ranges);

  // GDB's find_pc_line for a file address; nullopt where GDB has no line.
  std::optional<SourceLine> lookup(uint64_t file_address) const;

  struct Row {
    uint64_t pc;
    uint32_t line;
    bool is_stmt;
  };
  struct Subfile {
    std::string name;
    std::vector<Row> rows;  // sorted as GDB sorts a symtab's line table
  };
  struct Unit {
    std::vector<Subfile> subfiles;  // in GDB's filetab order (the primary file first)
  };
  struct Sequence {
    uint64_t low, high;  // [low, high)
    uint32_t unit;
  };

 private:
  std::vector<Unit> units_;
  std::vector<Sequence> sequences_;  // sorted by low
  // The compile units' address ranges, sorted: GDB answers only for an address
  // inside a compile unit (not, say, for the padding after a function's last row). Empty: no
  // such check.
  std::vector<dwarf::Arange> unit_ranges_;
  friend class LineProgramReader;
};

}  // namespace dscope::lldb_plugin
