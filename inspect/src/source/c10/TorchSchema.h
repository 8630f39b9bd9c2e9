// op-table OP --registered on real PyTorch: c10's OperatorEntry::dumpState(), which
// torch._C._dispatch_dump(OP) prints, rebuilt from memory without calling into the process.
// Schemas are printed as c10's inline operator<< for FunctionSchema and Argument prints them
// (ATen/core/function_schema.h, function_schema_inl.h), types as their str(), default values as
// IValue's operator<<, alias sets through c10's interned strings; every layout fact and enum
// value comes from the build's profile (profiles/probe/probe.cpp, printSchemaLayout).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "source/c10/TorchView.h"

namespace dscope::inspect {

// What _dispatch_dump(op) prints (format::dumpState makes it byte for byte); InspectError (one
// line) when memory holds something the printer does not know how to print (a type or default
// value no schema of this build uses).
format::OperatorSnapshot registrationsOf(const TorchView& tv, const Operator& op);

// A schema argument: its name and its type as Type::str() prints it ("Tensor", "Tensor?", "int[]").
struct SchemaParameter {
  std::string name, type;
};
// The operator's schema arguments in order, or nullopt when it has no schema (only kernels).
std::optional<std::vector<SchemaParameter>> schemaArguments(const TorchView& tv, const Operator& op);

}  // namespace dscope::inspect
