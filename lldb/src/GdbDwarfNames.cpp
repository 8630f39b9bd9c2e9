#include "GdbDwarfNames.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "DwarfCursor.h"
#include "GdbNames.h"

namespace dscope::lldb_plugin {

namespace {

using dwarf::Cursor;

enum : uint16_t {
  TAG_array_type = 0x01,
  TAG_class_type = 0x02,
  TAG_enumeration_type = 0x04,
  TAG_formal_parameter = 0x05,
  TAG_pointer_type = 0x0f,
  TAG_reference_type = 0x10,
  TAG_compile_unit = 0x11,
  TAG_structure_type = 0x13,
  TAG_subroutine_type = 0x15,
  TAG_typedef = 0x16,
  TAG_union_type = 0x17,
  TAG_unspecified_parameters = 0x18,
  TAG_base_type = 0x24,
  TAG_const_type = 0x26,
  TAG_subprogram = 0x2e,
  TAG_template_type_param = 0x2f,
  TAG_template_value_param = 0x30,
  TAG_volatile_type = 0x35,
  TAG_namespace = 0x39,
  TAG_unspecified_type = 0x3b,
  TAG_rvalue_reference_type = 0x42,
  TAG_GNU_template_parameter_pack = 0x4107,
  TAG_GNU_formal_parameter_pack = 0x4108,
};
enum : uint16_t {
  AT_name = 0x03,
  AT_low_pc = 0x11,
  AT_high_pc = 0x12,
  AT_abstract_origin = 0x31,
  AT_artificial = 0x34,
  AT_declaration = 0x3c,
  AT_specification = 0x47,
  AT_type = 0x49,
  AT_ranges = 0x55,
  AT_linkage_name = 0x6e,
  AT_addr_base = 0x73,
  AT_rnglists_base = 0x74,
  AT_MIPS_linkage_name = 0x2007,
};

struct AbbrevAttr {
  uint16_t at, form;
  int64_t implicit_const;
};
struct Abbrev {
  uint16_t tag = 0;
  bool children = false;
  std::vector<AbbrevAttr> attrs;
};

}  // namespace

struct GdbDwarfNames::Unit {
  struct Die {
    uint64_t offset = 0;
    uint16_t tag = 0;
    int parent = -1;
    std::vector<int> children;
    std::string name, linkage;
    uint64_t specification = 0, origin = 0, type = 0;  // .debug_info offsets, 0: none
    bool has_low = false, has_high = false, high_is_offset = false, has_ranges = false;
    bool low_is_index = false, ranges_is_index = false;  // DWARF 5 addrx / rnglistx forms
    uint64_t low = 0, high = 0, ranges = 0;
    bool artificial = false, declaration = false, foreign_ref = false;
  };
  int version = 0, address_size = 8, offset_size = 4;
  uint64_t base = 0;
  uint64_t addr_base = 0, rnglists_base = 0;  // DWARF 5: where the unit's .debug_addr and rnglists offsets start
  std::vector<Die> dies;
  std::unordered_map<uint64_t, int> by_offset;

