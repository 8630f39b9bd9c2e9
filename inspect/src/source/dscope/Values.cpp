// What a debugger's values mean to the runtime: the key set `keyset EXPR` decodes, and the
// dispatch in the selected frame (GDB's $dispatch_op_is and $dispatch_key). The front ends only
// describe values (dscope_value: kind, type name, address or bits); which runtime type holds what
// is known here alone, through the layout profile's offsets.
#include <string>

#include "target/Remote.h"
#include "Session.h"
#include "source/dscope/Values.h"

namespace dscope::inspect {

namespace {

const char* kDispatchFrames =
    "break on dscope::TypedOperatorHandle<...>::dispatch or dscope::dispatchBoxed, or select such a frame";

bool isHandle(const std::string& type) {
  return type == "dscope::OperatorHandle" ||
         (type.rfind("dscope::TypedOperatorHandle<", 0) == 0 && type.back() == '>');
}

// The object a value designates: a pointer's pointee (a null one is named), or the object itself.
// 0 for an object that is not in memory.
uint64_t objectAddress(const dscope_value& v, const std::string& expr) {
  if (v.kind != DSCOPE_KIND_POINTER) return v.address;
  if (v.bits == 0) fail(expr + " is a null pointer");
  return v.bits;
}

std::string notAKeySet(const std::string& expr, const std::string& type) {
  return expr + " is a " + type + ", not a DispatchKeySet or a tensor";
}


// The frame's variable `name` when it has one; InspectError for a frame without debug information.
std::optional<dscope_value> frameVariable(Session& s, const std::string& frame, const char* name, bool parameter,
                                          std::string* problem) {
  dscope_value v{};
  std::string reason;
  switch (s.mem().frameVariable(name, parameter, &v, &reason)) {
    case 0:
      return v;
    case 1:
      return std::nullopt;
    case 3:
      fail("no debug information for " + frame + " (DWARF needed); " + kDispatchFrames);
    case -1:
      fail("this debugger reads no frame variables");
    default:
      if (problem->empty())
        *problem = "cannot read `" + std::string(name) + "` in " + frame + ": " + reason +
                   " (an optimized build? use -O0 -g code or another frame)";
      return std::nullopt;
  }
}

// The impl::OperatorEntry dispatched in the selected frame: from `this` or `op`, an operator handle
// (its entry_), an entry, or the break hook's untyped `op`. A variable of any other type is
// skipped (an optimized-out one of another type too).
uint64_t frameEntry(Session& s, const std::string& frame) {
  std::string problem;
  for (const char* name : {"this", "op"}) {
    const auto v = frameVariable(s, frame, name, false, &problem);
    if (!v) continue;
    const std::string type = v->type;
    const bool untyped = v->kind == DSCOPE_KIND_INTEGER && !type.empty() && type.back() == '*';
    const bool typed = v->kind == DSCOPE_KIND_POINTER || v->kind == DSCOPE_KIND_OBJECT;
    if (!untyped && !(typed && (isHandle(type) || type == "dscope::impl::OperatorEntry"))) continue;
    uint64_t entry = v->kind == DSCOPE_KIND_OBJECT ? v->address : v->bits;
    if (typed && isHandle(type) && entry) {
      try {
        entry = s.mem().readPointer(entry + s.runtime().layout().OperatorHandle_entry, "operator handle");
      } catch (const InspectError& e) {
        if (problem.empty()) problem = "cannot read the operator in " + frame + ": " + messageOf(e);
        continue;
      }
    }
    if (!entry) fail("the operator handle in " + frame + " is null");
    return entry;
  }
  if (!problem.empty()) fail(problem);
  fail(frame + " is not dispatching an operator (no operator handle `this` or `op` argument); " + kDispatchFrames);
}

}  // namespace

// The key set word a value holds: a DispatchKeySet's repr_; a tensor's (Tensor, TensorImpl, or a
// pointer to either); an integer as it is. InspectError with the message after "cannot evaluate".
uint64_t keySetWord(Session& s, const std::string& expr, const dscope_value& v) {
  if (v.kind == DSCOPE_KIND_INTEGER) return v.bits;
  if (v.kind == DSCOPE_KIND_OTHER) fail(notAKeySet(expr, v.shown));
  const std::string type = v.type;
  const bool pointer = v.kind == DSCOPE_KIND_POINTER;
  const uint64_t at = objectAddress(v, expr);
  if (type == "dscope::DispatchKeySet") return at ? s.mem().read<uint64_t>(at, "key set") : v.bits;
  if (type != "dscope::Tensor" && type != "dscope::TensorImpl") fail(notAKeySet(expr, pointer ? type : v.shown));
  if (!at) fail(expr + " is not in memory");
  const auto& layout = s.runtime().layout();
  uint64_t impl = at;
  if (type == "dscope::Tensor") {
    impl = s.mem().readPointer(at + layout.Tensor_impl, "tensor");
    if (!impl) fail(expr + " is an undefined tensor");
  }
  return s.mem().read<uint64_t>(impl + layout.TensorImpl_key_set, "tensor");
}


bool frameOpIs(Session& s, const std::string& frame, const std::string& name) {
  checkOperatorName(name);
  return namesOperator(s.runtime().operatorName(frameEntry(s, frame)), name);
}

std::string frameKey(Session& s, const std::string& frame) {
  std::string problem;
  for (const char* name : {"ks", "keyset"}) {
    const auto v = frameVariable(s, frame, name, true, &problem);
    if (!problem.empty()) fail(problem);
    if (!v) continue;
    try {
      const uint64_t word = v->kind == DSCOPE_KIND_INTEGER ? v->bits : keySetWord(s, name, *v);
      return toString(DispatchKeySet::from_raw_repr(word).highestPriorityTypeId());
    } catch (const InspectError& e) {
      fail("cannot read `" + std::string(name) + "` in " + frame + ": " + messageOf(e));
    }
  }
  fail(frame + " has no dispatch key set argument `ks`; " + kDispatchFrames);
}

}  // namespace dscope::inspect
