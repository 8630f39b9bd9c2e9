// op-table OP --registered on real PyTorch: c10's OperatorEntry::dumpState(), which
// torch._C._dispatch_dump(OP) prints, rebuilt from memory without calling into the process.
// Schemas are printed as c10's inline operator<< for FunctionSchema and Argument prints them
// (ATen/core/function_schema.h, function_schema_inl.h), types as their str(), default values as
// IValue's operator<<, alias sets through c10's interned strings; every layout fact and enum
// value comes from the build's profile (profiles/probe/probe.cpp, printSchemaLayout).
#pragma once

#include <string>

#include "TorchView.h"

namespace dscope::inspect {

// _dispatch_dump(op), byte for byte; InspectError (one line) when memory holds something the
// printer does not know how to print (a type or default value no schema of this build uses).
std::string dumpRegistered(const TorchView& tv, const TorchOperator& op);

}  // namespace dscope::inspect