  const Die* at(uint64_t offset) const {
    auto it = by_offset.find(offset);
    return it == by_offset.end() ? nullptr : &dies[it->second];
  }
};

namespace {

using Unit = GdbDwarfNames::Unit;
using Die = Unit::Die;

// Entry `index` of the unit's .debug_addr table (DW_FORM_addrx, DW_RLE_*x); 0 when out of bounds.
uint64_t addressAt(const DwarfSections& s, const Unit& unit, uint64_t index) {
  Cursor c{s.addr.data(), s.addr.data(), s.addr.data() + s.addr.size()};
  if (index > s.addr.size()) return 0;
  c.seek(unit.addr_base + index * unit.address_size);
  return c.fixed(unit.address_size);
}

// Parses the unit at `offset` of .debug_info (only its unit DIE with unit_die_only); null on
// anything unexpected.
std::unique_ptr<Unit> parseUnit(const DwarfSections& s, uint64_t offset, bool unit_die_only = false) {
  Cursor c{s.info.data(), s.info.data(), s.info.data() + s.info.size()};
  c.seek(offset);
  auto unit = std::make_unique<Unit>();
  uint64_t length = c.fixed(4);
  if (length == 0xffffffff) {
    unit->offset_size = 8;
    length = c.fixed(8);
  }
  if (!c.has(length)) return nullptr;
  const uint8_t* unit_end = c.p + length;
  unit->version = static_cast<int>(c.fixed(2));
  uint64_t abbrev_offset = 0;
  if (unit->version >= 5) {
    const uint8_t unit_type = static_cast<uint8_t>(c.fixed(1));
    unit->address_size = static_cast<int>(c.fixed(1));
    abbrev_offset = c.fixed(unit->offset_size);
    if (unit_type != 1 /* DW_UT_compile */ && unit_type != 3 /* DW_UT_partial */) return nullptr;
  } else if (unit->version >= 2) {
    abbrev_offset = c.fixed(unit->offset_size);
    unit->address_size = static_cast<int>(c.fixed(1));
  } else {
    return nullptr;
  }
  if (!c.ok || (unit->address_size != 8 && unit->address_size != 4)) return nullptr;

  // The abbreviation table.
  std::unordered_map<uint64_t, Abbrev> abbrevs;
  Cursor a{s.abbrev.data(), s.abbrev.data(), s.abbrev.data() + s.abbrev.size()};
  a.seek(abbrev_offset);
  while (a.ok) {
    uint64_t code = a.uleb();
    if (code == 0) break;
    Abbrev ab;
    ab.tag = static_cast<uint16_t>(a.uleb());
    ab.children = a.fixed(1) != 0;
    for (;;) {
      uint16_t at = static_cast<uint16_t>(a.uleb());
      uint16_t form = static_cast<uint16_t>(a.uleb());
      if (!a.ok || (at == 0 && form == 0)) break;
      int64_t implicit = form == 0x21 ? a.sleb() : 0;
      ab.attrs.push_back({at, form, implicit});
    }
    abbrevs[code] = std::move(ab);
  }
  if (!a.ok) return nullptr;

  dwarf::FormUnit form_unit;
  form_unit.version = unit->version;
  form_unit.offset_size = unit->offset_size;
  form_unit.address_size = unit->address_size;
  form_unit.offset = offset;
  form_unit.str = &s.str;
  form_unit.line_str = &s.line_str;
  Cursor d{c.begin, c.p, unit_end};
  std::vector<int> parents;
  while (d.ok && d.p < d.end) {
    const uint64_t die_offset = static_cast<uint64_t>(d.p - d.begin);
    const uint64_t code = d.uleb();
    if (code == 0) {
      if (!parents.empty()) parents.pop_back();
      continue;
    }
    auto found = abbrevs.find(code);
    if (found == abbrevs.end()) return nullptr;
    const Abbrev& ab = found->second;
    Die die;
    die.offset = die_offset;
    die.tag = ab.tag;
    die.parent = parents.empty() ? -1 : parents.back();
    for (const AbbrevAttr& attr : ab.attrs) {
      uint16_t form = attr.form;
      if (form == 0x16) form = static_cast<uint16_t>(d.uleb());  // DW_FORM_indirect
      using K = dwarf::FormValue::Kind;
      const dwarf::FormValue v = dwarf::readForm(d, form, form_unit, attr.implicit_const);
      if (v.kind == K::Unsupported) return nullptr;
      const uint64_t u = v.u;
      const std::string& text = v.text;
      const bool is_text = v.kind == K::Text, is_addr = v.kind == K::Address;
      const bool is_ref = v.kind == K::Ref || v.kind == K::RefAddr;
      // The DWARF 5 index forms (clang's default): followed in a unit DIE only, for its
      // address ranges; a unit whose other DIEs use them is not named from DWARF.
      const bool is_index = v.kind == K::StringIndex || v.kind == K::OtherIndex;
      if (v.kind == K::RefAddr)
        die.foreign_ref |= attr.at == AT_type || attr.at == AT_specification || attr.at == AT_abstract_origin;
      if (v.kind == K::AltRef) die.foreign_ref = true;
      if (is_index && !unit_die_only) return nullptr;
      switch (attr.at) {
        case AT_name: if (is_text) die.name = text; break;
        case AT_linkage_name: case AT_MIPS_linkage_name: if (is_text) die.linkage = text; break;
        case AT_specification: if (is_ref) die.specification = u; break;
        case AT_abstract_origin: if (is_ref) die.origin = u; break;
        case AT_type: if (is_ref) die.type = u; break;
        case AT_low_pc: if (is_addr || is_index) { die.has_low = true; die.low = u; die.low_is_index = is_index; } break;
        case AT_high_pc: die.has_high = true; die.high = u; die.high_is_offset = !is_addr; break;
        case AT_ranges: die.has_ranges = true; die.ranges = u; die.ranges_is_index = is_index; break;
        case AT_addr_base: unit->addr_base = u; break;
        case AT_rnglists_base: unit->rnglists_base = u; break;
        case AT_artificial: die.artificial = u != 0; break;
        case AT_declaration: die.declaration = u != 0; break;
        default: break;
      }
    }
    if (!d.ok) return nullptr;
    const int index = static_cast<int>(unit->dies.size());
    if (die.parent >= 0) unit->dies[die.parent].children.push_back(index);
    if (die.tag == TAG_compile_unit && die.has_low) {
      if (die.low_is_index) {
        die.low = addressAt(s, *unit, die.low);
        die.low_is_index = false;
      }
      unit->base = die.low;
    }
    unit->by_offset[die_offset] = index;
    unit->dies.push_back(std::move(die));
    if (unit_die_only) return unit;
    if (ab.children) parents.push_back(index);
  }
  return d.ok ? std::move(unit) : nullptr;
}

// The [low, high) ranges of a DIE, from low/high_pc or DW_AT_ranges.
std::vector<std::pair<uint64_t, uint64_t>> rangesOf(const DwarfSections& s, const Unit& unit, const Die& die) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (die.has_low && die.has_high) {
    const uint64_t low = die.low_is_index ? addressAt(s, unit, die.low) : die.low;
    out.emplace_back(low, die.high_is_offset ? low + die.high : die.high);
    return out;
  }
  if (!die.has_ranges) return out;
  const int as = unit.address_size;
  uint64_t base = unit.base;
  if (unit.version >= 5) {
    Cursor r{s.rnglists.data(), s.rnglists.data(), s.rnglists.data() + s.rnglists.size()};
    if (die.ranges_is_index) {  // DW_FORM_rnglistx: an entry of the offset table at rnglists_base
      r.seek(unit.rnglists_base + die.ranges * unit.offset_size);
      r.seek(unit.rnglists_base + r.fixed(unit.offset_size));
    } else {
      r.seek(die.ranges);
    }
    for (int n = 0; r.ok && n < 4096; ++n) {
      const uint8_t kind = static_cast<uint8_t>(r.fixed(1));
      if (kind == 0) break;  // DW_RLE_end_of_list
      if (kind == 1) {       // base_addressx
        base = addressAt(s, unit, r.uleb());
      } else if (kind == 2) {  // startx_endx
        uint64_t a = addressAt(s, unit, r.uleb()), b = addressAt(s, unit, r.uleb());
        out.emplace_back(a, b);
      } else if (kind == 3) {  // startx_length
        uint64_t a = addressAt(s, unit, r.uleb()), len = r.uleb();
        out.emplace_back(a, a + len);
      } else if (kind == 4) {  // offset_pair
        uint64_t a = r.uleb(), b = r.uleb();
        out.emplace_back(base + a, base + b);
      } else if (kind == 5) {  // base_address
        base = r.fixed(as);
      } else if (kind == 6) {  // start_end
        uint64_t a = r.fixed(as), b = r.fixed(as);
        out.emplace_back(a, b);
      } else if (kind == 7) {  // start_length
        uint64_t a = r.fixed(as), len = r.uleb();
        out.emplace_back(a, a + len);
      } else {
        return {};  // not a DWARF 5 range list entry: malformed
      }
    }
  } else {
    Cursor r{s.ranges.data(), s.ranges.data(), s.ranges.data() + s.ranges.size()};
    r.seek(die.ranges);
    const uint64_t max = as == 8 ? UINT64_MAX : 0xffffffffull;
    for (int n = 0; r.ok && n < 4096; ++n) {
      uint64_t a = r.fixed(as), b = r.fixed(as);
      if (a == 0 && b == 0) break;
      if (a == max) {
        base = b;
        continue;
      }
      out.emplace_back(base + a, base + b);
    }
  }
  return out;
}

// GDB's C++ names for DIEs (dwarf2_full_name, dwarf2_physname, c_print_type), or nullopt when a
// DIE uses something this does not follow.
class Namer {
 public:
  explicit Namer(const Unit& unit) : unit_(unit) {}

