#include "target/Symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <tuple>

namespace dscope::inspect {

namespace {

// libstdc++'s __cxa_demangle is libiberty's demangler, the one GDB uses.
std::string demangled(const char* name) {
  int status = 0;
  char* text = std::strncmp(name, "_Z", 2) == 0 ? abi::__cxa_demangle(name, nullptr, nullptr, &status) : nullptr;
  std::string out = status == 0 && text ? text : name;
  std::free(text);
  return out;
}

bool isIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Index of the '(' that opens the parameter list closed by the last ')' of s, or npos.
size_t parameterListStart(const std::string& s) {
  size_t close = s.rfind(')');
  if (close == std::string::npos) return std::string::npos;
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (s[i] == ')') ++depth;
    if (s[i] == '(' && --depth == 0) return i;
  }
  return std::string::npos;
}

// The position just past "operator<symbol>" when s[i..] starts one, else i. The longest
// operator token is taken: "operator+<char>" is operator+ with a template argument list.
size_t skipOperator(const std::string& s, size_t i) {
  static const char kWord[] = "operator";
  static const char* const kTokens[] = {"->*", "<<=", ">>=", "<=>", "()", "[]", "<<", ">>", "<=", ">=", "==", "!=",
                                        "&&", "||", "++", "--", "->", "+=", "-=", "*=", "/=", "%=", "^=", "&=",
                                        "|=", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", ","};
  if (s.compare(i, sizeof kWord - 1, kWord) != 0) return i;
  if (i > 0 && isIdentifierChar(s[i - 1])) return i;
  size_t j = i + sizeof kWord - 1;
  if (j < s.size() && isIdentifierChar(s[j])) return i;  // "operators"
  for (const char* token : kTokens)
    if (s.compare(j, std::strlen(token), token) == 0) return j + std::strlen(token);
  return j;
}

// Position of the last space of s outside any <...> or (...), operator names skipped, or npos.
size_t lastTopLevelSpace(const std::string& s) {
  size_t last = std::string::npos;
  int depth = 0;
  for (size_t i = 0; i < s.size();) {
    if (size_t after = skipOperator(s, i); after != i) {
      i = after;
      continue;
    }
    char c = s[i];
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
    if (c == ' ' && depth == 0) last = i;
    ++i;
  }
  return last;
}

// One address range of a concrete function's code (a hot/cold split function has two), and where
// its DW_TAG_subprogram is.
struct FunctionRange {
  Dwarf_Addr low, high;
  Dwarf_Off die;
};

// A module's ELF symbols that dwfl_module_addrinfo may answer with (named, defined, neither a
// section, a file nor a TLS symbol), indexed by address so that symbolAt finds an address's
// candidates without libdwfl's walk of the whole table.
struct SymbolIndex {
  struct Sized {
    uint64_t low, high;  // [st_value, st_value + st_size)
    int ndx;             // index in the module's symbol table: libdwfl prefers the first of equals
    int binding;         // libdwfl's preference: global 3, weak 2, local 1, other 0
    bool global;         // searched in libdwfl's first pass (dwfl_module_getsymtab_first_global)
  };
  std::vector<Sized> sized;              // sorted by low
  std::vector<uint64_t> reach;           // reach[i]: the largest high of sized[0..i]
  std::vector<uint64_t> sizeless;        // the values of symbols without a size, sorted
  std::vector<uint64_t> sizeless_global; // the same, global ones only
};

// One module file, opened once: its ELF symbols and DWARF at the file's own addresses.
struct ModuleFile {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  uint64_t low = 0, high = 0;  // the file's address range (its first byte's address is `low`)
  // Every concrete function's ranges, sorted by low: made on the first lookup, kept with the file
  // (a walk of every unit's DIEs per address cost 9 ms per op-table in the catalogue).
  mutable std::optional<std::vector<FunctionRange>> functions;
  // functionName's answers by DIE offset: naming a function without a linkage name finds its
  // scopes by a walk from its unit's root (dwarf_getscopes_die), for it and every parameter type.
  mutable std::unordered_map<Dwarf_Off, std::string> names;
  // describeIn's answers by file address: libdwfl finds an ELF symbol by a walk of the whole
  // symbol table (33 000 in libtorch_cpu's .dynsym), and an op-table names the same kernels again.
  mutable std::unordered_map<uint64_t, std::string> described;
  // The function starts .eh_frame_hdr's search table lists (every FDE's initial location), sorted:
  // where a function without a symbol or DWARF begins (libtorch's anonymous kernels).
  mutable std::optional<std::vector<uint64_t>> fde_starts;
  // The ELF symbols symbolAt looks among, made on its first use (SymbolIndex).
  mutable std::optional<SymbolIndex> symbols;
  // Its PT_LOAD segments' file address ranges and flags, and its PT_GNU_RELRO ranges (flags 0),
  // made on first use: naming a kernel checks three pointers' segments.
  struct Segment {
    uint64_t low, high;
    uint32_t flags;
  };
  mutable std::optional<std::vector<Segment>> segments;
  // tailJumpTarget's answers by file address (0: no jump there).
  mutable std::unordered_map<uint64_t, uint64_t> jumps;
  ~ModuleFile() {
    if (dwfl) dwfl_end(dwfl);
  }
};

// A module's separate debug file, from this machine only: the one its build-id names under
// /usr/lib/debug/.build-id (where Debian's -dbgsym packages put them). dwfl_standard_find_debuginfo
// would ask the debuginfod servers DEBUGINFOD_URLS names as its last resort (for libtorch, which
// has no .symtab, on every lookup's first use), waiting up to 90 s a file for one that does not
// answer, inside the user's GDB or LLDB: the library never asks a network.
int findLocalDebuginfo(Dwfl_Module* module, void** userdata, const char* name, Dwarf_Addr base, const char* file,
                       const char* debuglink, GElf_Word crc, char** debuginfo_file) {
  return dwfl_build_id_find_debuginfo(module, userdata, name, base, file, debuglink, crc, debuginfo_file);
}

const Dwfl_Callbacks kCallbacks = {
    .find_elf = nullptr,
    .find_debuginfo = findLocalDebuginfo,  // the file's own DWARF, or a separate debug file
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

std::unique_ptr<ModuleFile> openModule(const std::string& path) {
  auto m = std::make_unique<ModuleFile>();
  m->dwfl = dwfl_begin(&kCallbacks);
  if (!m->dwfl) return nullptr;
  dwfl_report_begin(m->dwfl);
  // Base 0 plus the first segment's address: the module keeps the addresses its file states.
  m->module = dwfl_report_elf(m->dwfl, path.c_str(), path.c_str(), -1, 0, true);
  dwfl_report_end(m->dwfl, nullptr, nullptr);
  if (!m->module) return nullptr;
  Dwarf_Addr low = 0, high = 0;
  dwfl_module_info(m->module, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
  m->low = low;
  m->high = high;
  return m;
}

// Held while a module file is opened or read: libdw's lookups are not thread-safe.
std::mutex symbolizer_mutex;

// recheckModuleFiles' count of commands: a path's answer checked under another is checked again.
std::atomic<uint64_t> module_check_epoch{1};

// The module file at path, opened on first use and kept; null when it cannot be read. A file
// rebuilt in place (another size or mtime) is opened again, seen at the first use in a command.
const ModuleFile* moduleFile(const std::string& path) {
  static std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, std::unique_ptr<ModuleFile>> files;
  static std::unordered_map<std::string, std::pair<uint64_t, const ModuleFile*>> checked;  // by path
  const uint64_t epoch = module_check_epoch.load();
  if (auto at = checked.find(path); at != checked.end() && at->second.first == epoch) return at->second.second;
  struct stat st {};
  const ModuleFile* found = nullptr;
  if (::stat(path.c_str(), &st) == 0) {
    const auto key = std::make_tuple(path, static_cast<int64_t>(st.st_size), static_cast<int64_t>(st.st_mtim.tv_sec),
                                     static_cast<int64_t>(st.st_mtim.tv_nsec));
    auto it = files.find(key);
    if (it == files.end()) it = files.emplace(key, openModule(path)).first;
    found = it->second.get();
  }
  checked[path] = {epoch, found};
  return found;
}

int bindingRank(const GElf_Sym& sym) {
  switch (GELF_ST_BIND(sym.st_info)) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
  }
}

SymbolIndex indexSymbols(const ModuleFile& m) {
  SymbolIndex index;
  const int count = dwfl_module_getsymtab(m.module);
  const int first_global = dwfl_module_getsymtab_first_global(m.module);
  for (int i = 1; i < count; ++i) {  // entry 0 is the null symbol; libdwfl skips it too
    GElf_Sym sym;
    GElf_Addr value = 0;
    const char* name = dwfl_module_getsym_info(m.module, i, &sym, &value, nullptr, nullptr, nullptr);
    const int type = GELF_ST_TYPE(sym.st_info);
    if (!name || !*name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || type == STT_TLS)
      continue;
    const bool global = first_global <= 0 || i >= first_global;  // 0: a .dynsym from the phdrs, one pass
    if (sym.st_size) {
      index.sized.push_back({value, value + sym.st_size, i, bindingRank(sym), global});
    } else {
      index.sizeless.push_back(value);
      if (global) index.sizeless_global.push_back(value);
    }
  }
  std::sort(index.sized.begin(), index.sized.end(),
            [](const SymbolIndex::Sized& a, const SymbolIndex::Sized& b) { return a.low < b.low; });
  uint64_t reach = 0;
  for (const auto& s : index.sized) index.reach.push_back(reach = std::max(reach, s.high));
  std::sort(index.sizeless.begin(), index.sizeless.end());
  std::sort(index.sizeless_global.begin(), index.sizeless_global.end());
  return index;
}

// The ELF symbol dwfl_module_addrinfo names at the module address addr, with addr's offset in it;
// null when it names none. libdwfl finds it by a walk of the whole symbol table for every address
// (35 000 symbols in libtorch_cpu: most of an op-table's time); this looks only among the symbols
// whose range holds addr, by libdwfl's own rules (elfutils' __libdwfl_addrsym): global symbols
// first, then local ones; the range starting closest below addr, or a better binding; at one start
// the smaller size at no worse binding; else the first in the table. Symbols without a size (assembly
// labels) follow rules of their own (their section, the end of every symbol below addr): where one
// could be the answer, libdwfl is asked.
const char* symbolAt(const ModuleFile& m, uint64_t addr, GElf_Off* offset) {
  if (!m.symbols) m.symbols = indexSymbols(m);
  const SymbolIndex& index = *m.symbols;
  auto ask_libdwfl = [&] {
    GElf_Sym sym;
    return dwfl_module_addrinfo(m.module, addr, offset, &sym, nullptr, nullptr, nullptr);
  };
  // Every sized symbol holding addr, in table order; bounded (a pathological table is left to libdwfl).
  std::vector<const SymbolIndex::Sized*> holding;
  auto end = std::upper_bound(index.sized.begin(), index.sized.end(), addr,
                              [](uint64_t a, const SymbolIndex::Sized& s) { return a < s.low; });
  uint64_t below_end = 0;  // the largest end of a symbol starting at or below addr
  for (auto i = end - index.sized.begin(); i-- > 0 && index.reach[i] > addr;) {
    if (end - index.sized.begin() - i > 4096) return ask_libdwfl();
    if (index.sized[i].high > addr) holding.push_back(&index.sized[i]);
  }
  if (end != index.sized.begin()) below_end = index.reach[end - index.sized.begin() - 1];
  std::sort(holding.begin(), holding.end(), [](auto* a, auto* b) { return a->ndx < b->ndx; });
  auto best_of = [&](bool global) -> const SymbolIndex::Sized* {
    const SymbolIndex::Sized* best = nullptr;
    for (const auto* s : holding) {
      if (s->global != global) continue;
      if (!best || best->low < s->low || best->binding < s->binding)
        best = s;
      else if (best->low == s->low && best->high - best->low > s->high - s->low && best->binding <= s->binding)
        best = s;
    }
    return best;
  };
  auto any_in = [](const std::vector<uint64_t>& values, uint64_t low, uint64_t high) {  // one in [low, high]
    auto it = std::lower_bound(values.begin(), values.end(), low);
    return it != values.end() && *it <= high;
  };
  const SymbolIndex::Sized* best = best_of(true);
  if (!best) {
    if (any_in(index.sizeless_global, addr, addr)) return ask_libdwfl();  // libdwfl then skips the locals
    best = best_of(false);
  }
  if (!best) {
    // A sizeless symbol is the answer only at or above the end of every symbol below addr.
    if (any_in(index.sizeless, below_end, addr)) return ask_libdwfl();
    return nullptr;
  }
  GElf_Sym sym;
  GElf_Addr value = 0;
  const char* name = dwfl_module_getsym_info(m.module, best->ndx, &sym, &value, nullptr, nullptr, nullptr);
  *offset = addr - best->low;
  return name;
}

std::string attributeString(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  const char* s = dwarf_attr_integrate(die, name, &attr) ? dwarf_formstring(&attr) : nullptr;
  return s ? s : "";
}

// "ns::Class::" for a DIE declared in namespace ns, class Class; "(anonymous namespace)::" for
// an unnamed namespace.
std::string scopePrefix(Dwarf_Die* die) {
  std::string prefix;
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes_die(die, &scopes);
  for (int i = 1; i < n; ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
        tag != DW_TAG_union_type)
      continue;
    const char* scope = dwarf_diename(&scopes[i]);
    prefix = std::string(scope ? scope : tag == DW_TAG_namespace ? "(anonymous namespace)" : "<unnamed>") + "::" + prefix;
  }
  std::free(scopes);
  return prefix;
}

// GCC's names of the integer types ("long unsigned int") as GDB's canonical C++ spelling has them
// ("unsigned long"), wherever they stand as whole words.
std::string canonicalIntegers(std::string s) {
  static const std::pair<const char*, const char*> kIntegers[] = {
      {"long long unsigned int", "unsigned long long"}, {"long long int", "long long"},
      {"long unsigned int", "unsigned long"}, {"short unsigned int", "unsigned short"},
      {"long int", "long"}, {"short int", "short"}};
  for (const auto& [gcc, canonical] : kIntegers) {
    const size_t n = std::strlen(gcc);
    for (size_t at = s.find(gcc); at != std::string::npos; at = s.find(gcc, at)) {
      const bool whole = (at == 0 || !isIdentifierChar(s[at - 1])) && (at + n == s.size() || !isIdentifierChar(s[at + n]));
      if (whole) s.replace(at, n, canonical);
      at += whole ? std::strlen(canonical) : n;
    }
  }
  return s;
}

// A type's C++ name in GDB's canonical spelling ("char const*", "unsigned long"), for the
// parameter list of a function the DWARF gives no linkage name; "?" for what it does not spell.
std::string typeName(Dwarf_Die* type, int depth = 0) {
  Dwarf_Attribute attr;
  Dwarf_Die inner;
  const bool has_inner = dwarf_formref_die(dwarf_attr_integrate(type, DW_AT_type, &attr), &inner) != nullptr;
  auto of = [&](const char* suffix) { return (has_inner ? typeName(&inner, depth + 1) : "void") + suffix; };
  if (depth > 16) return "?";
  switch (dwarf_tag(type)) {
    case DW_TAG_pointer_type: return of("*");
    case DW_TAG_reference_type: return of("&");
    case DW_TAG_rvalue_reference_type: return of("&&");
    case DW_TAG_const_type: return of(" const");
    case DW_TAG_volatile_type: return of(" volatile");
    case DW_TAG_base_type: {
      const char* name = dwarf_diename(type);
      return name ? canonicalIntegers(name) : "?";
    }
    default: {
      // A named type: its scopes (namespaces, classes) and its name.
      const char* name = dwarf_diename(type);
      return name ? scopePrefix(type) + canonicalIntegers(name) : "?";  // "std::optional<long int>" too
    }
  }
}

// "(int, char**)": a function's parameter types, `this` left out (" const" after the list when
// it points to const).
std::string parameterList(Dwarf_Die* function) {
  std::string list, suffix;
  Dwarf_Die child;
  if (dwarf_child(function, &child) == 0) {
    do {
      Dwarf_Attribute attr;
      Dwarf_Die type;
      if (dwarf_tag(&child) == DW_TAG_unspecified_parameters) list += std::string(list.empty() ? "" : ", ") + "...";
      if (dwarf_tag(&child) != DW_TAG_formal_parameter) continue;
      if (dwarf_attr_integrate(&child, DW_AT_artificial, &attr)) {  // `this`: a const member function
        if (dwarf_formref_die(dwarf_attr_integrate(&child, DW_AT_type, &attr), &type) &&
            typeName(&type).ends_with(" const* const"))
          suffix = " const";
        continue;
      }
      const bool typed = dwarf_formref_die(dwarf_attr_integrate(&child, DW_AT_type, &attr), &type) != nullptr;
      list += std::string(list.empty() ? "" : ", ") + (typed ? typeName(&type) : "?");
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  return "(" + list + ")" + suffix;
}

// The DIE that declares a function: a definition outside its class or namespace points to it
// (DW_AT_specification), an out-of-line copy of an inline function to its abstract origin.
Dwarf_Die declarationOf(Dwarf_Die* function) {
  Dwarf_Die die = *function;
  for (int hops = 0; hops < 4; ++hops) {
    Dwarf_Attribute attr;
    Dwarf_Die next;
    Dwarf_Attribute* ref = dwarf_attr(&die, DW_AT_specification, &attr);
    if (!ref) ref = dwarf_attr(&die, DW_AT_abstract_origin, &attr);
    if (!ref || !dwarf_formref_die(ref, &next)) break;
    die = next;
  }
  return die;
}

// The function's name as GDB prints it: its demangled linkage name; without one (GCC leaves it
// out for functions with internal linkage, and C and extern "C" functions have none), the name
// GDB builds from the DWARF: scopes, name and, in C++, the parameter types as declared
// ("std::string_view", not the demangler's expansion).
std::string nameOf(const ModuleFile& m, Dwarf_Die* function) {
  std::string linkage = attributeString(function, DW_AT_linkage_name);
  if (linkage.empty()) linkage = attributeString(function, DW_AT_MIPS_linkage_name);
  if (!linkage.empty()) return demangledFunctionName(linkage.c_str());
  const char* name = dwarf_diename(function);
  if (!name) return "";
  Dwarf_Die unit;
  const int language = dwarf_diecu(function, &unit, nullptr, nullptr) ? dwarf_srclang(&unit) : -1;
  const bool cxx = language == DW_LANG_C_plus_plus || language == DW_LANG_C_plus_plus_03 ||
                   language == DW_LANG_C_plus_plus_11 || language == DW_LANG_C_plus_plus_14;
  if (!cxx) return name;
  Dwarf_Die declaration = declarationOf(function);
  const std::string scope = scopePrefix(&declaration);
  // A lambda's class has no name in the DWARF; only its mangled symbol spells it
  // ("main::{lambda(int)#1}::operator()(int) const").
  if (scope.find("<unnamed>") != std::string::npos)
    if (Dwarf_Addr entry = 0; dwarf_entrypc(function, &entry) == 0) {
      GElf_Off offset = 0;
      const char* symbol = symbolAt(m, entry, &offset);
      if (symbol && offset == 0 && std::strncmp(symbol, "_Z", 2) == 0) return demangledFunctionName(symbol);
    }
  return scope + name + parameterList(function);
}

std::string functionName(const ModuleFile& m, Dwarf_Die* function) {
  const Dwarf_Off offset = dwarf_dieoffset(function);
  auto it = m.names.find(offset);
  if (it == m.names.end()) it = m.names.emplace(offset, nameOf(m, function)).first;
  return it->second;
}

// The concrete functions below `scope`, with their ranges: children of their unit, or (clang) of
// their namespace or class. Bounded: a unit has finitely many DIEs, and only scopes are entered.
// (dwarf_getfuncs skips clang's concrete copies of inline functions.)
void collectFunctions(Dwarf_Die* scope, std::vector<FunctionRange>& out, int depth = 0) {
  Dwarf_Die child;
  if (depth > 32 || dwarf_child(scope, &child) != 0) return;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_subprogram: {
        Dwarf_Addr base = 0, start = 0, end = 0;
        ptrdiff_t offset = 0;
        for (int n = 0; n < 64 && (offset = dwarf_ranges(&child, offset, &base, &start, &end)) > 0; ++n)
          if (start < end) out.push_back({start, end, dwarf_dieoffset(&child)});
        break;
      }
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
        collectFunctions(&child, out, depth + 1);
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The subprogram whose code holds the module address addr; *bias is what the module's DWARF
// addresses are offset by (addr - *bias is the DWARF's address).
bool findFunction(const ModuleFile& m, uint64_t addr, Dwarf_Die* found, Dwarf_Addr* bias) {
  Dwarf* dwarf = dwfl_module_getdwarf(m.module, bias);
  if (!dwarf) return false;
  const Dwarf_Addr pc = addr - *bias;
  if (!m.functions) {
    m.functions.emplace();
    Dwarf_Addr unit_bias = 0;
    for (Dwarf_Die* u = nullptr; (u = dwfl_module_nextcu(m.module, u, &unit_bias));)
      collectFunctions(u, *m.functions);
    std::sort(m.functions->begin(), m.functions->end(),
              [](const FunctionRange& a, const FunctionRange& b) { return a.low < b.low; });
  }
  // Concrete functions do not overlap: the range starting last at or below pc is the only one
  // that can hold it (a few more are looked at for ranges a linker left at address 0).
  auto it = std::upper_bound(m.functions->begin(), m.functions->end(), pc,
                             [](Dwarf_Addr a, const FunctionRange& r) { return a < r.low; });
  for (int n = 0; n < 8 && it != m.functions->begin(); ++n) {
    --it;
    if (pc < it->high) return dwarf_offdie(dwarf, it->die, found) != nullptr;
  }
  return false;
}

// The subprogram whose code holds the file address (the function that was called, not a call
// inlined into it; both parts of a hot/cold split function), named with its definition's file
// and line; "" without DWARF there. (dwarf_getscopes would not do: above an inlined call it
// lists the inlined function's own scopes, not the function it was inlined into.)
std::string describeFunction(const ModuleFile& m, uint64_t addr) {
  Dwarf_Addr bias = 0;
  Dwarf_Die function;
  if (!findFunction(m, addr, &function, &bias)) return "";
  std::string text = functionName(m, &function);
  int line = 0;
  const char* file = dwarf_decl_file(&function);
  if (!text.empty() && file && dwarf_decl_line(&function, &line) == 0 && line > 0)
    text += " at " + std::string(file) + ":" + std::to_string(line);
  return text;
}

// The function a call site below `scope` whose return address is `ret` calls (DWARF 5 and GNU
// call-site entries: GCC writes them at -O2 -g), searched in the scopes that hold ret - 1; "" when
// there is none. Bounded by the nesting depth.
std::string calledIn(const ModuleFile& m, Dwarf_Die* scope, Dwarf_Addr ret, int depth = 0) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(scope, &child) != 0) return "";
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) {
      Dwarf_Attribute return_attr, callee_attr;
      Dwarf_Addr at = 0;
      Dwarf_Attribute* return_pc = dwarf_attr(&child, DW_AT_call_return_pc, &return_attr);
      if (!return_pc) return_pc = dwarf_attr(&child, DW_AT_low_pc, &return_attr);  // GNU: the return address
      if (return_pc && dwarf_formaddr(return_pc, &at) == 0 && at == ret) {
        Dwarf_Attribute* callee = dwarf_attr(&child, DW_AT_call_origin, &callee_attr);
        if (!callee) callee = dwarf_attr(&child, DW_AT_abstract_origin, &callee_attr);
        Dwarf_Die origin;
        return callee && dwarf_formref_die(callee, &origin) ? functionName(m, &origin) : "";
      }
    } else if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) && dwarf_haspc(&child, ret - 1) == 1) {
      std::string called = calledIn(m, &child, ret, depth + 1);
      if (!called.empty()) return called;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return "";
}

// The calls inlined at pc inside `scope` (a function or an inlined call), outermost first, into
// chain: at each level the one inlined call (or lexical block, entered but not listed) holding pc.
// Bounded by the nesting depth.
void inlinedCalls(Dwarf_Die* scope, Dwarf_Addr pc, std::vector<Dwarf_Die>& chain, int depth = 0) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(scope, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) && dwarf_haspc(&child, pc) == 1) {
      if (tag == DW_TAG_inlined_subroutine) chain.push_back(child);
      inlinedCalls(&child, pc, chain, depth + 1);
      return;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The file address a function is entered at: its low_pc, or for one split into hot and cold parts
// (DW_AT_ranges) the start of the part that an ELF symbol other than a ".cold" clone names.
std::optional<uint64_t> entryOf(const ModuleFile& m, Dwarf_Die* function) {
  Dwarf_Addr entry = 0;
  if (dwarf_entrypc(function, &entry) == 0) return entry;
  Dwarf_Addr base = 0, start = 0, end = 0;
  ptrdiff_t offset = 0;
  for (int n = 0; n < 64 && (offset = dwarf_ranges(function, offset, &base, &start, &end)) > 0; ++n) {
    GElf_Off at = 0;
    const char* symbol = symbolAt(m, start, &at);
    if (symbol && at == 0 && !std::strstr(symbol, ".cold")) return start;
  }
  return std::nullopt;
}

// .eh_frame_hdr's search table (the PT_GNU_EH_FRAME segment): a version byte, the encodings of
// eh_frame_ptr, fde_count and the table, then the table's (initial location, FDE) pairs sorted by
// location. Read for the encodings every toolchain here writes (4-byte values, the table relative
// to the header: DW_EH_PE_datarel|sdata4); anything else gives no starts.
std::vector<uint64_t> readFdeStarts(const ModuleFile& m) {
  std::vector<uint64_t> starts;
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(m.module, &bias);
  size_t phnum = 0, file_size = 0;
  const char* file = elf ? elf_rawfile(elf, &file_size) : nullptr;
  if (!file || elf_getphdrnum(elf, &phnum) != 0) return starts;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_GNU_EH_FRAME) continue;
    if (ph.p_offset + ph.p_filesz > file_size || ph.p_filesz < 12) return starts;
    const auto* hdr = reinterpret_cast<const unsigned char*>(file + ph.p_offset);
    const bool four_byte_ptr = (hdr[1] & 0x0f) == DW_EH_PE_sdata4 || (hdr[1] & 0x0f) == DW_EH_PE_udata4;
    const bool four_byte_count = hdr[2] == DW_EH_PE_udata4 || hdr[2] == DW_EH_PE_sdata4;
    if (hdr[0] != 1 || !four_byte_ptr || !four_byte_count || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) return starts;
    uint32_t count = 0;
    std::memcpy(&count, hdr + 8, 4);
    if (12 + uint64_t{count} * 8 > ph.p_filesz) return starts;
    starts.reserve(count);
    for (uint32_t e = 0; e < count; ++e) {
      int32_t location = 0;
      std::memcpy(&location, hdr + 12 + e * 8, 4);
      starts.push_back(ph.p_vaddr + bias + static_cast<int64_t>(location));
    }
    std::sort(starts.begin(), starts.end());
    return starts;
  }
  return starts;
}

