#include "stack/StackChain.h"

#include "stack/KernelIndex.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

namespace dscope::inspect {

namespace {

// What a function on the stack is, by its name. The dispatcher's own frames (runtime/include/dscope/
// Dispatcher.h, runtime/src/Dispatcher.cpp): TypedOperatorHandle<Sig>::dispatch holds kind, ks
// and k; call/redispatch are its entry points (inlined or not); dispatchBoxed and the boxed entry
// points are the boxed twins; an op struct's TypedOp<...>::call/redispatch only passes ks through.
enum class FrameKind { Other, Dispatch, Call, Redispatch, Boxed, CallBoxed, RedispatchBoxed, Wrapper };

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

// "ns::f" of "ns::f(int, g(int)) const": debuggers give names with or without the parameters.
std::string_view baseName(std::string_view name) {
  if (endsWith(name, " const")) name.remove_suffix(6);
  if (!endsWith(name, ")")) return name;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return name.substr(0, i);
  }
  return name;
}

FrameKind frameKindOf(std::string_view name) {
  if (!startsWith(name, "dscope::")) return FrameKind::Other;
  const std::string_view base = baseName(name);
  if (startsWith(base, "dscope::TypedOperatorHandle<")) {
    if (endsWith(base, ">::dispatch")) return FrameKind::Dispatch;
    if (endsWith(base, ">::redispatch")) return FrameKind::Redispatch;
    if (endsWith(base, ">::call")) return FrameKind::Call;
    return FrameKind::Other;
  }
  if (base == "dscope::dispatchBoxed") return FrameKind::Boxed;
  if (base == "dscope::Dispatcher::callBoxed" || base == "dscope::OperatorHandle::callBoxed") return FrameKind::CallBoxed;
  if (base == "dscope::Dispatcher::redispatchBoxed" || base == "dscope::OperatorHandle::redispatchBoxed")
    return FrameKind::RedispatchBoxed;
  if (base.find("::_ops::TypedOp<") != std::string_view::npos && (endsWith(base, ">::call") || endsWith(base, ">::redispatch")))
    return FrameKind::Wrapper;
  return FrameKind::Other;
}

bool isBoxed(FrameKind k) { return k == FrameKind::Boxed || k == FrameKind::CallBoxed || k == FrameKind::RedispatchBoxed; }
bool holdsDispatch(FrameKind k) { return k != FrameKind::Other && k != FrameKind::Wrapper; }

// The dscope_record_kind an entry-point frame stands for (0: none).
uint8_t entryKind(FrameKind k) {
  switch (k) {
    case FrameKind::Call: return DSCOPE_RECORD_CALL;
    case FrameKind::Redispatch: return DSCOPE_RECORD_REDISPATCH;
    case FrameKind::CallBoxed: return DSCOPE_RECORD_CALL_BOXED;
    case FrameKind::RedispatchBoxed: return DSCOPE_RECORD_REDISPATCH_BOXED;
    default: return 0;
  }
}

// A function on the stack: a stack frame's own function, or a call inlined into it (listed first).
struct Frame {
  std::string name;  // "" when no module names it
  FrameKind kind = FrameKind::Other;
  uint64_t stack_frame = 0;
  uint64_t entry = 0;  // a stack frame's own function: the address it is entered at; 0 for an inlined call
};

// A stack frame as the front end gives it.
struct StackFrame {
  uint64_t pc = 0, sp = 0;
};

std::vector<KernelUse> common(const std::vector<KernelUse>& a, const std::vector<KernelUse>& b) {
  std::vector<KernelUse> both;
  for (const KernelUse& u : a)
    if (std::any_of(b.begin(), b.end(), [&](const KernelUse& v) { return v.sameEntry(u); })) both.push_back(u);
  return both;
}

// The operators' entries (impl::OperatorEntry addresses), each once.
std::vector<uint64_t> opsOf(const std::vector<KernelUse>& uses) {
  std::vector<uint64_t> ops;
  for (const KernelUse& u : uses)
    if (std::find(ops.begin(), ops.end(), u.op->entry) == ops.end()) ops.push_back(u.op->entry);
  return ops;
}

// The uses that the words of stack memory [low, high) point at, which a dispatch keeps in
// registers its callees save on the stack: first by operator (a word holding its entry, or a
// handle to it: a pointer to stack memory holding the entry at OperatorHandle_entry), then by
// kernel (its AnnotatedKernel, or its KernelFunction: the `this` of KernelFunction::call). A
// fallback kernel is one object every operator's table shares: only the operator's own words tell.
// `uses` unchanged when no word points at any of them (or the memory cannot be read).
std::vector<KernelUse> heldOnStack(const RuntimeView& rt, std::vector<KernelUse> uses, uint64_t low, uint64_t high) {
  constexpr uint64_t kMaxScan = 16384, kMaxHandleDistance = 1 << 16;
  const Remote& mem = rt.mem();
  const dscope_layout_profile& layout = rt.layout();
  if (high <= low) return uses;
  low = std::max(low, high - std::min(high, kMaxScan)) & ~uint64_t{7};  // the part next to the dispatch
  std::vector<uint64_t> words((high - low) / 8);
  try {
    mem.read(low, words.data(), words.size() * 8, "stack");
  } catch (const InspectError&) {
    return uses;
  }
  std::unordered_set<uint64_t> held(words.begin(), words.end());
  for (uint64_t w : words) {
    if (w < low || w - low > kMaxHandleDistance) continue;
    try {
      held.insert(mem.readPointer(w + layout.OperatorHandle_entry, "handle"));
    } catch (const InspectError&) {
    }
  }
  auto narrow = [&](auto points_at) {
    std::vector<KernelUse> kept;
    std::copy_if(uses.begin(), uses.end(), std::back_inserter(kept), points_at);
    if (!kept.empty()) uses = std::move(kept);
  };
  narrow([&](const KernelUse& u) { return held.count(u.op->entry) != 0; });
  narrow([&](const KernelUse& u) { return held.count(u.kernel) || held.count(u.kernel + layout.AnnotatedKernel_kernel); });
  return uses;
}

// What the dispatch that stack frame `frame` ran: the kernel it entered, from the functions entered
// inside it, frames [inside, body) (outermost first: a trampoline several kernels share, then a
// kernel's own function); where that leaves several operators, those whose entry or kernel its
// stack frames hold; where it leaves several keys of one operator (a kernel registered for an
// alias), the one of the backend the dispatch inside it went to.
void resolve(const RuntimeView& rt, const KernelIndex& index, const std::vector<Frame>& frames, const std::vector<StackFrame>& stack,
             size_t inside, size_t body, const StackDispatch* inner, StackDispatch& d) {
  std::vector<KernelUse> uses;
  for (size_t f = body; f-- > inside;) {
    const auto* entered = frames[f].entry ? index.at(frames[f].entry) : nullptr;
    if (!entered) continue;
    if (uses.empty()) {
      uses = *entered;
      continue;
    }
    std::vector<KernelUse> both = common(uses, *entered);
    if (both.empty()) break;  // the kernel called that function itself, not through the dispatcher
    uses = std::move(both);
  }
  if (uses.empty()) return;
  if (opsOf(uses).size() > 1) {
    // The stack frames from the kernel's out to the dispatch's own (where its callees saved its
    // registers, and where it keeps its locals).
    const uint64_t own = frames[body].stack_frame;
    const uint64_t low = stack[frames[inside].stack_frame].sp;
    const uint64_t high = own + 1 < stack.size() ? stack[own + 1].sp : stack[own].sp + 1024;
    uses = heldOnStack(rt, std::move(uses), low, high);
  }
  const std::vector<uint64_t> ops = opsOf(uses);
  d.ops = static_cast<uint32_t>(ops.size());
  if (ops.size() != 1) return;
  d.rec.op = reinterpret_cast<const void*>(ops.front());
  const KeyTable& kt = rt.keys();
  auto keyBits = [&](int key) {
    const KeyInfo* info = kt.byValue(key);
    return info ? info->bits : 0;
  };
  if (uses.size() > 1 && inner && inner->keyKnown()) {
    // A found key's record holds that key alone (its bits); a per-backend key's backend bit.
    const uint64_t backend = inner->rec.keyset & kt.backendMask();
    std::vector<KernelUse> same;
    for (const KernelUse& u : uses)
      if (backend && (keyBits(u.key) & kt.backendMask()) == backend) same.push_back(u);
    if (same.size() == 1) uses = std::move(same);
  }
  d.keys = static_cast<uint32_t>(uses.size());
  if (uses.size() != 1) return;
  d.rec.kernel = reinterpret_cast<const void*>(uses.front().kernel);
  d.rec.keyset = keyBits(uses.front().key);
  d.rec.slot = static_cast<uint16_t>(std::max(0, kt.slotOf(d.rec.keyset)));  // no slot (the bit-63 sentinel): 0
}

// The dispatches on the walked stack, innermost first. A dispatch is a `dispatch` (or
// `dispatchBoxed`) frame; a call/redispatch frame without one just inside it counts on its own
// (the dispatch body was not described as an inlined call).
std::vector<StackDispatch> findDispatches(const RuntimeView& rt, const Dispatcher& model, const std::vector<Frame>& frames,
                                          const std::vector<StackFrame>& stack) {
  std::vector<StackDispatch> found;
  std::optional<KernelIndex> index;  // built once, when the first dispatch is found
  const size_t n = frames.size();
  size_t inside = 0;  // the first frame past the dispatch found before (inside this one)
  for (size_t i = 0; i < n;) {
    const FrameKind kind = frames[i].kind;
    if (!holdsDispatch(kind)) {
      ++i;
      continue;
    }
    const bool boxed = isBoxed(kind);
    const bool body = kind == FrameKind::Dispatch || kind == FrameKind::Boxed;
    // The entry point just outside the body (call/redispatch or the boxed twins), then op wrappers.
    std::vector<size_t> own{i};
    size_t j = i + 1;
    if (body) {
      while (j < n && (boxed ? frames[j].kind == FrameKind::CallBoxed || frames[j].kind == FrameKind::RedispatchBoxed
                             : frames[j].kind == FrameKind::Call || frames[j].kind == FrameKind::Redispatch))
        own.push_back(j++);
    }
    while (j < n && frames[j].kind == FrameKind::Wrapper) own.push_back(j++);

    StackDispatch d;
    d.frame = frames[i].stack_frame;
    for (size_t f : own)
      if (!d.rec.kind) d.rec.kind = entryKind(frames[f].kind);
    if (!index) index.emplace(model);
    resolve(rt, *index, frames, stack, inside, i, found.empty() ? nullptr : &found.back(), d);
    found.push_back(d);
    inside = i = j;
  }
  return found;
}

}  // namespace

