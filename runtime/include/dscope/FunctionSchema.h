// Operator names and a small schema parser: enough to know names, argument types (which ones
// are tensors, for boxed dispatch) and returns. The text is kept as written (namespaced).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dscope {

struct OperatorName {
  std::string name;           // "aten::add"
  std::string overload_name;  // "Tensor", or "" for the default overload
  // "aten::add.Tensor", or "aten::add"
  std::string full() const { return overload_name.empty() ? name : name + "." + overload_name; }
  bool operator==(const OperatorName&) const = default;
  // Parses "aten::add.Tensor" (namespace required).
  static OperatorName parse(std::string_view full_name);
};

enum class AliasAnalysisKind : uint8_t { CONSERVATIVE, FROM_SCHEMA, PURE_FUNCTION };
const char* toString(AliasAnalysisKind k);

struct Argument {
  std::string type;  // as written, without alias annotation: "Tensor", "Tensor?", "int[]", "Scalar"
  std::string name;  // empty for returns without names
  std::optional<std::string> default_value;
  bool kwarg_only = false;
  // Tensor, Tensor?, Tensor[], Tensor?[]: the argument types a boxed call extracts keys from.
  bool isTensorLike() const;
};

struct FunctionSchema {
  OperatorName op;
  std::vector<Argument> arguments;
  std::vector<Argument> returns;
  std::string text;  // "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
  AliasAnalysisKind alias_analysis = AliasAnalysisKind::FROM_SCHEMA;

  // Parses "name.overload(args) -> rets"; a name without "::" gets default_ns. Throws dscope::Error
  // with the offending text on malformed input.
  static FunctionSchema parse(std::string_view text, std::string_view default_ns = {});
};

}  // namespace dscope
