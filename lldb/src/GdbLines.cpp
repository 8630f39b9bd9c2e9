#include "GdbLines.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "DwarfCursor.h"

namespace dscope::lldb_plugin {

namespace {

using dwarf::Cursor;

// DWARF constants (DWARF 5, §6.2 and §7.22).
enum : uint8_t {
  DW_LNS_copy = 1,
  DW_LNS_advance_pc,
  DW_LNS_advance_line,
  DW_LNS_set_file,
  DW_LNS_set_column,
  DW_LNS_negate_stmt,
  DW_LNS_set_basic_block,
  DW_LNS_const_add_pc,
  DW_LNS_fixed_advance_pc,
  DW_LNS_set_prologue_end,
  DW_LNS_set_epilogue_begin,
  DW_LNS_set_isa,
};
enum : uint8_t { DW_LNE_end_sequence = 1, DW_LNE_set_address, DW_LNE_define_file, DW_LNE_set_discriminator };
enum : uint64_t { DW_LNCT_path = 1, DW_LNCT_directory_index = 2 };

bool isAbsolute(const std::string& path) { return !path.empty() && path[0] == '/'; }

}  // namespace

// Reads one .debug_line section into GDB's symtab line tables.
class LineProgramReader {
 public:
  LineProgramReader(GdbLineTable& table, const std::vector<uint8_t>& line, const std::vector<uint8_t>& line_str,
                    const std::vector<uint8_t>& str)
      : table_(table), line_(line), line_str_(line_str), str_(str) {}

  void readAll() {
    Cursor c{line_.data(), line_.data(), line_.data() + line_.size()};
    while (c.ok && c.p < c.end) {
      if (!readUnit(c)) break;
    }
    for (auto& unit : table_.units_)
      for (auto& subfile : unit.subfiles)
        // GDB (buildsym.c): a stable sort by address, end markers (line 0) first at one address.
        std::stable_sort(subfile.rows.begin(), subfile.rows.end(), [](const auto& a, const auto& b) {
          if (a.pc == b.pc && ((a.line == 0) != (b.line == 0))) return a.line == 0;
          return a.pc < b.pc;
        });
    std::sort(table_.sequences_.begin(), table_.sequences_.end(),
              [](const auto& a, const auto& b) { return a.low < b.low; });
  }

 private:
  struct FileEntry {
    std::string name;
    uint64_t dir = 0;
  };
  struct Header {
    int version = 0;
    int offset_size = 4;
    int address_size = 8;
    uint8_t min_inst = 1, max_ops = 1, line_range = 1, opcode_base = 1;
    bool default_is_stmt = true;
    int8_t line_base = 0;
    std::vector<uint8_t> std_lengths;
    std::vector<std::string> dirs;
    std::vector<FileEntry> files;
  };

  // One entry-format value: a string for paths, a number for indexes, nothing otherwise; false
  // for a form a line table header does not use (the unit is given up).
  bool readForm(Cursor& c, const Header& h, uint64_t form, std::string* text, uint64_t* number) {
    dwarf::FormUnit unit;
    unit.version = h.version;
    unit.offset_size = h.offset_size;
    unit.address_size = h.address_size;
    unit.str = &str_;
    unit.line_str = &line_str_;
    dwarf::FormValue v = dwarf::readForm(c, form, unit);
    using K = dwarf::FormValue::Kind;
    switch (v.kind) {
      case K::Text: *text = std::move(v.text); return true;
      case K::Number: case K::StringIndex: *number = v.u; return true;
      case K::Bytes: return true;
      default: return false;
    }
  }

  bool readEntryTable(Cursor& c, const Header& h, std::vector<FileEntry>* out) {
    uint8_t format_count = c.u8();
    std::vector<std::pair<uint64_t, uint64_t>> formats;
    for (uint8_t i = 0; i < format_count && c.ok; ++i) {
      uint64_t content = c.uleb();
      formats.emplace_back(content, c.uleb());
    }
    uint64_t count = c.uleb();
    for (uint64_t i = 0; i < count && c.ok; ++i) {
      FileEntry e;
      for (const auto& [content, form] : formats) {
        std::string text;
        uint64_t number = 0;
        if (!readForm(c, h, form, &text, &number)) return false;
        if (content == DW_LNCT_path) e.name = text;
        if (content == DW_LNCT_directory_index) e.dir = number;
      }
      out->push_back(std::move(e));
    }
    return c.ok;
  }

