#include "source/c10/TorchSchema.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "target/Containers.h"

namespace dscope::inspect {

namespace {

// Bounds on what one schema may hold: more is corrupt memory, not a schema.
constexpr uint64_t kMaxArguments = 1024;
constexpr uint64_t kMaxListElements = 4096;
constexpr uint64_t kMaxAliasSets = 64;
constexpr uint64_t kMaxSymbols = 1u << 22;
constexpr int kMaxDepth = 16;  // types and values nest at most this deep

// c10::printQuotedString (inline in c10/util/StringUtil.h): C escapes, other unprintable bytes as three
// octal digits computed on the signed char, as c10 computes them.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '"': out += "\\\""; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      default:
        if (c > 0x1f && c < 0x7f) {
          out += c;
        } else {
          char buf[4] = "000";
          buf[2] = static_cast<char>(buf[2] + c % 8);
          c = static_cast<char>(c / 8);
          buf[1] = static_cast<char>(buf[1] + c % 8);
          c = static_cast<char>(c / 8);
          buf[0] = static_cast<char>(buf[0] + c);
          out += "\\" + std::string(buf);
        }
    }
  }
  return out + "\"";
}

// IValue's operator<< for a double in 1.13: an integral value below 1e10 as "2." (-0.0 too, as
// "0."; later versions print "-0."), anything else with max_digits10 (17) significant digits in
// the stream's default format (%g).
std::string doubleText(double d) {
  const int c = std::fpclassify(d);
  if ((c == FP_NORMAL || c == FP_ZERO) && std::abs(d) < 1e10) {
    const auto i = static_cast<int64_t>(d);
    if (static_cast<double>(i) == d) return std::to_string(i) + ".";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

class SchemaPrinter {
 public:
  explicit SchemaPrinter(const TorchView& tv)
      : mem_(tv.mem()),
        p_(tv.profile()),
        l_(tv.layout()),
        kind_{kind("OptionalType"), kind("ListType"), kind("DictType"), kind("TupleType"), kind("FutureType"),
              kind("RRefType"), kind("VarType"), kind("ClassType"), kind("StringType"), kind("IntType")},
        tag_{tag("None"), tag("Bool"), tag("Int"), tag("Double"), tag("String"), tag("GenericList")} {}

  std::string schema(uint64_t addr) const {
    const uint64_t name = addr + l_.FunctionSchema_name;
    std::string out = string(name + l_.OperatorName_name, "a schema's name");
    if (std::string overload = string(name + l_.OperatorName_overload_name, "a schema's name"); !overload.empty())
      out += "." + overload;
    out += "(";
    const auto args = vector(addr + l_.FunctionSchema_arguments, l_.sizeof_Argument, kMaxArguments, "a schema's arguments");
    bool seen_kwarg_only = false;
    for (size_t i = 0; i < args.size(); ++i) {
      if (i > 0) out += ", ";
      if (flag(args[i] + l_.Argument_kwarg_only) && !seen_kwarg_only) out += "*, ", seen_kwarg_only = true;
      out += argument(args[i]);
    }
    if (flag(addr + l_.FunctionSchema_is_vararg)) out += args.empty() ? "..." : ", ...";
    out += ") -> ";
    // One return prints bare unless it starts with '(' (a tuple type); none or several, and
    // varret, print in parentheses, except a lone "...".
    const auto rets = vector(addr + l_.FunctionSchema_returns, l_.sizeof_Argument, kMaxArguments, "a schema's returns");
    const bool varret = flag(addr + l_.FunctionSchema_is_varret);
    std::vector<std::string> shown;
    for (uint64_t r : rets) shown.push_back(argument(r));
    bool paren = !((rets.size() == 1 && !varret) || (rets.empty() && varret));
    if (rets.size() == 1 && !varret && !shown[0].empty() && shown[0][0] == '(') paren = true;
    std::string list = joined(shown, ", ");
    if (varret) list += rets.empty() ? "..." : ", ...";
    return out + (paren ? "(" + list + ")" : list);
  }

  // Each parameter's name and type (Type::str(), optional and list marks included, without alias
  // annotations and defaults): the schema's arguments, or its returns.
  std::vector<SchemaParameter> parameters(uint64_t addr, bool returns) const {
    std::vector<SchemaParameter> out;
    for (uint64_t arg : vector(addr + (returns ? l_.FunctionSchema_returns : l_.FunctionSchema_arguments),
                               l_.sizeof_Argument, kMaxArguments, "a schema's arguments"))
      out.push_back({string(arg + l_.Argument_name, "an argument's name"), typeText(typeAt(arg + l_.Argument_real_type), 0)});
    return out;
  }

  // The "alias analysis kind: " line's kind (toString(aliasAnalysis())), and whether it is unset
  // (printed " (default)").
  std::pair<std::string, bool> aliasAnalysis(uint64_t schema) const {
    const uint64_t kind = schema + l_.FunctionSchema_alias_kind;
    const auto set = optionalValue(kind, {l_.OptionalAliasKind_engaged, l_.OptionalAliasKind_payload});
    const uint64_t value = set ? mem_.read<uint8_t>(*set, "a schema") : l_.AliasAnalysisKind_unset;
    const std::string* name = p_.nameOf("AliasAnalysisKind", value);
    if (!name) fail("the alias analysis kind at " + hex(kind) + " is corrupt (" + std::to_string(value) + " is none of this build's)");
    return {*name, !set};
  }

 private:
  // The TypeKind and IValue tag values printed structurally, from the profile's name tables.
  struct Kinds { uint64_t optional, list, dict, tuple, future, rref, var, class_, string, int_; };
  struct Tags { uint64_t none, boolean, integer, real, string, list; };

  uint64_t kind(const char* name) const { return p_.valueNamed("TypeKind", name); }
  uint64_t tag(const char* name) const { return p_.valueNamed("IValueTag", name); }
  // A bool member: a byte that is 0 or 1, else corrupt memory (another byte would print, say, a
  // keyword-only '*' no schema has).
  bool flag(uint64_t addr) const {
    const uint8_t byte = mem_.read<uint8_t>(addr, "a schema");
    if (byte > 1) fail(corruptFlag(addr, byte));
    return byte != 0;
  }
  static std::string corruptFlag(uint64_t addr, uint64_t byte) {
    return "a schema flag at " + hex(addr) + " is corrupt (a bool holding " + std::to_string(byte) + ")";
  }
  // An optional member's value when it is engaged, its engaged flag checked as a bool member's.
  std::optional<uint64_t> optionalValue(uint64_t addr, const OptionalLayout& layout) const {
    return engagedValue(mem_, addr, layout, "a schema", [&](uint64_t byte) { return corruptFlag(addr + layout.engaged, byte); });
  }
  uint64_t pointer(uint64_t addr, const char* what) const { return mem_.readPointer(addr, what); }

  std::string string(uint64_t addr, const char* what) const { return readCppString(mem_, addr, what); }

  // The element addresses of a std::vector of element_size-byte elements, at most max of them.
  std::vector<uint64_t> vector(uint64_t addr, uint64_t element_size, uint64_t max, const char* what) const {
    return stdVectorElements(mem_, addr, stdVectorLayout(l_), element_size, max, what);
  }
  // Its [begin, end), checked as vector() checks it.
  std::pair<uint64_t, uint64_t> checkedVector(uint64_t addr, uint64_t element_size, uint64_t max, const char* what) const {
    return stdVectorRange(mem_, addr, stdVectorLayout(l_), element_size, max, what);
  }

  // The Type a TypePtr (or a vector element of them) points to.
  uint64_t typeAt(uint64_t type_ptr) const {
    const uint64_t type = pointer(type_ptr + l_.TypePtr_pointer, "a type pointer");
    if (!type) fail("a null type pointer at " + hex(type_ptr));
    return type;
  }
  uint64_t kindOf(uint64_t type) const { return mem_.read<uint32_t>(type + l_.Type_kind, "a type"); }

  // operator<<(std::ostream&, const Argument&): Type(alias)? name=default, with the real type.
  std::string argument(uint64_t arg) const {
    const uint64_t type = typeAt(arg + l_.Argument_real_type);
    const bool optional = kindOf(type) == kind_.optional;
    const uint64_t unopt = optional ? typeAt(type + l_.OptionalType_element) : type;
    const uint64_t alias = pointer(arg + l_.Argument_alias_info + l_.UniquePtr_pointer, "an argument");
    std::string out;
    if (kindOf(unopt) == kind_.list) {  // a sized list takes its size N from the argument
      out = typeText(typeAt(unopt + l_.ListType_element), 0);
      if (alias) {
        const auto contained = vector(alias + l_.AliasInfo_contained, l_.sizeof_AliasInfo, kMaxListElements, "an alias info");
        if (!contained.empty()) out += aliasText(contained[0]);
      }
      const auto n = optionalValue(arg + l_.Argument_N, {l_.OptionalInt32_engaged, l_.OptionalInt32_payload});
      out += "[" + (n ? std::to_string(mem_.read<int32_t>(*n, "an argument")) : "") + "]";
    } else {
      out = typeText(unopt, 0);
    }
    if (alias && !symbolSet(alias + l_.AliasInfo_before).empty()) out += aliasText(alias);
    if (optional) out += "?";
    if (std::string name = string(arg + l_.Argument_name, "an argument's name"); !name.empty()) out += " " + name;
    const auto default_value = optionalValue(arg + l_.Argument_default_value, {l_.OptionalIValue_engaged, l_.OptionalIValue_payload});
    if (!default_value) return out;
    const uint64_t value = *default_value;
    if ((kindOf(type) == kind_.string || kindOf(unopt) == kind_.string) && tagOf(value) == tag_.string)
      return out + "=" + quoted(stringValue(value));
    if (kindOf(type) == kind_.list && kindOf(typeAt(type + l_.ListType_element)) == kind_.int_) {
      // int[2] stride=1: an int list default of equal elements prints as one of them.
      const auto items = listItems(value);
      bool same = items.size() > 1;
      for (uint64_t item : items) same = same && intValue(item) == intValue(items[0]);
      if (same) return out + "=" + std::to_string(intValue(items[0]));
    }
    return out + "=" + valueText(value, 0);
  }

  // Type::str() of every kind a schema holds.
  std::string typeText(uint64_t type, int depth) const {
    if (depth > kMaxDepth) fail("a type at " + hex(type) + " nests too deep (corrupt memory)");
    const uint64_t k = kindOf(type);
    auto element = [&](uint64_t offset) { return typeText(typeAt(type + offset), depth + 1); };
    if (k == kind_.optional) return element(l_.OptionalType_element) + "?";
    if (k == kind_.list) return element(l_.ListType_element) + "[]";
    if (k == kind_.future) return "Future(" + element(l_.FutureType_element) + ")";
    if (k == kind_.rref) return "RRef(" + element(l_.RRefType_element) + ")";
    if (k == kind_.var) return string(type + l_.VarType_name, "a type variable's name");
    if (k == kind_.class_) {
      if (auto name = qualifiedName(type)) return *name;
      fail("a class type at " + hex(type) + " has no name");
    }
    if (k == kind_.dict || k == kind_.tuple) {
      const uint64_t field = k == kind_.dict ? l_.DictType_types : l_.TupleType_elements;
      const auto types = vector(type + field, l_.sizeof_TypePtr, kMaxListElements, "a type's elements");
      if (k == kind_.dict && types.size() != 2) fail("a Dict type at " + hex(type) + " has " + std::to_string(types.size()) + " types");
      std::vector<std::string> shown;
      for (uint64_t t : types) shown.push_back(typeText(typeAt(t), depth + 1));
      if (k == kind_.dict) return "Dict(" + shown[0] + ", " + shown[1] + ")";
      // A named tuple prints its name, other tuples their elements.
      if (pointer(type + l_.TupleType_schema + l_.SharedPtr_pointer, "a tuple type"))
        if (auto name = qualifiedName(type)) return *name;
      return "(" + joined(shown, ", ") + ")";
    }
    if (const std::string* fixed = p_.nameOf("TypeStr", k)) return *fixed;
    const std::string* name = p_.nameOf("TypeKind", k);
    fail("cannot print a type of kind " + (name ? *name : std::to_string(k)) + " (at " + hex(type) + ")");
  }

  // A NamedType's name_ (an optional QualifiedName), as qualifiedName().
  std::optional<std::string> qualifiedName(uint64_t type) const {
    const auto name = optionalValue(type + l_.NamedType_name, {l_.OptionalQualifiedName_engaged, l_.OptionalQualifiedName_payload});
    if (!name) return std::nullopt;
    return string(*name + l_.QualifiedName_qualified, "a type's name");
  }

  // IValues: the tag, and the payload word read as its tag says.
  uint64_t tagOf(uint64_t value) const { return mem_.read<uint32_t>(value + l_.IValue_tag, "a default value"); }
  uint64_t payload(uint64_t value) const { return pointer(value + l_.IValue_payload, "a default value"); }
  int64_t intValue(uint64_t value) const {
    if (tagOf(value) != tag_.integer) fail("a default value at " + hex(value) + " is not an int");
    return static_cast<int64_t>(payload(value));
  }
  std::string stringValue(uint64_t value) const {
    return string(payload(value) + l_.ConstantString_str, "a default string");
  }
  std::vector<uint64_t> listItems(uint64_t value) const {
    if (tagOf(value) != tag_.list) fail("a default value at " + hex(value) + " is not a list");
    return vector(payload(value) + l_.ListImpl_list, l_.sizeof_IValue, kMaxListElements, "a default list");
  }

  // IValue's operator<< for the tags a default value holds.
  std::string valueText(uint64_t value, int depth) const {
    if (depth > kMaxDepth) fail("a default value at " + hex(value) + " nests too deep (corrupt memory)");
    const uint64_t t = tagOf(value);
    if (t == tag_.none) return "None";
    if (t == tag_.boolean) return mem_.read<uint8_t>(value + l_.IValue_payload, "a default value") ? "True" : "False";
    if (t == tag_.integer) return std::to_string(intValue(value));
    if (t == tag_.real) return doubleText(mem_.read<double>(value + l_.IValue_payload, "a default value"));
    if (t == tag_.string) return quoted(stringValue(value));
    if (t == tag_.list) {
      std::vector<std::string> items;
      for (uint64_t item : listItems(value)) items.push_back(valueText(item, depth + 1));
      return "[" + joined(items, ", ") + "]";
    }
    const std::string* name = p_.nameOf("IValueTag", t);
    fail("cannot print a default value tagged " + (name ? *name : std::to_string(t)) + " (at " + hex(value) + ")");
  }

  // operator<<(std::ostream&, const AliasInfo&): "(a|b!)", "(a -> *)".
  std::string aliasText(uint64_t alias) const {
    auto before = symbolSet(alias + l_.AliasInfo_before), after = symbolSet(alias + l_.AliasInfo_after);
    std::vector<std::string> names;
    for (uint32_t s : before) names.push_back(symbolName(s));
    std::string out = "(" + joined(names, "|") + (flag(alias + l_.AliasInfo_is_write) ? "!" : "");
    std::vector<uint32_t> a = before, b = after;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) {
      names.clear();
      for (uint32_t s : after) names.push_back(symbolName(s));
      out += " -> " + joined(names, "|");
    }
    return out + ")";
  }

  // A std::unordered_set<Symbol>'s elements in its iteration order: its node list.
  std::vector<uint32_t> symbolSet(uint64_t set) const {
    std::vector<uint32_t> out;
    walkForwardList(mem_, set, {l_.SymbolSet_first, l_.SymbolSetNode_next}, kMaxAliasSets, "an alias set",
                    [&] { return "the alias set at " + hex(set); },
                    [&](uint64_t node) { out.push_back(mem_.read<uint32_t>(node + l_.SymbolSetNode_symbol, "an alias set")); });
    return out;
  }

  // Symbol::toUnqualString(): the symbol's entry in c10's interned strings (alias sets are
  // interned at run time, so their numbers differ between processes).
  std::string symbolName(uint32_t symbol) const {
    if (auto it = symbols_.find(symbol); it != symbols_.end()) return it->second;
    if (!interned_) {
      auto base = mem_.findSymbol(p_.symbol("realSingleton").c_str());
      if (!base || !*base) fail("libtorch_cpu exports no c10::Dispatcher::realSingleton()");
      interned_ = *base + l_.InternedStrings_from_realSingleton;
    }
    const uint64_t size = l_.sizeof_SymbolInfo;
    const auto [begin, end] = checkedVector(interned_ + l_.InternedStrings_sym_to_info, size, kMaxSymbols, "c10's interned strings");
    const uint64_t count = (end - begin) / size;
    if (symbol >= count) fail("symbol " + std::to_string(symbol) + " is not interned (" + std::to_string(count) + " are)");
    return symbols_[symbol] = string(begin + symbol * size + l_.SymbolInfo_unqual_name, "an interned string");
  }

  const Remote& mem_;
  const Profile& p_;
  const C10Layout& l_;
  const Kinds kind_;
  const Tags tag_;
  mutable uint64_t interned_ = 0;
  mutable std::map<uint32_t, std::string> symbols_;
};

}  // namespace

