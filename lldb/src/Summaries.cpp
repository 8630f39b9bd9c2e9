// The `dscope` type category: one C++ summary per row of the inspect library's value type table
// (dscope_value_type_at, which GDB's printers register from too), each the text of the
// library's `summary TYPE WORD`, so LLDB shows what GDB shows. Children (a key set's keys, a
// tensor's sizes) come from the Python synthetic-children providers of pretty_printers/, which
// registerSyntheticChildren adds from the same table.
#include <array>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>

#include "LldbTarget.h"
#include "Plugin.h"

namespace dscope::lldb_plugin {
namespace {

enum class Word {
  Bits,     // the value's own bytes, little endian (enums, DispatchKeySet's repr_, Device)
  Address,  // the object's load address
};

// The table's rows; at most kMaxTypes (summaries are one callback function per row).
constexpr size_t kMaxTypes = 32;
const dscope_value_type* row(size_t index) { return index < kMaxTypes ? dscope_value_type_at(index) : nullptr; }

// LLDB's type name specifier for a row: a template row matches its instances by regex.
lldb::SBTypeNameSpecifier nameSpecifier(const dscope_value_type& t) {
  const std::string name = t.type_name;
  if (name.back() != '<') return lldb::SBTypeNameSpecifier(t.type_name, false);
  return lldb::SBTypeNameSpecifier(("^" + name + ".+>$").c_str(), true);
}

std::string errorText(std::string text) {
  // As gdb_printers.py _error_text: "<error: REASON>", one line, without the "dscope: " prefix.
  auto nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  if (text.rfind("dscope: ", 0) == 0) text.erase(0, 8);
  return "<error: " + text + ">";
}

uint64_t littleEndian(const uint8_t* bytes, size_t size) {
  uint64_t w = 0;
  for (size_t i = 0; i < size; ++i) w |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return w;
}

// The bits of a value type (little endian), or false with the reason.
bool bitsOf(lldb::SBValue value, uint64_t* out, std::string* error) {
  lldb::SBData data = value.GetData();
  const size_t size = data.IsValid() ? data.GetByteSize() : 0;
  if (size == 0 || size > 8) {
    lldb::SBError e = value.GetError();
    *error = e.Fail() && e.GetCString() ? e.GetCString() : "the value is not available";
    return false;
  }
  uint8_t bytes[8] = {};
  lldb::SBError e;
  if (data.ReadRawData(e, 0, bytes, size) < size || e.Fail()) {
    *error = "the value is not available";
    return false;
  }
  *out = littleEndian(bytes, size);
  return true;
}

// The address a reference refers to: the reference's own value, wherever its DWARF puts it (a
// stack slot, a register, an implicit value). Dereference() is not enough: where clang emits the
// referent's type only as a declaration (its definition is in another module, as OperatorEntry's
// in the runtime), the dereferenced value has no address at all.
bool referentOf(lldb::SBValue reference, uint64_t* out, std::string* error) {
  lldb::SBError e;
  const uint64_t addr = reference.GetNonSyntheticValue().GetValueAsUnsigned(e, 0);
  if (e.Fail() || addr == 0) {
    *error = e.Fail() && e.GetCString() ? e.GetCString() : "the reference is null";
    return false;
  }
  *out = addr;
  return true;
}

// The bits of a value type that a reference refers to: the dereferenced value's, else read at
// the referent's address with the size of the type's complete definition.
bool referentBitsOf(lldb::SBValue reference, uint64_t* out, std::string* error) {
  if (bitsOf(reference.GetNonSyntheticValue().Dereference(), out, error)) return true;
  uint64_t addr = 0;
  if (!referentOf(reference, &addr, error)) return false;
  lldb::SBType type = reference.GetTarget().FindFirstType(
      reference.GetType().GetCanonicalType().GetDereferencedType().GetUnqualifiedType().GetName());
  const uint64_t size = type.IsValid() ? type.GetByteSize() : 0;
  if (size == 0 || size > 8) {
    *error = "the value is not available";
    return false;
  }
  uint8_t bytes[8] = {};
  lldb::SBError e;
  if (reference.GetProcess().ReadMemory(addr, bytes, size, e) < size || e.Fail()) {
    char line[64];
    std::snprintf(line, sizeof line, "cannot read memory at 0x%" PRIx64, addr);
    *error = line;
    return false;
  }
  *out = littleEndian(bytes, size);
  return true;
}

// `summary TYPE WORD`'s WORD for value, or false with the reason. A reference (LLDB hands the
// summary of `const T& r` the reference itself) is followed: GDB's printer sees the referent.
bool wordOf(lldb::SBValue value, Word word, uint64_t* out, std::string* error) {
  if (value.GetType().GetCanonicalType().IsReferenceType()) {
    return word == Word::Address ? referentOf(value, out, error) : referentBitsOf(value, out, error);
  }
  value = value.GetNonSyntheticValue();
  if (word == Word::Bits) return bitsOf(value, out, error);
  uint64_t addr = value.GetLoadAddress();
  if (addr == LLDB_INVALID_ADDRESS || addr == 0) {
    *error = "the value is not in memory";
    return false;
  }
  *out = addr;
  return true;
}

bool summarize(size_t index, lldb::SBValue value, lldb::SBStream& stream) {
  std::string text;
  try {
    const dscope_value_type& t = *row(index);
    uint64_t word = 0;
    std::string error;
    if (!wordOf(value, t.word_size ? Word::Bits : Word::Address, &word, &error)) {
      text = errorText(error);
    } else {
      char line[96];
      std::snprintf(line, sizeof line, "summary %s 0x%" PRIx64, t.summary_type, word);
      LldbTarget target(value.GetTarget(), value.GetFrame());
      InspectResult r = target.run(line);
      text = r.is_error ? errorText(r.text) : r.text;
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    }
  } catch (const std::exception& e) {
    text = errorText(e.what());
  } catch (...) {
    text = "<error: internal error in the LLDB plugin>";
  }
  // An enumerator the summary only repeats (DispatchKey CPU, BackendComponent CPUBit): no
  // summary, so the value shows once. `frame variable` prints the value when there is no summary
  // (the type's hidden value is hidden only behind one), and lldb-vscode, which shows "VALUE
  // SUMMARY", would show "CPU CPU".
  const char* own = value.GetValue();
  if (own && text == own) return false;
  stream.Printf("%s", text.c_str());
  return true;
}

// CreateWithCallback takes no baton: one function per table row.
template <size_t I>
bool summaryCallback(lldb::SBValue value, lldb::SBTypeSummaryOptions, lldb::SBStream& stream) {
  return summarize(I, value, stream);
}

template <size_t... I>
constexpr auto makeCallbacks(std::index_sequence<I...>) {
  return std::array<lldb::SBTypeSummary::FormatCallback, sizeof...(I)>{&summaryCallback<I>...};
}

}  // namespace

void registerSummaries(lldb::SBDebugger debugger) {
  static const auto callbacks = makeCallbacks(std::make_index_sequence<kMaxTypes>());
  lldb::SBTypeCategory category = debugger.GetCategory("dscope");
  if (!category.IsValid()) category = debugger.CreateCategory("dscope");
  for (size_t i = 0; const dscope_value_type* t = row(i); ++i) {
    // The summary replaces the value (an enum's enumerator, a struct's braces) as GDB's printer
    // does; pointers keep printing as addresses, references show their referent.
    uint32_t options = lldb::eTypeOptionCascade | lldb::eTypeOptionSkipPointers | lldb::eTypeOptionHideValue;
    if (!(t->flags & DSCOPE_VALUE_EXPANDS)) options |= lldb::eTypeOptionHideChildren;
    std::string description = std::string("DispatchScope ") + t->summary_type;
    category.AddTypeSummary(nameSpecifier(*t), lldb::SBTypeSummary::CreateWithCallback(callbacks[i], options, description.c_str()));
  }
  category.SetEnabled(true);
}

// The providers of lldb_synthetic.py (imported as `module`), one per row: an expanding type's
// children come from `summary --json` for its address or its bits; every other type has none,
// as GDB's printer has no children() for it (LLDB would list its raw members).
void registerSyntheticChildren(lldb::SBDebugger debugger, const std::string& module) {
  lldb::SBTypeCategory category = debugger.GetCategory("dscope");
  // The value types' sizes, which a child of such a type must have (the module's WORD_SIZES).
  std::string sizes;
  for (size_t i = 0; const dscope_value_type* t = row(i); ++i)
    if (t->word_size) sizes += (sizes.empty() ? "" : ", ") + std::string("'") + t->type_name + "': " + std::to_string(t->word_size);
  lldb::SBCommandReturnObject result;
  debugger.GetCommandInterpreter().HandleCommand(("script " + module + ".WORD_SIZES = {" + sizes + "}").c_str(), result, false);
  for (size_t i = 0; const dscope_value_type* t = row(i); ++i) {
    const char* provider = !(t->flags & DSCOPE_VALUE_EXPANDS) ? "NoChildren" : t->word_size ? "ValueChildren" : "ObjectChildren";
    lldb::SBTypeSynthetic synthetic = lldb::SBTypeSynthetic::CreateWithClassName((module + "." + provider).c_str(),
                                                                                 lldb::eTypeOptionCascade | lldb::eTypeOptionSkipPointers);
    category.AddTypeSynthetic(nameSpecifier(*t), synthetic);
  }
  category.SetEnabled(true);
}

}  // namespace dscope::lldb_plugin