  // GDB 13 line-header.h: include_dir_at and file_name_at (0-based in DWARF 5, 1-based before).
  const std::string* includeDir(const Header& h, uint64_t index) const {
    if (h.version >= 5) return index < h.dirs.size() ? &h.dirs[index] : nullptr;
    return index >= 1 && index - 1 < h.dirs.size() ? &h.dirs[index - 1] : nullptr;
  }
  const FileEntry* fileAt(const Header& h, uint64_t index) const {
    if (h.version >= 5) return index < h.files.size() ? &h.files[index] : nullptr;
    return index >= 1 && index - 1 < h.files.size() ? &h.files[index - 1] : nullptr;
  }
  // dwarf2_start_subfile: a relative file name joined to its directory entry.
  std::string subfileName(const Header& h, const FileEntry& fe) const {
    if (isAbsolute(fe.name)) return fe.name;
    const std::string* dir = includeDir(h, fe.dir);
    return dir ? *dir + "/" + fe.name : fe.name;
  }

  bool readUnit(Cursor& c) {
    Header h;
    uint64_t length = c.fixed(4);
    if (length == 0xffffffff) {
      h.offset_size = 8;
      length = c.fixed(8);
    }
    if (!c.has(length)) return false;
    Cursor unit{c.p, c.p, c.p + length};
    c.p += length;
    h.version = static_cast<int>(unit.fixed(2));
    if (h.version < 2 || h.version > 5) return true;  // skip what we do not know
    if (h.version >= 5) {
      h.address_size = unit.u8();
      unit.u8();  // segment selector size
    }
    uint64_t header_length = unit.fixed(h.offset_size);
    if (!unit.has(header_length)) return true;
    const uint8_t* program = unit.p + header_length;
    h.min_inst = unit.u8();
    h.max_ops = h.version >= 4 ? unit.u8() : 1;
    if (h.max_ops == 0) h.max_ops = 1;
    h.default_is_stmt = unit.u8() != 0;
    h.line_base = static_cast<int8_t>(unit.u8());
    h.line_range = unit.u8();
    if (h.line_range == 0) return true;
    h.opcode_base = unit.u8();
    for (int i = 1; i < h.opcode_base && unit.ok; ++i) h.std_lengths.push_back(unit.u8());
    if (h.version >= 5) {
      std::vector<FileEntry> dirs;
      if (!readEntryTable(unit, h, &dirs)) return true;
      for (auto& d : dirs) h.dirs.push_back(std::move(d.name));
      if (!readEntryTable(unit, h, &h.files)) return true;
    } else {
      for (std::string d = unit.cstr(); unit.ok && !d.empty(); d = unit.cstr()) h.dirs.push_back(d);
      for (std::string f = unit.cstr(); unit.ok && !f.empty(); f = unit.cstr()) {
        FileEntry e{f, unit.uleb()};
        unit.uleb();  // mtime
        unit.uleb();  // length
        h.files.push_back(std::move(e));
      }
    }
    if (!unit.ok || program > unit.end) return true;
    Cursor prog{program, program, unit.end};
    runProgram(prog, h);
    return true;
  }

  // ---- GDB's state machine (dwarf2/read.c lnp_state_machine) over one unit ----

