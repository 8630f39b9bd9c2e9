// key-name VALUE [--backend]
// record-line OP_PTR KEYSET KIND
// op-name OP_PTR [--is NAME]
//
// One-line decodes for the debuggers' value printers (pretty_printers/dscope_printers/gdb_printers.py), so that a
// printed DispatchKey, BackendComponent or dispatch record reads exactly as the runtime and the
// other commands spell it: the names come from the runtime's own toString and recordLine.
#include <string>

#include "CommandLine.h"
#include "Commands.h"

#include "dscope/format/DispatchRecord.h"

namespace dscope::inspect {

namespace {
const char* kKeyNameUsage = "key-name VALUE [--backend]";
const char* kRecordLineUsage = "record-line OP_PTR KEYSET KIND";
const char* kOpNameUsage = "op-name OP_PTR [--is NAME]";
}  // namespace

std::string runKeyName(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{"--backend"}, {}}, kKeyNameUsage);
  if (args.positional.size() != 1) usageError("key-name needs one value", kKeyNameUsage);
  const uint64_t value = numberOrExpression(s.mem(), args.positional.front());
  if (args.has("--backend")) {
    // A BackendComponent is a uint8_t; c10's name for values past MetaBit.
    if (value > 0xff) fail("backend component value " + std::to_string(value) + " is out of range");
    return std::string(toString(static_cast<BackendComponent>(value))) + "\n";
  }
  // A DispatchKey is a uint16_t; toString names anything past the alias keys UnknownUnknown.
  if (value > 0xffff) fail("dispatch key value " + std::to_string(value) + " is out of range");
  return std::string(toString(static_cast<DispatchKey>(value))) + "\n";
}

std::string runRecordLine(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{}, {}}, kRecordLineUsage);
  if (args.positional.size() != 3) usageError("record-line needs OP_PTR KEYSET KIND", kRecordLineUsage);
  const uint64_t op = numberOrExpression(s.mem(), args.positional[0]);
  const auto ks = DispatchKeySet::from_raw_repr(numberOrExpression(s.mem(), args.positional[1]));
  const uint64_t kind = numberOrExpression(s.mem(), args.positional[2]);
  if (!op) fail("the record's operator is null (an unused record slot?)");
  const std::string name = s.runtime().operatorName(op);
  return format::recordLine(static_cast<uint8_t>(kind > 0xff ? 0 : kind), name, ks.highestPriorityTypeId()) + "\n";
}

// The full name of the operator whose impl::OperatorEntry is at OP_PTR; with --is NAME, 1 when
// NAME is that name or its base name, else 0 ($dispatch_op_is, matching as dispatch-break does).
std::string runOpName(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{}, {"--is"}}, kOpNameUsage);
  if (args.positional.size() != 1) usageError("op-name needs one OperatorEntry address", kOpNameUsage);
  if (auto name = args.value("--is")) checkOperatorName(*name);
  const uint64_t op = numberOrExpression(s.mem(), args.positional[0]);
  if (!op) fail("the operator entry pointer is null");
  const std::string full_name = s.runtime().operatorName(op);
  if (auto name = args.value("--is")) return namesOperator(full_name, *name) ? "1\n" : "0\n";
  return full_name + "\n";
}

}  // namespace dscope::inspect