  // The die a name comes from: its specification or abstract origin.
  const Die* declaration(const Die& die) const {
    const Die* d = &die;
    for (int hops = 0; hops < 8; ++hops) {
      uint64_t next = d->specification ? d->specification : d->origin;
      if (!next) break;
      const Die* n = unit_.at(next);
      if (!n || d->foreign_ref) return nullptr;
      d = n;
    }
    return d;
  }
  std::string linkageName(const Die& die) const {
    const Die* d = &die;
    for (int hops = 0; d && hops < 8; ++hops) {
      if (!d->linkage.empty()) return d->linkage;
      uint64_t next = d->specification ? d->specification : d->origin;
      d = next ? unit_.at(next) : nullptr;
    }
    return "";
  }

  // The enclosing scopes of a DIE ("ns::(anonymous namespace)::Class::").
  std::optional<std::string> prefix(const Die& die) const {
    std::string out;
    for (int p = die.parent, hops = 0; p >= 0 && hops < 64; p = unit_.dies[p].parent, ++hops) {
      const Die& scope = unit_.dies[p];
      if (scope.tag == TAG_compile_unit) break;
      if (scope.tag == TAG_namespace) {
        out = (scope.name.empty() ? std::string("(anonymous namespace)") : scope.name) + "::" + out;
      } else if (scope.tag == TAG_class_type || scope.tag == TAG_structure_type || scope.tag == TAG_union_type) {
        auto name = fullName(scope);
        if (!name) return std::nullopt;
        return *name + "::" + out;
      } else {
        return std::nullopt;  // a local class, a function scope: not followed
      }
    }
    return out;
  }

