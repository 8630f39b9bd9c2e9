// dispatch-trace on real PyTorch: release builds keep no dispatch records, so the chain is rebuilt
// from the native stack's physical frames (dscope_target's stack_frame: pcs, no DWARF needed).
// Each frame's function entry is matched against the registry: every computed-table entry's
// (sym_)unboxed and boxed function maps to its operator and key (a trampoline several kernels share
// says "one of N"); an exported at::_ops::<op>::call / ::redispatch names an aten operator; the
// rest is the user's code. The loop is found among the innermost frames only (an overflow core
// has ~80 000 physical frames, and GDB's `bt -30` costs seconds and a gigabyte there); --full
// walks every frame.
#include <algorithm>
#include <cstring>
#include <tuple>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>
#include <string>
#include <vector>

#include "stack/TorchTrace.h"

#include "model/BreakSupport.h"
#include "source/c10/TorchThrow.h"
#include "stack/KernelIndex.h"
#include "target/ThreadLocal.h"
#include "text/Json.h"

namespace dscope::inspect {

namespace {

constexpr uint64_t kInnermostFrames = 400;  // the default window: 200 repetitions of a 2-frame loop, 20 ms
constexpr int64_t kMaxThreads = 4096;         // dispatch-summary: a process with more is read no further
constexpr uint64_t kMaxPeriod = 64;          // a longer cycle of physical frames is no re-dispatch loop
constexpr uint64_t kMaxLoopStart = 160;      // frames above the loop (where the stack ran out: a kernel may be deep in BLAS)

// One kernel of a loop's cycle: its operator, the key it was registered at (a runtime key, or the
// alias key of a kernel that fills several slots, as PyTorch's custom-op tutorial registers one at
// Autograd) and the kernel.
struct CycleKernel {
  const Operator* op;
  int key;
  Kernel kernel;
};

// "at::_ops::add_Tensor::call(...)" -> {"add_Tensor", "call"}; empty when not such a frame.
std::pair<std::string, std::string> atenOpsFrame(const std::string& name) {
  const std::string prefix = "at::_ops::";
  if (name.rfind(prefix, 0) != 0) return {};
  const size_t sep = name.find("::", prefix.size());
  if (sep == std::string::npos) return {};
  const std::string member = name.substr(sep + 2, name.find('(', sep) - sep - 2);
  if (member != "call" && member != "redispatch") return {};
  return {name.substr(prefix.size(), sep - prefix.size()), member};
}

// The at::_ops struct of an aten operator: "aten::add.Tensor" -> "add_Tensor"; "" for another
// namespace's.
std::string atenStructName(const std::string& op) {
  if (op.rfind("aten::", 0) != 0) return "";
  std::string name = op.substr(6);
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

struct TraceFrame {
  uint64_t level = 0, pc = 0, sp = 0, entry = 0;
  std::string name;                // the function, as the symbolizer names it ("" when it cannot)
  // The computed-table entries whose function it is, or (a kernel registered as a plain function
  // pointer, called by the trampoline every kernel of its C++ signature shares) whose runtime
  // functor holds it.
  std::vector<KernelUse> kernels;
  bool wrapped = false;  // its kernels are a runtime functor's: the trampoline that called it is the same dispatch
  std::string aten_op, aten_kind;  // an at::_ops frame: the operator's C++ struct name, call/redispatch
  // An evaluation loop of the interpreter (kEvalFunction): the Python frames it runs, innermost first.
  std::vector<PythonFrame> python;
};

struct Loop {
  uint64_t start = 0, period = 0, repeats = 0;
};

// What a frame is, for finding the loop: its function's entry, or (a function with no symbol, such
// as libtorch's internal code) the return address, which a recursion repeats exactly.
uint64_t identity(const TraceFrame& f) { return f.entry ? f.entry : f.pc; }

// The shortest period that repeats from some frame near the top to the end of the window.
Loop findLoop(const std::vector<TraceFrame>& frames) {
  const uint64_t n = frames.size();
  for (uint64_t start = 0; start < std::min<uint64_t>(kMaxLoopStart, n); ++start)
    for (uint64_t p = 1; p <= kMaxPeriod && start + 2 * p <= n; ++p) {
      bool repeats = true;
      for (uint64_t i = start; repeats && i + p < n; ++i) repeats = identity(frames[i]) == identity(frames[i + p]);
      if (repeats) return {start, p, (n - start) / p};
    }
  return {};
}

// One thread's stack as the trace reads it: the frames and the loop they make.
struct TorchStack {
  int64_t tid = 0;
  std::vector<TraceFrame> frames;  // innermost first
  bool outermost = false;          // the walk reached the thread's outermost frame
  Loop loop;
  // The kernels the loop re-enters: the frames of the cycle that are one operator's kernel at one
  // key, outermost first (each calls the next through the dispatcher, the last calls the first),
  // starting at the smallest operator name: where the stack overflowed decides which kernel is
  // innermost, and two crashes of the same loop are told the same way.
  std::vector<CycleKernel> cycle;
  // Every frame of the cycle is c10::Dispatcher::callBoxed: a boxed kernel that calls
  // op.callBoxed(stack) again, tail-called away (at -O2 its frame is gone). Its cycle is the one
  // kernel read from the stack, if any (callBoxedKernel).
  bool boxed_reentry = false;
  // The at::_ops call the cycle re-enters its first kernel's operator through ("" when none is
  // seen): of a one-kernel cycle, any at::_ops frame of it; of a longer one, that operator's.
  std::string aten;
};

// Each evaluation loop's frame on the stack with the Python frames it runs (pythonSegments: the
// loops' native frames and the segments, both innermost first, pair up in order). A segment whose
// loop keeps a local on the stack (3.12+) goes to the frame that holds it, [its sp, the sp of the
// frame outside it): that needs no symbol (3.14's loop runs in code no symbol covers).
void attachPython(const PythonView* py, TorchStack& stack) {
  if (!py) return;
  const PythonThread* thread = py->thread(stack.tid);
  if (!thread) return;
  auto& frames = stack.frames;
  size_t next = 0;  // native frames before this one hold inner segments
  for (auto& segment : pythonSegments(*thread)) {
    const uint64_t local = segment.back().loop_local;
    size_t i = next;
    if (local)
      while (i < frames.size() && !(frames[i].sp <= local && (i + 1 == frames.size() || local < frames[i + 1].sp))) ++i;
    else
      while (i < frames.size() && frames[i].name != kEvalFunction) ++i;
    if (i == frames.size()) return;  // outside the frames walked
    frames[i].python = std::move(segment);
    next = i + 1;
  }
}

// A frame's line and, for an evaluation loop, the Python frames it runs, each on a line of its own.
std::string frameLines(const std::string& indent, const TraceFrame& f, const std::string& described) {
  std::string out = indent + "#" + std::to_string(f.level) + " " + described + "\n";
  for (const PythonFrame& p : f.python)
    out += indent + "    " + p.text() + "\n";
  return out;
}

// The innermost `window` physical frames of thread tid, each with its function.
TorchStack readFrames(const Remote& mem, int64_t tid, uint64_t window) {
  const dscope_target* t = mem.target();
  TorchStack stack;
  stack.tid = tid;
  for (uint64_t level = 0; level < window; ++level) {
    uint64_t pc = 0, sp = 0;
    if (t->stack_frame(t->ctx, tid, level, &pc, &sp) != 0) {
      stack.outermost = true;
      break;
    }
    TraceFrame f;
    f.level = level;
    f.pc = pc;
    f.sp = sp;
    const FramePc& code = mem.functionsAt(level ? pc - 1 : pc, level > 0);
    f.entry = code.entry;
    f.name = code.names.empty() ? "" : code.names.back();
    stack.frames.push_back(std::move(f));
  }
  return stack;
}

// A kernel's name (TorchView::kernelName), with a boxed function registered by
// makeFromBoxedFunction<&f>() told by f: "c10::BoxedKernel::make_boxed_function<&(f(...))>(...)"
// -> "f(...)" (an ELF symbol's name starts with the template's return type, "void ").
std::string kernelFunction(const TorchView& tv, const Kernel& k) {
  const std::string name = tv.kernelName(k), marker = "c10::BoxedKernel::make_boxed_function<&(";
  const size_t start = name.find(marker);
  if (start == std::string::npos || (start && name.compare(0, start, "void ") != 0)) return name;
  int depth = 1;
  for (size_t i = start + marker.size(); i < name.size(); ++i) {
    depth += name[i] == '(' ? 1 : name[i] == ')' ? -1 : 0;
    if (depth == 0) return name.substr(start + marker.size(), i - start - marker.size());
  }
  return name;
}

// A kernel as the trace names it: its function and where it was registered.
std::string kernelText(const TorchView& tv, const Kernel& k) { return kernelFunction(tv, k) + ", " + k.debug; }

// The one kernel a frame is, of one operator: at one key, or registered at one alias key whose
// kernel fills every slot the frame's function is in; nullopt when the frame's function is
// several operators' (a shared trampoline) or several kernels'.
std::optional<CycleKernel> oneKernel(const TorchView& tv, const std::vector<KernelUse>& uses) {
  std::set<const Operator*> ops;
  std::set<int> keys;
  for (const auto& u : uses) ops.insert(u.op), keys.insert(u.key);
  if (ops.size() != 1) return std::nullopt;
  std::optional<CycleKernel> out;
  for (const TableEntry& e : tv.computedTable(**ops.begin())) {
    if (!keys.count(e.key)) continue;
    const int key = keys.size() == 1 ? e.key : e.registered_key;
    const KeyInfo* info = tv.keys().byValue(key);
    if (!info || (keys.size() > 1 && !info->alias)) return std::nullopt;
    if (out && (out->key != key || !sameKernel(out->kernel, e.kernel))) return std::nullopt;
    out = CycleKernel{*ops.begin(), key, e.kernel};
  }
  return out;
}

constexpr uint64_t kMaxFrameBytes = 4096;  // of one frame's stack searched for the table slot it called

// The kernel a c10::Dispatcher::callBoxed frame called, read from the stack: the words of the
// frames it called (where a callee saves the registers it uses, the caller's among them) that
// point at one dispatch-table slot of one operator (a KernelFunction, what lookup() returned);
// nullopt unless the loop's frames point at exactly one such slot.
std::optional<CycleKernel> callBoxedKernel(const TorchView& tv, const TorchStack& stack) {
  const C10Layout& l = tv.layout();
  const uint64_t offset = l.OperatorEntry_dispatchTable, size = l.sizeof_KernelFunction;
  const uint64_t table = size * l.count_table_slots;
  std::map<uint64_t, const Operator*> tables;  // by the table's address
  for (const auto& op : tv.operators()) tables[op.entry + offset] = &op;
  std::map<int, int> key_of_slot;
  for (int k : tv.keys().runtimeKeys())
    if (const KeyInfo* info = tv.keys().byValue(k); info && info->slot >= 0) key_of_slot.emplace(info->slot, k);
  std::set<std::pair<const Operator*, int>> found;
  const uint64_t end = std::min<uint64_t>(stack.loop.start + 2 * stack.loop.period + 1, stack.frames.size() - 1);
  for (uint64_t i = stack.loop.start; i < end; ++i) {
    const uint64_t from = stack.frames[i].sp, to = stack.frames[i + 1].sp;
    if (to <= from || to - from > kMaxFrameBytes) continue;
    std::vector<uint64_t> words((to - from) / 8);
    try {
      tv.mem().read(from, words.data(), words.size() * 8, "a stack frame");
    } catch (const InspectError&) {
      continue;  // the innermost frame of an overflow may lie below the stack's end
    }
    for (uint64_t w : words) {
      auto it = tables.upper_bound(w);
      if (it == tables.begin()) continue;
      --it;
      const uint64_t at = w - it->first;
      if (at >= table || at % size) continue;
      if (auto key = key_of_slot.find(static_cast<int>(at / size)); key != key_of_slot.end()) found.insert({it->second, key->second});
    }
  }
  if (found.size() != 1) return std::nullopt;
  const auto [op, key] = *found.begin();
  const TableEntry e = tv.computedEntry(*op, key);
  if (!e.present()) return std::nullopt;
  return CycleKernel{op, key, e.kernel};
}

// A frame that many Python kernels share (their holder's operator(), which every boxed trampoline
// jumps to) is the one whose Python function the evaluation loop it called runs first: the
// outermost Python frame of the nearest loop inside it. A frame whose loop runs none of its kernels'
// functions keeps them all.
void pickPythonKernels(const TorchView& tv, const PythonView* py, TorchStack& stack) {
  if (!py) return;
  std::map<uint64_t, uint64_t> code_of;  // functor -> its Python function's code (0: no Python kernel)
  auto codeOf = [&](uint64_t functor) {
    auto [it, added] = code_of.try_emplace(functor, 0);
    if (added) try {
        if (auto object = tv.pythonKernelObject(functor))
          if (auto fn = py->function(*object)) it->second = fn->code;
      } catch (const InspectError&) {
        // an unreadable holder or function: not told apart
      }
    return it->second;
  };
  for (size_t i = 0; i < stack.frames.size(); ++i) {
    TraceFrame& f = stack.frames[i];
    if (f.kernels.size() < 2) continue;
    const TraceFrame* loop = nullptr;
    for (size_t j = i; j-- > 0 && !loop;)
      if (!stack.frames[j].python.empty()) loop = &stack.frames[j];
    if (!loop) continue;
    std::vector<KernelUse> picked;
    for (const KernelUse& u : f.kernels)
      if (const uint64_t code = codeOf(u.functor); code && code == loop->python.back().code) picked.push_back(u);
    if (!picked.empty()) f.kernels = std::move(picked);
  }
}

// Names the stacks' frames from the registry (one pass over the tables for all of them) and finds
// each one's loop.
void nameFrames(const TorchView& tv, const Dispatcher& d, const PythonView* py, std::vector<TorchStack>& stacks) {
  std::unordered_set<uint64_t> functions;
  for (const auto& stack : stacks)
    for (const auto& f : stack.frames)
      if (f.entry) functions.insert(f.entry);
  const KernelIndex index(d, &functions, &tv.mem());
  const auto& entries = index.byFunction();
  // The functions the entries' runtime functors hold, where a frame is one.
  std::map<uint64_t, std::vector<KernelUse>> wrapped;
  std::map<uint64_t, uint64_t> held;  // by functor
  for (const auto& [function, uses] : entries)
    for (const KernelUse& u : uses) {
      if (!u.functor) continue;
      auto it = held.find(u.functor);
      if (it == held.end()) it = held.emplace(u.functor, tv.runtimeFunction(u.functor)).first;
      if (it->second && functions.count(it->second)) wrapped[it->second].push_back(u);
    }
  for (auto& stack : stacks) {
    for (auto& f : stack.frames) {
      if (auto it = entries.find(f.entry); f.entry && it != entries.end()) f.kernels = it->second;
      else if (auto at = wrapped.find(f.entry); f.entry && at != wrapped.end()) f.kernels = at->second, f.wrapped = true;
      std::tie(f.aten_op, f.aten_kind) = atenOpsFrame(f.name);
    }
    pickPythonKernels(tv, py, stack);
    stack.loop = findLoop(stack.frames);
    const Loop& loop = stack.loop;
    if (!loop.period) continue;
    for (uint64_t i = loop.start + loop.period; i-- > loop.start;)
      if (auto kernel = oneKernel(tv, stack.frames[i].kernels)) stack.cycle.push_back(*kernel);
    stack.boxed_reentry = stack.cycle.empty();
    for (uint64_t i = loop.start; i < loop.start + loop.period; ++i)
      stack.boxed_reentry = stack.boxed_reentry && stack.frames[i].name.rfind("c10::Dispatcher::callBoxed(", 0) == 0;
    if (stack.boxed_reentry)
      if (auto kernel = callBoxedKernel(tv, stack)) stack.cycle.push_back(*kernel);
    std::rotate(stack.cycle.begin(),
                std::min_element(stack.cycle.begin(), stack.cycle.end(),
                                 [](const CycleKernel& a, const CycleKernel& b) {
                                   return std::tie(a.op->name, a.key) < std::tie(b.op->name, b.key);
                                 }),
                stack.cycle.end());
    for (uint64_t i = loop.start; i < loop.start + loop.period && stack.aten.empty(); ++i)
      if (stack.cycle.size() <= 1 || atenStructName(stack.cycle.front().op->name) == stack.frames[i].aten_op)
        stack.aten = stack.frames[i].aten_op;
  }
}

// A kernel frame's operator and key ("<one of N ...>" where kernels share the function: `ops` and
// `keys` say how many), and the one kernel at those keys when there is one ("" when several).
struct FrameKernel {
  std::string op, key, kernel;
  size_t ops = 1, keys = 1;
  std::string line() const { return "[kernel] op=[" + op + "], key=[" + key + "]"; }
};
FrameKernel kernelOfFrame(const TorchView& tv, const TraceFrame& f) {
  if (auto one = oneKernel(tv, f.kernels))
    return {one->op->name, tv.keys().name(one->key), kernelText(tv, one->kernel)};
  std::set<const Operator*> ops;
  std::set<int> keys;
  for (const auto& u : f.kernels) ops.insert(u.op), keys.insert(u.key);
  FrameKernel out{ops.size() == 1 ? (*ops.begin())->name : "<one of " + std::to_string(ops.size()) + " operators>",
                  keys.size() == 1 ? tv.keys().name(*keys.begin()) : "<one of " + std::to_string(keys.size()) + " keys>", "",
                  ops.size(), keys.size()};
  // One kernel at every key (an alias kernel fills many slots): named; several: not.
  if (ops.size() == 1) {
    std::set<std::string> kernels;
    for (const TableEntry& e : tv.computedTable(**ops.begin()))
      if (keys.count(e.key)) kernels.insert(kernelText(tv, e.kernel));
    if (kernels.size() == 1) out.kernel = *kernels.begin();
  }
  return out;
}

// What a frame is, as the trace says it (the text's line and the JSON's object): a kernel of the
// registry, an at::_ops entry point, or the user's code.
struct FrameAnswer {
  std::string kind;     // "kernel", "call" or "redispatch" (an at::_ops frame), or "code"
  std::string where;    // the function, or the pc where no symbol covers it
  FrameKernel kernel;   // of a kernel frame
  std::string aten_op;  // of an at::_ops frame: the operator's C++ struct name
  std::string text() const {
    if (kind == "kernel") return kernel.kernel.empty() ? kernel.line() : kernel.line() + " " + kernel.kernel;
    if (kind == "code") return "[code] " + where;
    return "[" + kind + "] at::_ops::" + aten_op + " (" + where + ")";
  }
};

// What the registry says a frame is, else its function. Where the thread is still at the last
// dispatch-break stop (stop_tid, and the same pc and stack pointer, as --why asks), frame 0 is the
// operator and key the stop read from the registers.
FrameAnswer answer(const TorchView& tv, const TraceFrame& f, int64_t stop_tid = 0) {
  FrameAnswer a{"code", f.name.empty() ? hex(f.pc) : f.name, {}, ""};
  const auto& stop = lastBreakStop();
  if (stop_tid && f.level == 0 && stop && stop->tid == stop_tid && stop->pc == f.pc && stop->sp == f.sp) {
    a.kind = "kernel";
    a.kernel = {stop->op, stop->key, stop->kernel + (stop->registered.empty() ? "" : ", " + stop->registered)};
  } else if (!f.kernels.empty()) {
    a.kind = "kernel";
    a.kernel = kernelOfFrame(tv, f);
  } else if (!f.aten_op.empty()) {
    a.kind = f.aten_kind;
    a.aten_op = f.aten_op;
  }
  return a;
}

// Every thread of the process (the selected one when the front end numbers none), each walked as readFrames.
std::vector<TorchStack> readThreads(const Remote& mem, uint64_t window, const PythonView* py) {
  std::vector<TorchStack> stacks;
  for (const int64_t tid : mem.everyThread(kMaxThreads)) stacks.push_back(readFrames(mem, tid, window));
  if (stacks.empty()) fail(kNoProcess);
  for (TorchStack& stack : stacks) attachPython(py, stack);
  return stacks;
}

void requireStackFrames(const Remote& mem) {
  const dscope_target* t = mem.target();
  if (!t || !t->stack_frame) fail("this debugger front end does not provide stack frames: dispatch-trace is not available");
}

}  // namespace

ProcessDispatchState torchDispatchState(const TorchView& tv, const Dispatcher& d, const PythonView* py) {
  const Remote& mem = tv.mem();
  requireStackFrames(mem);
  ProcessDispatchState process{"pytorch", "stack", mem.selectedTid(), {}};
  std::vector<TorchStack> stacks = readThreads(mem, kInnermostFrames, py);
  nameFrames(tv, d, py, stacks);
  const KeyTable& kt = tv.keys();
  auto names = [&](uint64_t raw) { return kt.keyNames(raw); };
  for (const TorchStack& stack : stacks) {
    ThreadDispatchState st;
    st.tid = stack.tid;
    st.shown_tid = mem.threadIds().shown(stack.tid);
    st.frames_walked = stack.frames.size();
    st.stack_whole = stack.outermost;
    for (size_t i = 0; i < stack.frames.size(); ++i) {
      const TraceFrame& f = stack.frames[i];
      if (f.kernels.empty() || (i && stack.frames[i - 1].wrapped)) continue;  // one dispatch, two frames
      if (!st.depth++) {
        const FrameKernel k = kernelOfFrame(tv, f);
        st.innermost = k.line();
        st.innermost_op = k.op;
        st.innermost_key = k.key;
      }
    }
    // An uncaught throw: std::terminate never unwound it, so the frames up to the thrower are
    // still there, and with them the thrown object and every guard those frames hold.
    const auto thrower = std::find_if(stack.frames.begin(), stack.frames.end(), [](const TraceFrame& f) { return f.name == "__cxa_throw"; });
    if (thrower != stack.frames.end()) {
      st.throw_in_progress = true;
      const uint64_t high = thrower + 1 != stack.frames.end() ? (thrower + 1)->sp : thrower->sp;
      if (auto failed = couldNotRunThrown(tv, stack.frames.front().sp, high)) {
        st.innermost = "[lookup] op=[" + failed->op + "], key=[" + failed->key + "]";
        st.innermost_op = failed->op;
        st.innermost_key = failed->key;
        st.innermost_unregistered = true;
      }
    }
    if (stack.loop.period) {
      DispatchLoop loop{stack.loop.period, stack.loop.repeats, !stack.outermost, "", "", ""};
      if (!stack.cycle.empty()) {
        const CycleKernel& u = stack.cycle.front();
        loop.op = u.op->name;
        loop.key = kt.name(u.key);
        loop.kernel = shortFunctionName(kernelFunction(tv, u.kernel));
      }
      st.loop = loop;
    }
    try {
      const auto [included, excluded] = tv.threadTls(stack.tid);
      st.tls_included = names(included);
      st.tls_excluded = names(excluded);
      st.tls_change = tlsChange({included, excluded},
                                {tv.layout().set_default_included, tv.layout().set_default_excluded}, names);
    } catch (const InspectError& e) {
      st.error = e.what();
    }
    process.threads.push_back(std::move(st));
  }
  return process;
}

namespace {

// What a thread's loop is and how to end it ("" for both where there is no loop; "" for the fix
// where the cycle names no kernel).
struct Diagnosis {
  std::string diagnosis, fix;
};
Diagnosis diagnose(const TorchView& tv, const TorchStack& stack, uint64_t excluded) {
  if (!stack.loop.period) return {};
  const KeyTable& kt = tv.keys();
  const std::vector<CycleKernel>& cycle = stack.cycle;
  const std::string& aten = stack.aten;
  const std::string reentry =
      "c10::Dispatcher::callBoxed re-enters itself: a boxed kernel calls op.callBoxed(stack) again for the operator it "
      "was called for, and the compiler tail-called the kernel away (no frame of it is left)";
  if (cycle.empty() && stack.boxed_reentry)
    return {reentry + "; which operator is not left on the stack either",
            "in that kernel, call a different operator, or continue below the key it was called at: "
            "op.redispatchBoxed(ks & c10::after_autograd_keyset, stack) with the kernel's DispatchKeySet argument at an "
            "autograd key"};
  if (cycle.empty())
    return {"the stack repeats, but no frame of the cycle is the kernel of one operator at one key" +
                std::string(aten.empty() ? "" : " (it goes through at::_ops::" + aten + ")"),
            ""};
  auto described = [&](const CycleKernel& u) { return u.op->name + "'s " + kt.name(u.key) + " kernel (" + kernelText(tv, u.kernel) + ")"; };
  const KeyInfo* key_info = kt.byValue(cycle.front().key);
  // An alias key is not what the call selects, but one of the runtime keys it covers.
  const std::string key = (key_info->alias ? "one of the keys " : "") + key_info->name + (key_info->alias ? " covers" : "");
  std::string calls = described(cycle.front());
  for (size_t i = 1; i < cycle.size(); ++i) calls += " calls " + cycle[i].op->name + ", whose " + described(cycle[i]).substr(cycle[i].op->name.size() + 3);
  calls += " calls " + cycle.front().op->name + " again through the dispatcher" + (aten.empty() ? "" : " (at::_ops::" + aten + ")");
  const KeyInfo* autograd = kt.byName("AutogradFunctionality");
  const bool autograd_excluded = autograd && (excluded & autograd->bits) == autograd->bits;
  const KeyInfo* autograd_alias = kt.byName("Autograd");
  const bool is_autograd_key = (autograd && (key_info->bits & autograd->bits)) || key_info == autograd_alias;
  if (stack.boxed_reentry) calls = reentry + ": " + described(cycle.front()) + " calls " + cycle.front().op->name + " again";
  Diagnosis out;
  out.diagnosis = calls + ": each call recomputes the key set from the arguments and the thread's sets, which still select " +
                  key + ", so the " + (cycle.size() == 1 ? "kernel re-enters itself" : "kernels re-enter each other") +
                  " until the stack overflows" + (is_autograd_key && !autograd_excluded ? " (autograd is not excluded on this thread)" : "");
  const std::string which = cycle.size() == 1 ? "that kernel" : "those kernels";
  out.fix = is_autograd_key
                ? "in " + which + ", continue below autograd: op." + (stack.boxed_reentry ? "redispatchBoxed" : "redispatch") +
                      "(ks & after_autograd_keyset, ...) with the kernel's DispatchKeySet argument, or make the call under an "
                      "AutoDispatchBelowADInplaceOrView guard"
                : std::string(cycle.size() == 1 ? "that kernel must not call the operator it implements again"
                                                : "break the cycle: one of those kernels must call neither operator again") +
                      ": compute the result there, or call a different operator or an at::native function directly";
  return out;
}

// One thread's trace: its TLS, the loop folded (or every frame walked), the diagnosis and the fix.
std::string stackText(const TorchView& tv, const TorchStack& stack) {
  const int64_t tid = stack.tid;
  const auto& frames = stack.frames;
  const Loop& loop = stack.loop;
  const bool outermost = stack.outermost;
  const auto [included, excluded] = tv.threadTls(tid);
  const KeyTable& kt = tv.keys();

  std::string out = "dispatch chain rebuilt from the native stack (PyTorch keeps no dispatch records): " +
                    counted(frames.size(), "frame") + (outermost ? " (the whole stack)" : " walked, the innermost") + "\n";
  out += "thread tid " + std::to_string(tid) + ":\n";
  out += "  TLS: included " + kt.keySetString(included) + ", excluded " + kt.keySetString(excluded) + "\n";
  if (!loop.period) {
    for (const auto& f : frames) out += frameLines("  ", f, answer(tv, f, tid).text());
    return out + "  no loop among these frames\n";
  }
  const std::string at_least = outermost ? "" : "at least ";
  out += "  loop: a cycle of " + counted(loop.period, "stack frame") + ", " + at_least + groupThousands(loop.repeats) +
         " repetitions in the " + (outermost ? "" : "innermost ") + counted(frames.size() - loop.start, "frame") +
         (outermost ? "" : " (dispatch-trace --full walks them all)") + ":\n";
  for (uint64_t i = loop.start; i < loop.start + loop.period; ++i) out += frameLines("    ", frames[i], answer(tv, frames[i]).text());
  if (loop.start) out += "  innermost, above the loop (where it stopped):\n";
  for (uint64_t i = 0; i < loop.start; ++i) out += frameLines("    ", frames[i], answer(tv, frames[i]).text());
  const Diagnosis d = diagnose(tv, stack, excluded);
  out += "  diagnosis: " + d.diagnosis + "\n";
  if (!d.fix.empty()) out += "  fix: " + d.fix + "\n";
  return out;
}

void frameJson(Json& j, const TraceFrame& f, const FrameAnswer& a) {
  j.beginObject().field("stack_frame", f.level).field("pc", hex(f.pc)).text("function", f.name).field("kind", a.kind);
  if (a.kind == "kernel") {
    const FrameKernel& k = a.kernel;
    j.key("op");
    if (k.ops == 1) j.value(k.op);
    else j.null();
    j.key("key");
    if (k.keys == 1) j.value(k.key);
    else j.null();
    if (k.ops != 1 || k.keys != 1) j.field("candidate_ops", static_cast<uint64_t>(k.ops)).field("candidate_keys", static_cast<uint64_t>(k.keys));
    j.text("kernel", k.kernel);
  } else if (a.kind != "code") {
    j.field("at_ops", a.aten_op);
  }
  j.key("python").beginArray();
  for (const PythonFrame& p : f.python) pythonFrameJson(j, p);
  j.endArray().endObject();
}

// stackText's answer as one object: the loop folded the same way (`cycle`, one repetition, and
// `top`, the frames above it), or every frame walked (`frames`) where there is none.
void stackJson(Json& j, const TorchView& tv, const TorchStack& stack) {
  const auto& frames = stack.frames;
  const Loop& loop = stack.loop;
  const auto [included, excluded] = tv.threadTls(stack.tid);
  const KeyTable& kt = tv.keys();
  j.beginObject().field("source", "stack").field("tid", stack.tid).field("shown_tid", tv.mem().threadIds().shown(stack.tid));
  j.field("frames_walked", static_cast<uint64_t>(frames.size())).field("whole_stack", stack.outermost);
  j.key("tls").beginObject().field("included", kt.keySetString(included)).field("excluded", kt.keySetString(excluded)).endObject();
  auto list = [&](const char* name, uint64_t from, uint64_t to, bool at_stop) {
    j.key(name).beginArray();
    for (uint64_t i = from; i < to; ++i) frameJson(j, frames[i], answer(tv, frames[i], at_stop ? stack.tid : 0));
    j.endArray();
  };
  j.key("cycle");
  if (!loop.period) {
    j.null();
    list("frames", 0, frames.size(), true);
  } else {
    j.beginObject().field("period", loop.period).field("repeats", loop.repeats).field("repeats_at_least", !stack.outermost);
    j.field("start_frame", loop.start);
    list("frames", loop.start, loop.start + loop.period, false);
    j.key("kernels").beginArray();
    for (const CycleKernel& u : stack.cycle)
      j.beginObject().field("op", u.op->name).field("key", kt.name(u.key)).field("kernel", kernelText(tv, u.kernel)).endObject();
    j.endArray().endObject();
    list("top", 0, loop.start, false);
  }
  const Diagnosis d = diagnose(tv, stack, excluded);
  j.text("diagnosis", d.diagnosis).text("fix", d.fix).endObject();
}

}  // namespace

std::string torchDispatchTrace(const TorchView& tv, const Dispatcher& d, const PythonView* py, const TraceRequest& request) {
  const Remote& mem = tv.mem();
  requireStackFrames(mem);
  uint64_t window = request.max_frames.value_or(kInnermostFrames);
  if (request.full) window = UINT64_MAX;
  std::vector<TorchStack> stacks;
  if (request.all) {
    stacks = readThreads(mem, window, py);
  } else {
    const int64_t tid = mem.askedThread(request.thread);
    if (tid <= 0) fail(kNoProcess);
    stacks.push_back(readFrames(mem, tid, window));
    attachPython(py, stacks.front());
    if (stacks.front().frames.empty()) fail("thread tid " + std::to_string(tid) + " has no stack frames");
  }
  nameFrames(tv, d, py, stacks);
  if (request.json) {
    Json j;
    j.beginObject().key("threads").beginArray();
    for (const TorchStack& stack : stacks) stackJson(j, tv, stack);
    return j.endArray().endObject().str();
  }
  std::string out;
  for (const TorchStack& stack : stacks)
    out += (out.empty() ? "" : "\n") + (stack.frames.empty() ? "thread tid " + std::to_string(stack.tid) + ": no stack frames\n"
                                                             : stackText(tv, stack));
  return out;
}

}  // namespace dscope::inspect
