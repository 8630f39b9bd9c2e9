// The `dscope` type category: one C++ summary per row of the inspect library's value type table
// (dscope_value_type_at, which GDB's printers register from too), each the text of the
// library's dscope_value_summary, so LLDB shows what GDB shows. Children (a key set's keys, a
// tensor's sizes) come from the Python synthetic-children providers of pretty_printers/, which
// registerSyntheticChildren adds from the same table and which get the library's children through
// dscope_lldb_value_summary.
#include <array>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>

#include "LldbTarget.h"
#include "Plugin.h"

namespace dscope::lldb_plugin {
namespace {

// LLDB's type name specifier for a row: a template row matches its instances by regex.
lldb::SBTypeNameSpecifier nameSpecifier(const dscope_value_type& t) {
  const std::string name = t.type_name;
  if (name.back() != '<') return lldb::SBTypeNameSpecifier(t.type_name, false);
  return lldb::SBTypeNameSpecifier(("^" + name + ".+>$").c_str(), true);
}

// text as a Python string literal.
std::string pythonString(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string errorText(std::string text) {
  // As gdb_printers.py _error_text: "<error: REASON>", one line, without the "dscope: " prefix.
  auto nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  if (text.rfind("dscope: ", 0) == 0) text.erase(0, 8);
  return "<error: " + text + ">";
}

bool summarize(lldb::SBValue value, lldb::SBStream& stream) {
  std::string text;
  try {
    LldbTarget target(value.GetTarget(), value.GetFrame());
    std::string error;
    const auto summary = target.summarize(value, &error);
    text = !summary ? errorText(error) : summary->is_error ? errorText(summary->text) : summary->text;
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

bool summaryCallback(lldb::SBValue value, lldb::SBTypeSummaryOptions, lldb::SBStream& stream) {
  return summarize(value, stream);
}

}  // namespace

void registerSummaries(lldb::SBDebugger debugger) {
  lldb::SBTypeCategory category = debugger.GetCategory("dscope");
  if (!category.IsValid()) category = debugger.CreateCategory("dscope");
  for (size_t i = 0; const dscope_value_type* t = dscope_value_type_at(i); ++i) {
    // The summary replaces the value (an enum's enumerator, a struct's braces) as GDB's printer
    // does; pointers keep printing as addresses, references show their referent.
    uint32_t options = lldb::eTypeOptionCascade | lldb::eTypeOptionSkipPointers | lldb::eTypeOptionHideValue;
    if (!(t->flags & DSCOPE_VALUE_EXPANDS)) options |= lldb::eTypeOptionHideChildren;
    std::string description = std::string("DispatchScope ") + t->summary_type;
    category.AddTypeSummary(nameSpecifier(*t), lldb::SBTypeSummary::CreateWithCallback(&summaryCallback, options, description.c_str()));
  }
  category.SetEnabled(true);
}

// The providers of lldb_synthetic.py (imported as `module`), one per row: an expanding type's
// children come from the library (dscope_lldb_value_summary, in the plugin file `plugin`); every
// other type has none, as GDB's printer has no children() for it (LLDB would list its raw members).
void registerSyntheticChildren(lldb::SBDebugger debugger, const std::string& module, const std::string& plugin) {
  lldb::SBTypeCategory category = debugger.GetCategory("dscope");
  // The value types' sizes, which a child of such a type must have (the module's WORD_SIZES).
  std::string sizes;
  for (size_t i = 0; const dscope_value_type* t = dscope_value_type_at(i); ++i)
    if (t->word_size) sizes += (sizes.empty() ? "" : ", ") + std::string("'") + t->type_name + "': " + std::to_string(t->word_size);
  const std::string script = "script " + module + ".WORD_SIZES = {" + sizes + "}; " + module + ".PLUGIN = " + pythonString(plugin);
  lldb::SBCommandReturnObject result;
  debugger.GetCommandInterpreter().HandleCommand(script.c_str(), result, false);
  for (size_t i = 0; const dscope_value_type* t = dscope_value_type_at(i); ++i) {
    const char* provider = t->flags & DSCOPE_VALUE_EXPANDS ? "Children" : "NoChildren";
    lldb::SBTypeSynthetic synthetic = lldb::SBTypeSynthetic::CreateWithClassName((module + "." + provider).c_str(),
                                                                                 lldb::eTypeOptionCascade | lldb::eTypeOptionSkipPointers);
    category.AddTypeSynthetic(nameSpecifier(*t), synthetic);
  }
  category.SetEnabled(true);
}

}  // namespace dscope::lldb_plugin

// The synthetic providers' way into the library (lldb_synthetic.py, through ctypes): the summary
// and children of the SBValue at `value` (a Python SBValue's `this`). NULL when LLDB cannot
// describe the value; free with dscope_lldb_summary_free.
extern "C" __attribute__((visibility("default"))) dscope_summary* dscope_lldb_value_summary(lldb::SBValue* value) {
  try {
    dscope::lldb_plugin::LldbTarget target(value->GetTarget(), value->GetFrame());
    std::string error;
    return target.summarize(*value, &error).release();
  } catch (...) {
    return nullptr;
  }
}

extern "C" __attribute__((visibility("default"))) void dscope_lldb_summary_free(dscope_summary* summary) {
  dscope_summary_free(summary);
}
