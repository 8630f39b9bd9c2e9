#include "dscope/FunctionSchema.h"

#include <cctype>

#include "dscope/Error.h"

namespace dscope {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(std::string_view text, const std::string& why) {
  throw Error("malformed operator schema '" + std::string(text) + "': " + why);
}

// Splits at top-level commas (not inside brackets or parentheses).
std::vector<std::string_view> splitTopLevel(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

// "Tensor(a!) self", "Scalar alpha=1", "int[2] size", "Tensor" (return without name).
Argument parseArgument(std::string_view text, std::string_view whole, bool is_return) {
  Argument a;
  std::string_view decl = text;
  if (auto eq = text.find('='); eq != std::string_view::npos) {
    a.default_value = std::string(trim(text.substr(eq + 1)));
    decl = trim(text.substr(0, eq));
  }
  auto space = decl.rfind(' ');
  std::string_view type = decl;
  if (space != std::string_view::npos) {
    type = trim(decl.substr(0, space));
    a.name = std::string(trim(decl.substr(space + 1)));
  } else if (!is_return) {
    fail(whole, "argument '" + std::string(text) + "' has no name");
  }
  // Drop the alias annotation: Tensor(a!) -> Tensor, Tensor(a)[] -> Tensor[].
  std::string t;
  int depth = 0;
  for (char c : type) {
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if (depth == 0 && !std::isspace(static_cast<unsigned char>(c))) t += c;
  }
  if (t.empty()) fail(whole, "argument '" + std::string(text) + "' has no type");
  a.type = t;
  return a;
}

}  // namespace

bool Argument::isTensorLike() const {
  return type == "Tensor" || type == "Tensor?" || type == "Tensor[]" || type == "Tensor?[]";
}

OperatorName OperatorName::parse(std::string_view full_name) {
  full_name = trim(full_name);
  auto ns = full_name.find("::");
  if (ns == std::string_view::npos || ns == 0 || ns + 2 >= full_name.size())
    throw Error("operator name '" + std::string(full_name) + "' must look like 'namespace::name[.overload]'");
  auto dot = full_name.find('.', ns + 2);
  if (dot == std::string_view::npos) return {std::string(full_name), ""};
  return {std::string(full_name.substr(0, dot)), std::string(full_name.substr(dot + 1))};
}

const char* toString(AliasAnalysisKind k) {
  switch (k) {
    case AliasAnalysisKind::CONSERVATIVE: return "CONSERVATIVE";
    case AliasAnalysisKind::FROM_SCHEMA: return "FROM_SCHEMA";
    case AliasAnalysisKind::PURE_FUNCTION: return "PURE_FUNCTION";
  }
  return "?";
}

FunctionSchema FunctionSchema::parse(std::string_view text, std::string_view default_ns) {
  text = trim(text);
  auto open = text.find('(');
  auto arrow = text.rfind("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open)
    fail(text, "expected 'name(args) -> returns'");
  auto close = text.rfind(')', arrow);
  if (close == std::string_view::npos || close < open) fail(text, "unbalanced parentheses");

  FunctionSchema s;
  std::string name(trim(text.substr(0, open)));
  if (name.empty()) fail(text, "missing operator name");
  if (name.find("::") == std::string::npos) {
    if (default_ns.empty()) fail(text, "operator name has no namespace");
    name = std::string(default_ns) + "::" + name;
  }
  s.op = OperatorName::parse(name);

  bool kwarg_only = false;
  for (auto part : splitTopLevel(text.substr(open + 1, close - open - 1))) {
    if (part == "*") {
      kwarg_only = true;
      continue;
    }
    s.arguments.push_back(parseArgument(part, text, false));
    s.arguments.back().kwarg_only = kwarg_only;
  }
  std::string_view rets = trim(text.substr(arrow + 2));
  if (rets.empty()) fail(text, "missing return type");
  if (rets.front() == '(') {
    if (rets.back() != ')') fail(text, "unbalanced return tuple");
    rets = rets.substr(1, rets.size() - 2);
    for (auto part : splitTopLevel(rets)) s.returns.push_back(parseArgument(part, text, true));
  } else {
    s.returns.push_back(parseArgument(rets, text, true));
  }
  s.text = s.op.full() + std::string(text.substr(open));
  return s;
}

}  // namespace dscope