// The start of the FDE holding the address: the function it is in, when nothing else names it.
std::optional<uint64_t> fdeStart(const ModuleFile& m, uint64_t addr) {
  if (!m.fde_starts) m.fde_starts = readFdeStarts(m);
  auto it = std::upper_bound(m.fde_starts->begin(), m.fde_starts->end(), addr);
  if (it == m.fde_starts->begin()) return std::nullopt;
  return *--it;
}

FramePc functionsIn(const ModuleFile& m, uint64_t addr, bool return_address) {
  FramePc out;
  Dwarf_Addr bias = 0;
  Dwarf_Die function;
  if (findFunction(m, addr, &function, &bias)) {
    std::vector<Dwarf_Die> chain;
    inlinedCalls(&function, addr - bias, chain);
    for (auto call = chain.rbegin(); call != chain.rend(); ++call) out.names.push_back(functionName(m, &*call));
    out.names.push_back(functionName(m, &function));
    if (auto entry = entryOf(m, &function)) out.entry = *entry + bias;
    if (return_address) out.called = calledIn(m, &function, addr - bias + 1);
    return out;
  }
  GElf_Off offset = 0;
  const char* symbol = symbolAt(m, addr, &offset);
  if (!symbol || !*symbol) {
    if (auto start = fdeStart(m, addr)) out.entry = *start;  // a function with no name: where it begins
    return out;
  }
  out.names.push_back(demangledFunctionName(symbol));
  out.entry = addr - offset;
  return out;
}