  void runProgram(Cursor& c, const Header& h) {
    table_.units_.emplace_back();
    const auto unit_index = static_cast<uint32_t>(table_.units_.size() - 1);
    GdbLineTable::Unit& unit = table_.units_.back();
    std::map<std::string, int> by_name;
    // buildsym.c start_subfile: a file joins the first subfile of the same name, where an
    // absolute name also matches a relative subfile name under the compilation directory.
    auto addSubfile = [&](const std::string& name, const std::string& comp_dir) {
      if (by_name.count(name)) return;
      const int index = static_cast<int>(unit.subfiles.size());
      by_name.emplace(name, index);
      if (!isAbsolute(name) && !comp_dir.empty()) by_name.emplace(comp_dir + "/" + name, index);
      unit.subfiles.push_back({name, {}});
    };
    // GDB starts the primary subfile with the unit's DW_AT_name, relative to DW_AT_comp_dir as
    // written: in DWARF 5 file 0 and directory 0. (A clang file 0 "../../a.cpp" in directory 0
    // is GDB's "../../a.cpp", not "<comp_dir>/../../a.cpp".) Then a symtab per distinct file in
    // file-table order; find_pc_sect_line visits them in that order.
    const std::string comp_dir = h.version >= 5 && !h.dirs.empty() ? h.dirs[0] : std::string();
    if (h.version >= 5 && !h.files.empty() && !h.files[0].name.empty()) addSubfile(h.files[0].name, comp_dir);
    for (uint64_t i = (h.version >= 5 ? 0 : 1); i < h.files.size() + (h.version >= 5 ? 0 : 1); ++i) {
      const FileEntry* fe = fileAt(h, i);
      if (!fe) continue;
      addSubfile(subfileName(h, *fe), comp_dir);
    }
    auto subfileOf = [&](uint64_t file_index) -> int {
      const FileEntry* fe = fileAt(h, file_index);
      if (!fe) return -1;
      auto it = by_name.find(subfileName(h, *fe));
      return it == by_name.end() ? -1 : it->second;
    };

    int current = -1;  // the builder's current subfile, kept across sequences like GDB's
    while (c.ok && c.p < c.end) {
      // A new state machine per sequence.
      uint64_t address = 0;
      uint64_t file = 1;
      int64_t line = 1;
      bool is_stmt = h.default_is_stmt;
      uint64_t op_index = 0;
      uint64_t discriminator = 0;
      bool recording = true;
      int last_subfile = -1;
      int64_t last_line = 0;
      bool line_has_non_zero_discriminator = false;
      uint64_t last_address = 0;
      bool stmt_at_address = false;
      uint64_t low = UINT64_MAX;
      if (int s = subfileOf(file); s >= 0) current = s;

      auto record = [&](int subfile, int64_t row_line, uint64_t pc, bool stmt) {
        if (!recording || subfile < 0) return;
        auto& rows = unit.subfiles[subfile].rows;
        if (row_line == 0) {
          // buildsym.c record_line: an end marker removes the rows at its address, and marks
          // nothing when it would end an empty sequence.
          std::optional<int64_t> last;
          while (!rows.empty()) {
            last = rows.back().line;
            if (rows.back().pc != pc) break;
            rows.pop_back();
          }
          if (!last || *last == 0) return;
        }
        rows.push_back({pc, static_cast<uint32_t>(row_line), stmt});
        low = std::min(low, pc);
      };
      auto recordLine = [&](bool end_sequence) {
        const bool have_file = fileAt(h, file) != nullptr;
        if (have_file && (op_index == 0 || end_sequence)) {
          const bool file_changed = last_subfile != current;
          const bool ignore = (file_changed && !end_sequence && last_address == address && !is_stmt &&
                               stmt_at_address) ||
                              (!end_sequence && line == 0);
          if ((file_changed && !ignore) || end_sequence) record(last_subfile, 0, address, true);
          if (!end_sequence && !ignore) {
            // dwarf_record_line_p
            if (current != last_subfile || line != last_line || !line_has_non_zero_discriminator)
              record(current, line, address, is_stmt);
            last_subfile = current;
            last_line = line;
          }
        }
        if (last_address != address) {
          stmt_at_address = false;
          last_address = address;
        }
        stmt_at_address |= is_stmt;
      };
      auto advanceLine = [&](int64_t delta) {
        line += delta;
        if (delta != 0) line_has_non_zero_discriminator = discriminator != 0;
      };
      auto advancePc = [&](uint64_t operation_advance) {
        address += ((op_index + operation_advance) / h.max_ops) * h.min_inst;
        op_index = (op_index + operation_advance) % h.max_ops;
      };

      bool end_sequence = false;
      while (c.ok && c.p < c.end && !end_sequence) {
        uint8_t op = c.u8();
        if (op >= h.opcode_base) {
          const uint8_t adjusted = op - h.opcode_base;
          advancePc(adjusted / h.line_range);
          advanceLine(h.line_base + adjusted % h.line_range);
          recordLine(false);
          discriminator = 0;
          continue;
        }
        switch (op) {
          case 0: {  // extended
            uint64_t len = c.uleb();
            if (len == 0 || !c.has(len)) {
              c.ok = false;
              break;
            }
            const uint8_t* next = c.p + len;
            uint8_t sub = c.u8();
            if (sub == DW_LNE_end_sequence) {
              recording = true;
              end_sequence = true;
            } else if (sub == DW_LNE_set_address) {
              uint64_t a = c.fixed(static_cast<int>(std::min<uint64_t>(len - 1, 8)));
              if (a == 0) recording = false;  // a function the linker dropped (GDB PR 12528)
              address = a;
              op_index = 0;
            } else if (sub == DW_LNE_set_discriminator) {
              discriminator = c.uleb();
              line_has_non_zero_discriminator |= discriminator != 0;
            }
            c.p = next;
            break;
          }
          case DW_LNS_copy:
            recordLine(false);
            discriminator = 0;
            break;
          case DW_LNS_advance_pc: advancePc(c.uleb()); break;
          case DW_LNS_advance_line: advanceLine(c.sleb()); break;
          case DW_LNS_set_file: {
            file = c.uleb();
            if (fileAt(h, file)) {
              last_subfile = current;
              line_has_non_zero_discriminator = discriminator != 0;
              current = subfileOf(file);
            }
            break;
          }
          case DW_LNS_set_column: c.uleb(); break;
          case DW_LNS_negate_stmt: is_stmt = !is_stmt; break;
          case DW_LNS_set_basic_block: break;
          case DW_LNS_const_add_pc: advancePc((255 - h.opcode_base) / h.line_range); break;
          case DW_LNS_fixed_advance_pc:
            address += c.fixed(2);
            op_index = 0;
            break;
          case DW_LNS_set_prologue_end:
          case DW_LNS_set_epilogue_begin: break;
          case DW_LNS_set_isa: c.uleb(); break;
          default:
            for (uint8_t i = 0; i < h.std_lengths[op - 1] && c.ok; ++i) c.uleb();
            break;
        }
      }
      if (!c.ok) break;
      recordLine(true);
      if (low != UINT64_MAX && address > low) table_.sequences_.push_back({low, address, unit_index});
    }
  }