StackChain readStackChain(const RuntimeView& rt, const Dispatcher& d, int64_t tid, uint64_t max_frames) {
  const dscope_target* t = rt.mem().target();
  if (!t || !t->stack_frame) fail("this debugger front end does not provide stack frames: dispatch-trace --frames is not available");
  StackChain chain;
  chain.tid = tid;
  chain.debugger_cap = t->frame_cap;
  std::vector<StackFrame> stack;
  std::vector<Frame> frames;
  bool interrupted = false;  // the frame inside was a signal's: this one stopped at its pc, not in a call
  for (uint64_t level = 0;; ++level) {
    if (level == max_frames) {
      chain.end = StackChain::End::Bound;
      break;
    }
    StackFrame sf;
    if (t->stack_frame(t->ctx, tid, level, &sf.pc, &sf.sp) != 0) {
      const int end = t->frame_walk_end ? t->frame_walk_end(t->ctx, tid, level) : DSCOPE_FRAMES_OUTERMOST;
      if (end == DSCOPE_FRAMES_GONE)
        fail("the process exited during the walk: its stack can no longer be read (" + counted(stack.size(), "frame") +
             " walked)");
      chain.end = end == DSCOPE_FRAMES_UNREADABLE ? StackChain::End::Unreadable
                  : end == DSCOPE_FRAMES_CORRUPT  ? StackChain::End::Corrupt
                  : end == DSCOPE_FRAMES_CAP      ? StackChain::End::DebuggerCap
                                                  : StackChain::End::Outermost;
      break;
    }
    stack.push_back(sf);
    // An outer frame's pc is where its call returns to: the call is the instruction before it.
    const bool returns = level > 0 && !interrupted;
    const FramePc& code = rt.mem().functionsAt(returns ? sf.pc - 1 : sf.pc, returns);
    // What that call called, when it is not the function inside (which it jumped to, a tail call
    // that reused its stack frame): GDB's tail-call frame, listed with the frame inside.
    if (!code.called.empty() && !frames.empty() && frames.back().name != code.called)
      frames.push_back({code.called, frameKindOf(code.called), level - 1, 0});
    for (size_t i = 0; i < code.names.size(); ++i) {
      const bool own = i + 1 == code.names.size();
      frames.push_back({code.names[i], frameKindOf(code.names[i]), level, own ? code.entry : 0});
    }
    if (code.names.empty()) frames.push_back({"", FrameKind::Other, level, 0});
    const std::string_view function = baseName(frames.back().name);
    interrupted = function == "__restore_rt";
    // The walk ends at main, as GDB's backtrace does (LLDB's goes on into libc): nothing below it
    // dispatches, and both debuggers then count the same frames.
    if (function == "main") break;
  }
  chain.frames_walked = stack.size();
  chain.dispatches = findDispatches(rt, d, frames, stack);
  std::reverse(chain.dispatches.begin(), chain.dispatches.end());  // oldest first
  return chain;
}

}  // namespace dscope::inspect