  // dwarf2_full_name of a named type or namespace-scope entity: canonical when GDB's parser
  // takes it.
  std::optional<std::string> fullName(const Die& die) const {
    const Die* decl = declaration(die);
    if (!decl || decl->name.empty()) return std::nullopt;
    auto scope = prefix(*decl);
    if (!scope) return std::nullopt;
    return canonical(*scope + decl->name);
  }

  // c_print_type(type, "") as GDB prints a parameter's type.
  std::optional<std::string> typeName(uint64_t offset, int depth = 0) const {
    if (depth > 16) return std::nullopt;
    if (offset == 0) return std::string("void");
    const Die* t = unit_.at(offset);
    if (!t || t->foreign_ref) return std::nullopt;
    switch (t->tag) {
      case TAG_base_type:
      case TAG_unspecified_type:
        if (t->name.empty()) return std::nullopt;
        return t->name;
      case TAG_typedef:
      case TAG_class_type:
      case TAG_structure_type:
      case TAG_union_type:
      case TAG_enumeration_type:
        return fullName(*t);
      case TAG_const_type:
      case TAG_volatile_type: {
        const char* q = t->tag == TAG_const_type ? "const" : "volatile";
        auto inner = typeName(t->type, depth + 1);
        if (!inner) return std::nullopt;
        const Die* target = t->type ? unit_.at(t->type) : nullptr;
        if (target && (target->tag == TAG_pointer_type || target->tag == TAG_reference_type ||
                       target->tag == TAG_rvalue_reference_type))
          return *inner + " " + q;  // "char * const"
        return std::string(q) + " " + *inner;
      }
      case TAG_pointer_type:
      case TAG_reference_type:
      case TAG_rvalue_reference_type: {
        const Die* target = t->type ? unit_.at(t->type) : nullptr;
        if (target && (target->tag == TAG_subroutine_type || target->tag == TAG_array_type)) return std::nullopt;
        auto inner = typeName(t->type, depth + 1);
        if (!inner) return std::nullopt;
        const char* op = t->tag == TAG_pointer_type ? "*" : t->tag == TAG_reference_type ? "&" : "&&";
        const bool declarator = target && (target->tag == TAG_pointer_type || target->tag == TAG_reference_type ||
                                           target->tag == TAG_rvalue_reference_type);
        return *inner + (declarator ? "" : " ") + op;  // "T *", "T **", "T *&"
      }
      default:
        return std::nullopt;  // function types, arrays, pointers to members: not followed
    }
  }