std::optional<std::vector<SchemaParameter>> schemaArguments(const TorchView& tv, const Operator& op) {
  if (!tv.schemaDebug(op)) return std::nullopt;
  const C10Layout& l = tv.layout();
  return SchemaPrinter(tv).parameters(
      op.entry + l.OperatorEntry_schema + l.OptionalSchema_payload + l.AnnotatedSchema_schema, false);
}

format::OperatorSnapshot registrationsOf(const TorchView& tv, const Operator& op) {
  const C10Layout& l = tv.layout();
  const SchemaPrinter printer(tv);
  format::OperatorSnapshot s;
  s.name = op.name;
  if (auto debug = tv.schemaDebug(op)) {
    const uint64_t schema = op.entry + l.OperatorEntry_schema + l.OptionalSchema_payload + l.AnnotatedSchema_schema;
    s.schema = printer.schema(schema);
    // The schema names its operator, as the operator entry does.
    if (s.schema.compare(0, op.name.size() + 1, op.name + "(") != 0)
      fail("the schema of " + op.name + " at " + hex(schema) + " is corrupt (it names '" + shown(s.schema.substr(0, s.schema.find('('))) + "')");
    s.has_schema = true;
    s.debug = *debug;
    const auto [kind, is_default] = printer.aliasAnalysis(schema);
    s.alias_analysis = kind;
    s.alias_analysis_is_default = is_default;
  }
  const uint64_t fallthrough = tv.fallthroughKernel();
  // In DispatchKey order; a key's list front first, the ones behind it "(inactive)".
  for (const auto& [key, kernels] : tv.registered(op)) {
    const KeyInfo* info = tv.keys().byValue(key);
    for (const Kernel& k : kernels) {
      const uint64_t inferred = tv.mem().readPointer(k.addr + l.AnnotatedKernel_inferred_function_schema + l.UniquePtr_pointer, "a kernel");
      // KernelFunction::dumpState()
      s.kernels.push_back({tv.keys().name(key), info && info->alias, k.debug, inferred ? printer.schema(inferred) : "",
                           fallthrough && k.boxed == fallthrough, k.boxed != 0, k.unboxed != 0});
    }
  }
  return s;
}

}  // namespace dscope::inspect