// The ELF symbol holding the file address, as GDB's `info symbol` names it ("name + offset").
std::string describeSymbol(const ModuleFile& m, uint64_t addr) {
  GElf_Off offset = 0;
  const char* symbol = symbolAt(m, addr, &offset);
  if (!symbol || !*symbol) return "";
  std::string text = demangled(symbol);
  if (offset) text += " + " + std::to_string(offset);
  return text;
}

// A function with its definition's line, else the ELF symbol.
std::string describeIn(const ModuleFile& m, uint64_t addr) {
  std::string text = describeFunction(m, addr);
  return text.empty() ? describeSymbol(m, addr) : text;
}

}  // namespace

void recheckModuleFiles() { ++module_check_epoch; }

std::string demangledFunctionName(const char* name) {
  std::string s = demangled(name);
  // A template function's demangled name starts with its return type ("dscope::Tensor
  // ns::f<int>(int)"); its name then ends with '>'.
  size_t open = parameterListStart(s);
  if (open == std::string::npos || open == 0) return s;
  std::string head = s.substr(0, open);
  while (!head.empty() && head.back() == ' ') head.pop_back();
  if (head.empty() || head.back() != '>') return s;
  size_t space = lastTopLevelSpace(head);
  if (space == std::string::npos) return s;
  if (head.compare(space + 1, 9, "operator ") == 0) return s;  // a conversion operator has no return type
  return s.substr(space + 1);
}