  // dwarf2_physname of a subprogram.
  std::optional<std::string> functionName(const Die& die) const {
    const std::string linkage = linkageName(die);
    if (linkage.rfind("_Z", 0) == 0) return gdbDemangleFunction(linkage.c_str());
    const Die* decl = declaration(die);
    if (!decl || decl->name.empty()) return std::nullopt;
    for (int child : decl->children)
      if (unit_.dies[child].tag == TAG_template_type_param || unit_.dies[child].tag == TAG_template_value_param)
        if (decl->name.find('<') == std::string::npos) return std::nullopt;  // GDB would add the arguments
    auto scope = prefix(*decl);
    if (!scope) return std::nullopt;
    // The parameters of the definition (c_type_print_args: artificial ones skipped, "void" for none).
    std::string params;
    bool any = false, const_this = false;
    for (int child : die.children) {
      const Die& p = unit_.dies[child];
      if (p.tag == TAG_GNU_formal_parameter_pack || p.tag == TAG_unspecified_parameters) return std::nullopt;
      if (p.tag != TAG_formal_parameter) continue;
      const Die* pd = declaration(p);
      const uint64_t type = p.type ? p.type : (pd ? pd->type : 0);
      const bool artificial = p.artificial || (pd && pd->artificial);
      if (artificial) {
        // `this`: a pointer to a const class makes a const method.
        const Die* ptr = unit_.at(type);
        const Die* pointee = ptr ? unit_.at(ptr->type) : nullptr;
        const_this = pointee && pointee->tag == TAG_const_type;
        continue;
      }
      auto name = typeName(type);
      if (!name) return std::nullopt;
      params += (any ? ", " : "") + *name;
      any = true;
    }
    return canonical(*scope + decl->name + "(" + (any ? params : "void") + ")" + (const_this ? " const" : ""));
  }

 private:
  static std::string canonical(const std::string& name) {
    return gdbCanonicalizes(name) ? gdbCanonicalSpelling(name) : name;
  }
  const Unit& unit_;
};

}  // namespace

std::vector<dwarf::Arange> compileUnitRanges(const DwarfSections& s) {
  std::vector<dwarf::Arange> ranges = dwarf::readAranges(s.aranges);
  std::unordered_set<uint64_t> listed;
  for (const dwarf::Arange& r : ranges) listed.insert(r.unit_offset);
  Cursor c{s.info.data(), s.info.data(), s.info.data() + s.info.size()};
  for (int n = 0; c.ok && c.p < c.end && n < 1'000'000; ++n) {  // each unit header: its length
    const uint64_t offset = static_cast<uint64_t>(c.p - c.begin);
    uint64_t length = c.fixed(4);
    if (length == 0xffffffff) length = c.fixed(8);
    c.skip(length);
    if (!c.ok || listed.count(offset)) continue;
    const auto unit = parseUnit(s, offset, /*unit_die_only=*/true);
    if (!unit || unit->dies.empty()) continue;
    for (const auto& [low, high] : rangesOf(s, *unit, unit->dies[0]))
      if (low < high) ranges.push_back({low, high, offset});
  }
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

GdbDwarfNames::GdbDwarfNames(DwarfSections sections) : s_(std::move(sections)) {
  unit_ranges_ = compileUnitRanges(s_);  // which unit holds an address
}

GdbDwarfNames::~GdbDwarfNames() = default;

const GdbDwarfNames::Unit* GdbDwarfNames::unitAt(uint64_t unit_offset) const {
  auto it = units_.find(unit_offset);
  if (it == units_.end()) it = units_.emplace(unit_offset, parseUnit(s_, unit_offset)).first;
  return it->second.get();
}

GdbDwarfNames::Answer GdbDwarfNames::functionAt(uint64_t pc) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Answer answer;
  const dwarf::Arange* range = dwarf::arangeAt(unit_ranges_, pc);
  const Unit* unit = range ? unitAt(range->unit_offset) : nullptr;
  if (!unit) return answer;  // Unknown
  Namer namer(*unit);
  for (const Die& die : unit->dies) {
    if (die.tag != TAG_subprogram || die.declaration) continue;
    for (const auto& [low, high] : rangesOf(s_, *unit, die)) {
      if (pc < low || pc >= high) continue;
      if (auto name = namer.functionName(die)) {
        answer.found = Found::Name;
        answer.name = *name;
      }
      return answer;  // a name, or Unknown when its DWARF is not followed
    }
  }
  answer.found = Found::NoFunction;
  return answer;
}

}  // namespace dscope::lldb_plugin
