#include "StackChain.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

namespace dscope::inspect {

namespace {

// What a frame is, by its function's name. The dispatcher's own frames (runtime/include/dscope/
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

FrameKind classify(std::string_view name) {
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

// Frames between a dispatch and its kernel that carry the same ks (KernelFunction::call, the
// unboxed/boxed trampolines, invokeKernel).
bool isKernelPlumbing(std::string_view name) {
  return startsWith(name, "dscope::KernelFunction::") || startsWith(name, "dscope::detail::");
}

struct Frame {
  std::string name;
  FrameKind kind = FrameKind::Other;
};

// The front end's frame callbacks for one thread.
class Stack {
 public:
  Stack(const dscope_target& t, int64_t tid) : t_(t), tid_(tid) {}

  std::optional<std::string> function(uint64_t level) const {
    char name[1024] = "";
    if (t_.frame_function(t_.ctx, tid_, level, name, sizeof name) != 0) return std::nullopt;
    name[sizeof name - 1] = '\0';
    return std::string(name);
  }
  bool inlined(uint64_t level) const { return t_.frame_inlined && t_.frame_inlined(t_.ctx, tid_, level) == 1; }
  std::optional<uint64_t> value(uint64_t level, const char* path) const {
    uint64_t v = 0;
    if (!t_.frame_value || t_.frame_value(t_.ctx, tid_, level, path, &v) != 0) return std::nullopt;
    return v;
  }
  // Why no frame `level` is listed (dscope_frames_end); the outermost frame when the front end
  // cannot tell.
  int walkEnd(uint64_t level) const {
    if (!t_.frame_walk_end) return DSCOPE_FRAMES_OUTERMOST;
    const int end = t_.frame_walk_end(t_.ctx, tid_, level);
    return end >= DSCOPE_FRAMES_OUTERMOST && end <= DSCOPE_FRAMES_GONE ? end : DSCOPE_FRAMES_OUTERMOST;
  }
  std::optional<std::vector<uint64_t>> tensors(uint64_t level) const {
    constexpr uint64_t kMaxTensorArgs = 64;
    std::vector<uint64_t> impls(kMaxTensorArgs);
    uint64_t count = 0;
    if (!t_.frame_tensors || t_.frame_tensors(t_.ctx, tid_, level, impls.data(), impls.size(), &count) != 0 ||
        count > impls.size())
      return std::nullopt;
    impls.resize(count);
    return impls;
  }

 private:
  const dscope_target& t_;
  int64_t tid_;
};

// The table slot of a key set, or 0 for one whose top bit is the bit-63 sentinel (no slot).
uint16_t slotOf(DispatchKeySet ks) {
  if (ks.raw_repr() >> 63) return 0;
  return static_cast<uint16_t>(ks.getDispatchTableIndexForDispatchKeySet());
}

// The key a dispatch went to, for when the optimizer dropped its key set: the kernel that ran
// decides. For a [call], the candidates are the arguments' tensors' keys plus the thread's included
// keys under the operator's fallthrough mask (OperatorEntry.h: getDispatchKeySetUnboxed), and the
// answer is the highest-priority candidate whose table slot holds that kernel (excluded keys are
// not needed: the kernel tells). Otherwise (a redispatch's key set is the caller's to choose, or
// the candidates are unknown), the answer is the one key whose slot holds that kernel, if only
// one does. Nullopt when anything is unreadable or the kernel does not decide.
std::optional<DispatchKey> recoverKey(Session& s, const Stack& stack, uint64_t level, const StackDispatch& d,
                                      DispatchKeySet included) {
  const uint64_t entry = reinterpret_cast<uint64_t>(d.rec.op), kernel = reinterpret_cast<uint64_t>(d.rec.kernel);
  try {
    const Remote& mem = s.mem();
    const RuntimeView& rt = s.runtime();
    const dscope_layout_profile& layout = rt.layout();
    const uint64_t extractor = entry + layout.OperatorEntry_extractor;
    auto impls = d.rec.kind == DSCOPE_RECORD_CALL ? stack.tensors(level) : std::nullopt;
    if (impls && !mem.read<bool>(extractor + layout.DispatchKeyExtractor_requiresBitsetPerBackend,
                                 "operator's key extractor")) {
      const uint64_t mask =
          mem.read<uint64_t>(extractor + layout.DispatchKeyExtractor_nonFallthroughKeys, "operator's key extractor");
      uint64_t keys = included.raw_repr();
      for (uint64_t impl : *impls)
        if (impl) keys |= mem.read<uint64_t>(impl + layout.TensorImpl_key_set, "tensor's key set");
      std::vector<DispatchKey> candidates;
      for (DispatchKey k : DispatchKeySet(DispatchKeySet::RAW, keys & mask)) candidates.push_back(k);
      for (auto k = candidates.rbegin(); k != candidates.rend(); ++k)  // highest priority first
        if (rt.tableEntry(entry, *k).kernel.addr == kernel) return *k;
    }
    std::optional<DispatchKey> only;
    for (const TableEntry& e : rt.validTableEntries(entry)) {
      if (e.kernel.addr != kernel) continue;
      if (only) return std::nullopt;  // several slots hold it: the kernel does not decide
      only = e.key;
    }
    return only;
  } catch (const InspectError&) {
  }
  return std::nullopt;
}

DispatchKeySet includedKeysOf(Session& s, int64_t tid) {
  try {
    for (const auto& b : s.runtime().threadBlocks())
      if (b.records.tid == tid) return s.runtime().threadTls(b).first;
  } catch (const InspectError&) {
  }
  return DispatchKeySet();
}

// The dispatches on the walked stack, innermost first. A dispatch is a `dispatch` (or
// `dispatchBoxed`) frame; a call/redispatch frame without one just inside it counts on its own
// (the dispatch body was not described as an inlined frame).
std::vector<StackDispatch> findDispatches(Session& s, const Stack& stack, const std::vector<Frame>& frames, int64_t tid) {
  std::vector<StackDispatch> found;
  std::optional<DispatchKeySet> included;  // read once, only if a key must be recovered
  const size_t n = frames.size();
  for (size_t i = 0; i < n;) {
    const FrameKind kind = frames[i].kind;
    if (!holdsDispatch(kind)) {
      ++i;
      continue;
    }
    const bool boxed = isBoxed(kind);
    const bool body = kind == FrameKind::Dispatch || kind == FrameKind::Boxed;  // holds kind, ks and k
    // The entry point just outside the body (call/redispatch or the boxed twins), then op wrappers.
    std::vector<size_t> outer;
    size_t j = i + 1;
    if (body) {
      while (j < n && (boxed ? frames[j].kind == FrameKind::CallBoxed || frames[j].kind == FrameKind::RedispatchBoxed
                             : frames[j].kind == FrameKind::Call || frames[j].kind == FrameKind::Redispatch))
        outer.push_back(j++);
    }
    while (j < n && frames[j].kind == FrameKind::Wrapper) outer.push_back(j++);
    std::vector<size_t> own{i};
    own.insert(own.end(), outer.begin(), outer.end());

    StackDispatch d;
    d.frame = i;
    uint8_t record_kind = 0;
    if (body) {
      auto v = stack.value(i, "kind");
      if (v && *v >= DSCOPE_RECORD_CALL && *v <= DSCOPE_RECORD_REDISPATCH_BOXED) record_kind = static_cast<uint8_t>(*v);
    }
    for (size_t f : own)
      if (!record_kind) record_kind = entryKind(frames[f].kind);
    d.rec.kind = record_kind;
    for (size_t f : own) {
      if (frames[f].kind == FrameKind::Wrapper || d.rec.op) continue;
      if (auto entry = stack.value(f, boxed ? "op.entry_" : "this->entry_")) d.rec.op = reinterpret_cast<const void*>(*entry);
    }
    if (body)
      if (auto k = stack.value(i, "k")) d.rec.kernel = reinterpret_cast<const void*>(*k);
    auto keyset = stack.value(i, "ks");
    for (size_t f : outer) {  // ks is computed inside call(): only the other outer frames pass it in
      if (keyset) break;
      if (frames[f].kind != FrameKind::Call && frames[f].kind != FrameKind::CallBoxed) keyset = stack.value(f, "ks");
    }
    for (size_t k = i; !keyset && k-- > 0 && isKernelPlumbing(frames[k].name);) keyset = stack.value(k, "ks");
    if (keyset) {
      d.rec.keyset = *keyset;
      d.keyset_known = true;
    } else if (d.rec.op && d.rec.kernel) {
      if (!included) included = includedKeysOf(s, tid);
      if (auto key = recoverKey(s, stack, i, d, *included)) {
        d.rec.keyset = DispatchKeySet(*key).raw_repr();
        d.keyset_known = d.key_recovered = true;
      }
    }
    if (d.keyset_known) d.rec.slot = slotOf(DispatchKeySet::from_raw_repr(d.rec.keyset));
    found.push_back(d);
    i = j;
  }
  return found;
}

}  // namespace

StackChain readStackChain(Session& s, int64_t tid, uint64_t max_frames) {
  const dscope_target* t = s.mem().target();
  if (!t || !t->frame_function) fail("this debugger front end does not provide stack frames: dispatch-trace --frames is not available");
  StackChain chain;
  chain.tid = tid;
  chain.debugger_cap = t->frame_cap;
  Stack stack(*t, tid);
  std::vector<Frame> frames;
  // Inlined calls are listed before (inside) the stack frame they were inlined into, so a stack
  // frame is complete, with its inlined calls, when a frame that is not inlined is read (GDB's
  // tail-call frames, listed outside the frame that reused their stack, join the next one). A longer
  // run of inlined frames than any real nesting counts as a stack frame: the bound always holds.
  constexpr uint64_t kMaxInlinedRun = 256;
  uint64_t inlined_run = 0;
  bool unwinder_ended = false;  // frame_function found no frame at frames.size()
  for (uint64_t level = 0;; ++level) {
    if (chain.frames_walked == max_frames) {
      chain.end = StackChain::End::Bound;
      break;
    }
    auto name = stack.function(level);
    if (!name) {
      chain.frames_walked += inlined_run > 0;  // inlined calls with no outer frame listed
      // GDB's limit counts inlined calls, LLDB's does not: reaching either count is the cap.
      const bool capped = t->frame_cap && (chain.frames_walked >= t->frame_cap || level >= t->frame_cap);
      chain.end = capped ? StackChain::End::DebuggerCap : StackChain::End::Outermost;
      unwinder_ended = !capped;
      break;
    }
    frames.push_back({*name, classify(*name)});
    if (!stack.inlined(level) || ++inlined_run == kMaxInlinedRun) {
      ++chain.frames_walked;
      inlined_run = 0;
    }
    // The walk ends at main, as GDB's backtrace does (LLDB's goes on into libc): nothing below it
    // dispatches, and both debuggers then count the same frames.
    if (inlined_run == 0 && baseName(*name) == "main") break;
  }
  chain.dispatches = findDispatches(s, stack, frames, tid);
  bool unread = false;  // a dispatch frame's values could not be read: optimized out, or the process died
  for (const auto& d : chain.dispatches) unread = unread || !d.rec.op || !d.keyset_known;
  if (unwinder_ended || unread) {
    // Asked after the values were read: a process that dies during the walk fails them too.
    switch (stack.walkEnd(frames.size())) {
      case DSCOPE_FRAMES_GONE:
        fail("the process exited during the walk: its stack can no longer be read (" + counted(chain.frames_walked, "frame") +
             " walked)");
      case DSCOPE_FRAMES_UNREADABLE:
        if (unwinder_ended) chain.end = StackChain::End::Unreadable;
        break;
      case DSCOPE_FRAMES_CORRUPT:
        if (unwinder_ended) chain.end = StackChain::End::Corrupt;
        break;
      default:
        break;
    }
  }
  std::reverse(chain.dispatches.begin(), chain.dispatches.end());  // oldest first
  return chain;
}

}  // namespace dscope::inspect