namespace {

// The module file that `modules` map over addr, and where its first byte went (file addresses =
// addr - bias); null when none does. Modules do not overlap and each starts where its file's first
// byte is mapped, so only the one starting last at or below addr can hold it: one file is looked at
// (a Python process with torch maps 300+, and each look is a stat). Called with symbolizer_mutex held.
const ModuleFile* moduleHolding(const std::vector<ModuleMapping>& modules, uint64_t addr, uint64_t* bias) {
  const ModuleMapping* holder = nullptr;
  for (const auto& mapping : modules)
    if (!mapping.path.empty() && mapping.start <= addr && (!holder || mapping.start > holder->start)) holder = &mapping;
  const ModuleFile* m = holder ? moduleFile(holder->path) : nullptr;
  if (!m || holder->start < m->low) return nullptr;
  *bias = holder->start - m->low;
  return addr >= m->low + *bias && addr < m->high + *bias ? m : nullptr;
}

}  // namespace

std::string describeCodeAddress(const std::vector<ModuleMapping>& modules, uint64_t addr) {
  std::lock_guard<std::mutex> lock(symbolizer_mutex);
  uint64_t bias = 0;
  const ModuleFile* m = moduleHolding(modules, addr, &bias);
  if (!m) return "";
  auto [it, added] = m->described.try_emplace(addr - bias);
  if (added) it->second = describeIn(*m, addr - bias);
  return it->second;
}