  GdbLineTable& table_;
  const std::vector<uint8_t>& line_;
  const std::vector<uint8_t>& line_str_;
  const std::vector<uint8_t>& str_;
};

std::shared_ptr<const GdbLineTable> GdbLineTable::parse(std::vector<uint8_t> line, std::vector<uint8_t> line_str,
                                                        std::vector<uint8_t> str, std::vector<dwarf::Arange> unit_ranges) {
  auto table = std::make_shared<GdbLineTable>();
  LineProgramReader(*table, line, line_str, str).readAll();
  table->unit_ranges_ = std::move(unit_ranges);
  return table;
}

std::optional<SourceLine> GdbLineTable::lookup(uint64_t pc) const {
  if (!unit_ranges_.empty() && !dwarf::arangeAt(unit_ranges_, pc)) return std::nullopt;
  // The unit (GDB: the compunit) whose sequences cover pc.
  auto it = std::upper_bound(sequences_.begin(), sequences_.end(), pc,
                             [](uint64_t a, const Sequence& s) { return a < s.low; });
  const Sequence* found = nullptr;
  for (int back = 0; it != sequences_.begin() && back < 64 && !found; ++back) {
    --it;
    if (pc >= it->low && pc < it->high) found = &*it;
  }
  if (!found) return std::nullopt;
  const Unit& unit = units_[found->unit];

  // symtab.c find_pc_sect_line: the row at or before pc with the highest address over the
  // unit's files (the first file wins a tie); a non-statement row gives way to a statement row
  // at the same address just before it.
  const Row* best = nullptr;
  const Subfile* best_file = nullptr;
  for (const Subfile& file : unit.subfiles) {
    const auto& rows = file.rows;
    auto next = std::upper_bound(rows.begin(), rows.end(), pc, [](uint64_t a, const Row& r) { return a < r.pc; });
    if (next == rows.begin()) continue;
    const Row* prev = &*(next - 1);
    if (prev->line != 0 && (!best || prev->pc > best->pc)) {
      best = prev;
      best_file = &file;
      if (!best->is_stmt) {
        const Row* tmp = best;
        const Row* first = rows.data();
        while (tmp > first && (tmp - 1)->pc == tmp->pc && (tmp - 1)->line != 0 && !tmp->is_stmt) --tmp;
        if (tmp->is_stmt) best = tmp;
      }
    }
  }
  if (!best || best->line == 0) return std::nullopt;
  return SourceLine{best_file->name, best->line};
}

}  // namespace dscope::lldb_plugin
