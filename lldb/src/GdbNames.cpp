#include "GdbNames.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace dscope::lldb_plugin {

namespace {

// libstdc++'s __cxa_demangle is libiberty's demangler, the one GDB uses.
std::string demangle(const char* mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && text ? text : mangled;
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

// The position just past "operator<symbol>" when s[i..] starts one, else i.
size_t skipOperator(const std::string& s, size_t i) {
  static const char kWord[] = "operator";
  if (s.compare(i, sizeof kWord - 1, kWord) != 0) return i;
  if (i > 0 && isIdentifierChar(s[i - 1])) return i;
  size_t j = i + sizeof kWord - 1;
  if (j < s.size() && isIdentifierChar(s[j])) return i;  // "operators"
  while (j < s.size() && std::strchr("<>=!+-*/%^&|~[](),", s[j])) ++j;
  return j;
}

// Positions of the spaces of s outside any <...> or (...), operator names skipped.
std::vector<size_t> topLevelSpaces(const std::string& s) {
  std::vector<size_t> spaces;
  int depth = 0;
  for (size_t i = 0; i < s.size();) {
    size_t after = skipOperator(s, i);
    if (after != i) {
      i = after;
      continue;
    }
    char c = s[i];
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
    if (c == ' ' && depth == 0) spaces.push_back(i);
    ++i;
  }
  return spaces;
}

}  // namespace

std::string gdbDemangleFunction(const char* mangled) {
  std::string s = demangle(mangled);
  // A template function's demangled name starts with its return type ("dscope::Tensor
  // ns::f<int>(int)"); GDB asks for it to be dropped. The function's name then ends with '>'.
  size_t open = parameterListStart(s);
  if (open == std::string::npos || open == 0) return s;
  std::string name = s.substr(0, open);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  if (name.empty() || name.back() != '>') return s;
  auto spaces = topLevelSpaces(name);
  if (spaces.empty()) return s;
  size_t cut = spaces.back() + 1;
  if (name.compare(cut, 9, "operator ") == 0) return s;  // a conversion operator has no return type
  return s.substr(cut);
}

std::string gdbCanonicalSpelling(const std::string& in) {
  // 1. "const T" at the start of a type (after '(', '<', ',' or at the start) becomes "T const".
  std::string s;
  s.reserve(in.size() + 8);
  size_t i = 0;
  auto atTypeStart = [&](const std::string& out) {
    size_t k = out.size();
    while (k > 0 && out[k - 1] == ' ') --k;
    return k == 0 || out[k - 1] == '(' || out[k - 1] == '<' || out[k - 1] == ',';
  };
  while (i < in.size()) {
    if (in.compare(i, 6, "const ") == 0 && atTypeStart(s) && (i == 0 || !isIdentifierChar(in[i - 1]))) {
      // The base type: names, scopes, keywords and balanced <...>, up to a declarator or the
      // end of this type.
      size_t j = i + 6;
      int depth = 0;
      size_t end = j;
      for (; j < in.size(); ++j) {
        char c = in[j];
        if (c == '<' || c == '(') {
          if (c == '(' && depth == 0) break;
          ++depth;
        } else if (c == '>' || c == ')') {
          if (depth == 0) break;
          --depth;
        } else if (depth == 0 && (c == '*' || c == '&' || c == ',')) {
          break;
        }
        end = j + 1;
      }
      std::string base = in.substr(i + 6, end - (i + 6));
      while (!base.empty() && base.back() == ' ') base.pop_back();
      s += base + " const";
      i = end;
      continue;
    }
    s += in[i++];
  }
  // 2. Declarators hug their type ("T *" -> "T*", "T &" -> "T&"), a const after one does not
  //    ("T *const" -> "T* const"); 3. ">>" closing two template lists is "> >".
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t k = 0; k < s.size(); ++k) {
    char c = s[k];
    if (c == ' ' && k + 1 < s.size() && (s[k + 1] == '*' || s[k + 1] == '&') && k > 0 && s[k - 1] != ',' &&
        !(k >= 8 && s.compare(k - 8, 8, "operator") == 0))
      continue;
    out += c;
    if ((c == '*' || c == '&') && s.compare(k + 1, 5, "const") == 0) out += ' ';
    if (c == '>' && k + 1 < s.size() && s[k + 1] == '>' && !(k >= 8 && s.compare(k - 8, 8, "operator") == 0) &&
        !(k >= 9 && s.compare(k - 9, 9, "operator>") == 0))
      out += ' ';
  }
  // 4. GCC's names of the integer types, as the canonical form spells them.
  static const std::pair<const char*, const char*> kIntegers[] = {
      {"long long unsigned int", "unsigned long long"}, {"long long int", "long long"},
      {"long unsigned int", "unsigned long"}, {"short unsigned int", "unsigned short"},
      {"long int", "long"}, {"short int", "short"}};
  for (const auto& [gcc, canonical] : kIntegers) {
    const size_t n = std::strlen(gcc);
    for (size_t at = out.find(gcc); at != std::string::npos; at = out.find(gcc, at)) {
      const bool starts = at == 0 || !isIdentifierChar(out[at - 1]);
      const bool ends = at + n == out.size() || !isIdentifierChar(out[at + n]);
      if (starts && ends) {
        out.replace(at, n, canonical);
        at += std::strlen(canonical);
      } else {
        at += n;
      }
    }
  }
  return out;
}

bool gdbCanonicalizes(const std::string& name) {
  int angle = 0;
  for (size_t i = 0; i < name.size();) {
    size_t after = skipOperator(name, i);
    if (after != i) {
      i = after;
      continue;
    }
    if (name[i] == '<') ++angle;
    if (name[i] == '>' && angle > 0) --angle;
    if (name[i] == '(' && angle > 0) {
      // A function type ("R(A)", "R (A)") stops the parser; a cast ("<(ns::E)0>") does not.
      size_t k = i;
      while (k > 0 && name[k - 1] == ' ') --k;
      if (k > 0 && (isIdentifierChar(name[k - 1]) || name[k - 1] == '>' || name[k - 1] == '*' || name[k - 1] == '&'))
        return false;
    }
    ++i;
  }
  return true;
}

std::string gdbFunctionName(lldb::SBFunction function) {
  const char* mangled = function.GetMangledName();
  if (mangled && std::strncmp(mangled, "_Z", 2) == 0) return gdbDemangleFunction(mangled);
  const char* name = function.GetName();
  if (!name) return "";
  // LLDB writes the DWARF-built name of a function at global scope as "::f(...)"; GDB as "f(...)".
  std::string built = std::strncmp(name, "::", 2) == 0 ? name + 2 : name;
  return gdbCanonicalizes(built) ? gdbCanonicalSpelling(built) : built;
}

std::string gdbSymbolName(lldb::SBSymbol symbol) {
  const char* mangled = symbol.GetMangledName();
  if (mangled && std::strncmp(mangled, "_Z", 2) == 0) return demangle(mangled);
  const char* name = symbol.GetName();
  // LLDB names a stripped function after its own counter; GDB has no name there.
  if (!name || std::strncmp(name, "___lldb_unnamed_symbol", 22) == 0) return "";
  return name;
}

}  // namespace dscope::lldb_plugin