FramePc functionsAt(const std::vector<ModuleMapping>& modules, uint64_t addr, bool return_address) {
  std::lock_guard<std::mutex> lock(symbolizer_mutex);
  uint64_t bias = 0;
  const ModuleFile* m = moduleHolding(modules, addr, &bias);
  if (!m) return {};
  FramePc at = functionsIn(*m, addr - bias, return_address);
  if (at.entry) at.entry += bias;
  return at;
}

namespace {

// A module file's PT_LOAD and PT_GNU_RELRO ranges (ModuleFile::segments; a RELRO range has flags 0).
std::vector<ModuleFile::Segment> segmentsOf(const ModuleFile& m) {
  std::vector<ModuleFile::Segment> out;
  Dwarf_Addr elf_bias = 0;
  Elf* elf = dwfl_module_getelf(m.module, &elf_bias);
  size_t count = 0;
  if (!elf || elf_getphdrnum(elf, &count) != 0) return out;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) && (ph.p_type == PT_LOAD || ph.p_type == PT_GNU_RELRO))
      out.push_back({ph.p_vaddr, ph.p_vaddr + ph.p_memsz, ph.p_type == PT_LOAD ? ph.p_flags : 0});
  }
  return out;
}

// The flags (PF_R/W/X) of the module segment holding addr, PF_R|PF_W made PF_R where PT_GNU_RELRO
// covers it; nullopt where no module holds it.
std::optional<uint32_t> segmentFlags(const std::vector<ModuleMapping>& modules, uint64_t addr) {
  std::lock_guard<std::mutex> lock(symbolizer_mutex);
  uint64_t bias = 0;
  const ModuleFile* m = moduleHolding(modules, addr, &bias);
  if (!m) return std::nullopt;
  if (!m->segments) m->segments = segmentsOf(*m);
  const uint64_t file_addr = addr - bias;
  std::optional<uint32_t> flags;
  bool relro = false;
  for (const auto& segment : *m->segments) {
    if (file_addr < segment.low || file_addr >= segment.high) continue;
    if (segment.flags) flags = segment.flags;
    else relro = true;
  }
  if (flags && relro) *flags &= ~static_cast<uint32_t>(PF_W);
  return flags;
}

}  // namespace

