#include "source/c10/C10Dispatcher.h"

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "source/c10/TorchSchema.h"
#include "target/ThreadLocal.h"

namespace dscope::inspect {

format::OperatorSnapshot C10Dispatcher::registrations(const Operator& op) const { return registrationsOf(tv_, op); }

std::string C10Dispatcher::dispatchTrace(const ParsedArgs& args) const {
  if (args.has("--json")) fail("on PyTorch, dispatch-trace answers in text (dispatch-summary --json gives every thread's state)");
  return runTorchDispatchTrace(session_, args);
}

ThreadKeySets C10Dispatcher::threadKeySets(int64_t tid) const {
  if (!tid) fail("no thread to read: the debugger has no selected thread");
  const auto [included, excluded] = tv_.threadTls(tid);
  return {tid, tv_.mem().threadIds().shown(tid), true, included, excluded};
}

// A number in a PyTorch process: an address the process maps names a tensor (a Python tensor as
// hex(id(t)) prints it, or a TensorImpl; anything else is refused, saying what it is); any other
// number is a raw key set, of this build's keys only. Real key sets lie far below where Linux maps
// a process's heap and libraries, so the two never meet.
uint64_t C10Dispatcher::keySetOfWord(uint64_t word) const {
  bool readable = true;
  try {
    tv_.mem().readPointer(word, "an address");
  } catch (const InspectError&) {
    readable = false;
  }
  if (readable) return tv_.tensorKeySet(tv_.tensorImplAt(word));
  if (const uint64_t unknown = keys().unknownBits(word))
    fail(hex(word) + " is no address in this process and no key set of its PyTorch " + tv_.profile().version + " (bits " +
         hex(unknown) + " belong to no key of its key table)");
  return word;
}

// A debugger value of c10's or ATen's types (where the user's code has DWARF).
uint64_t C10Dispatcher::keySetOfValue(const std::string& text, const dscope_value& v) const {
  if (v.kind == DSCOPE_KIND_INTEGER) return keySetOfWord(v.bits);
  const std::string type = v.type;
  uint64_t at = v.kind == DSCOPE_KIND_POINTER ? v.bits : v.address;
  if (v.kind == DSCOPE_KIND_POINTER && !at) fail(text + " is a null pointer");
  if (type == "c10::DispatchKeySet") return at ? tv_.mem().readPointer(at, "a key set") : v.bits;
  if (type == "at::Tensor" || type == "at::TensorBase") {
    at = tv_.mem().readPointer(at, "a tensor");  // impl_, the intrusive_ptr's only member
    if (!at) fail(text + " is an undefined tensor");
  } else if (type != "c10::TensorImpl") {
    fail(text + " is a " + (v.kind == DSCOPE_KIND_POINTER ? type : std::string(v.shown)) + ", not a DispatchKeySet or a tensor");
  }
  return tv_.tensorKeySet(at);
}

}  // namespace dscope::inspect