bool isReadOnlyData(const std::vector<ModuleMapping>& modules, uint64_t addr) {
  const auto flags = segmentFlags(modules, addr);
  return flags && !(*flags & (PF_W | PF_X));
}

bool isCode(const std::vector<ModuleMapping>& modules, uint64_t addr) {
  const auto flags = segmentFlags(modules, addr);
  return flags && (*flags & PF_X);
}

std::optional<uint64_t> tailJumpTarget(const std::vector<ModuleMapping>& modules, uint64_t addr) {
  constexpr size_t kMaxMoves = 4;
  std::lock_guard<std::mutex> lock(symbolizer_mutex);
  uint64_t bias = 0;
  const ModuleFile* m = moduleHolding(modules, addr, &bias);
  if (!m) return std::nullopt;
  auto [it, added] = m->jumps.try_emplace(addr - bias);
  if (!added) return it->second ? std::optional<uint64_t>(it->second + bias) : std::nullopt;
  Dwarf_Addr elf_bias = 0;
  Elf* elf = dwfl_module_getelf(m->module, &elf_bias);
  size_t count = 0, file_size = 0;
  if (!elf || elf_getphdrnum(elf, &count) != 0) return std::nullopt;
  // The file's bytes where libelf maps them: a kernel index asks for tens of thousands of
  // functions, and elfutils 0.188's elf_getdata_rawchunk keeps every chunk it made in a list it
  // searches first (quadratic: 1.1 s of CPU for libtorch_cpu's kernels).
  const char* file = elf_rawfile(elf, &file_size);
  const uint64_t file_addr = addr - bias;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    constexpr size_t kLength = 4 + 3 * kMaxMoves + 5;  // endbr64, the moves, jmp rel32
    if (file_addr < ph.p_vaddr || file_addr + kLength > ph.p_vaddr + ph.p_filesz) continue;
    const uint64_t offset = ph.p_offset + (file_addr - ph.p_vaddr);
    const unsigned char* code = nullptr;
    if (file) {
      if (offset + kLength > file_size) return std::nullopt;
      code = reinterpret_cast<const unsigned char*>(file + offset);
    } else {
      Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(offset), kLength, ELF_T_BYTE);
      if (!data || data->d_size < kLength) return std::nullopt;
      code = static_cast<const unsigned char*>(data->d_buf);
    }
    size_t at = 0;
    if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa) at = 4;  // endbr64
    // A trampoline may move arguments between registers first (make_boxed_function drops the key
    // set: mov %rcx,%rdx): `mov r64, r64`, a REX.W prefix, 89 or 8b, and a register-direct ModRM.
    for (size_t moves = 0; moves < kMaxMoves && (code[at] & 0xf8) == 0x48 && (code[at + 1] == 0x89 || code[at + 1] == 0x8b) &&
                           (code[at + 2] & 0xc0) == 0xc0;
         ++moves)
      at += 3;
    if (code[at] != 0xe9) return std::nullopt;
    int32_t rel = 0;
    std::memcpy(&rel, code + at + 1, sizeof rel);
    it->second = file_addr + at + 5 + static_cast<int64_t>(rel);
    return it->second + bias;
  }
  return std::nullopt;
}

std::string describeFileAddress(const std::string& path, uint64_t addr) {
  std::lock_guard<std::mutex> lock(symbolizer_mutex);
  const ModuleFile* m = moduleFile(path);
  return m && addr >= m->low && addr < m->high ? describeIn(*m, addr) : "";
}

}  // namespace dscope::inspect
